//! The capabilities a host provides to tool bodies.

use std::fmt;
use std::sync::Arc;

use tack_replicated::Replicated;

use super::{ClientChannel, FileSystem, Shell, ToolDispatcher};
use crate::approval::ApprovalService;
use crate::hook::Disposer;

/// The capabilities one execution runs with: each present or not.
///
/// ```
/// use tack_core::host::Capabilities;
/// let caps = Capabilities::default();
/// assert!(caps.fs.is_none() && caps.shell.is_none());
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct Capabilities {
    /// Confined file access.
    pub fs: Option<Arc<dyn FileSystem>>,
    /// Confined command execution.
    pub shell: Option<Arc<dyn Shell>>,
    /// Asking a person.
    pub approval: Option<Arc<dyn ApprovalService>>,
    /// Running nested tool calls.
    pub dispatcher: Option<Arc<dyn ToolDispatcher>>,
    /// The client the host serves calls to (progress, log messages,
    /// questions): see [`ClientChannel`].
    pub client: Option<Arc<dyn ClientChannel>>,
}

impl Capabilities {
    /// Sets the filesystem.
    pub fn with_fs(mut self, fs: Arc<dyn FileSystem>) -> Self {
        self.fs = Some(fs);
        self
    }

    /// Sets the shell.
    pub fn with_shell(mut self, shell: Arc<dyn Shell>) -> Self {
        self.shell = Some(shell);
        self
    }

    /// Sets the approval service.
    pub fn with_approval(mut self, approval: Arc<dyn ApprovalService>) -> Self {
        self.approval = Some(approval);
        self
    }

    /// Sets the nested dispatcher.
    pub fn with_dispatcher(mut self, dispatcher: Arc<dyn ToolDispatcher>) -> Self {
        self.dispatcher = Some(dispatcher);
        self
    }

    /// Sets the client channel.
    pub fn with_client(mut self, client: Arc<dyn ClientChannel>) -> Self {
        self.client = Some(client);
        self
    }
}

impl fmt::Debug for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capabilities")
            .field("fs", &self.fs.is_some())
            .field("shell", &self.shell.is_some())
            .field("approval", &self.approval.is_some())
            .field("dispatcher", &self.dispatcher.is_some())
            .field("client", &self.client.is_some())
            .finish()
    }
}

/// A capability kind: which slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum CapabilityKind {
    /// [`FileSystem`].
    Fs,
    /// [`Shell`].
    Shell,
    /// [`ApprovalService`].
    Approval,
    /// [`ToolDispatcher`].
    Dispatcher,
    /// [`ClientChannel`].
    Client,
}

impl CapabilityKind {
    /// The name error messages use.
    pub(crate) fn name(self) -> &'static str {
        match self {
            CapabilityKind::Fs => "fs",
            CapabilityKind::Shell => "shell",
            CapabilityKind::Approval => "approval",
            CapabilityKind::Dispatcher => "dispatcher",
            CapabilityKind::Client => "client",
        }
    }
}

/// The host's mutable set of capability providers. Plugins fill slots (the
/// sandbox provides `fs` and `shell`); the pipeline takes a
/// [`snapshot`](Self::snapshot) for each execution.
///
/// ```
/// use tack_core::host::CapabilitySlots;
/// let slots = CapabilitySlots::new();
/// assert!(slots.snapshot().fs.is_none());
/// ```
#[derive(Clone, Default)]
pub struct CapabilitySlots {
    current: Arc<Slots>,
}

/// The published capabilities and each thread's copy of them.
///
/// Every execution takes a snapshot; reading it through a lock and cloning
/// one shared `Arc` would write the lock's reader count and the `Arc`'s
/// reference count, cache lines every thread's executions share. Instead
/// each thread hands out clones of its own copy, whose count only it
/// writes (see [`Replicated`]).
#[derive(Default)]
struct Slots {
    capabilities: Replicated<Capabilities>,
}

impl fmt::Debug for CapabilitySlots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CapabilitySlots")
            .field(&*self.snapshot())
            .finish()
    }
}

impl CapabilitySlots {
    /// Empty slots.
    pub fn new() -> Self {
        Self::default()
    }

    /// The capabilities as they are now (an immutable value; providers
    /// changed later do not change it).
    pub fn snapshot(&self) -> Arc<Capabilities> {
        self.current.capabilities.with_copy(
            // This thread's own copy (the providers are shared, the count
            // of the copy is not).
            |published| Arc::new(Capabilities::clone(published)),
            |mine| mine.clone(),
        )
    }

    fn set(&self, edit: impl FnOnce(&mut Capabilities)) {
        // The threads' copies go now (dropped with what was replaced), so a
        // removed provider is not kept alive by a thread that stopped
        // executing.
        let replaced = self.current.capabilities.update(|current| {
            let mut next = Capabilities::clone(current);
            edit(&mut next);
            Arc::new(next)
        });
        drop(replaced);
    }

    fn provide_with(
        &self,
        kind: CapabilityKind,
        edit: impl FnOnce(&mut Capabilities),
        still_ours: impl Fn(&Capabilities) -> bool + Send + 'static,
    ) -> Disposer {
        self.set(edit);
        let slots = Arc::downgrade(&self.current);
        Disposer::new(move || {
            if let Some(current) = slots.upgrade() {
                let slots = CapabilitySlots { current };
                // Only clear the slot if a later provider has not replaced ours.
                if still_ours(&slots.snapshot()) {
                    slots.set(|caps| match kind {
                        CapabilityKind::Fs => caps.fs = None,
                        CapabilityKind::Shell => caps.shell = None,
                        CapabilityKind::Approval => caps.approval = None,
                        CapabilityKind::Dispatcher => caps.dispatcher = None,
                        CapabilityKind::Client => caps.client = None,
                    });
                }
            }
        })
    }

    /// Provides the filesystem; disposing removes it (unless replaced since).
    pub fn provide_fs(&self, fs: Arc<dyn FileSystem>) -> Disposer {
        let mine = fs.clone();
        self.provide_with(
            CapabilityKind::Fs,
            |caps| caps.fs = Some(fs),
            move |caps| caps.fs.as_ref().is_some_and(|f| Arc::ptr_eq(f, &mine)),
        )
    }

    /// Provides the shell; disposing removes it (unless replaced since).
    pub fn provide_shell(&self, shell: Arc<dyn Shell>) -> Disposer {
        let mine = shell.clone();
        self.provide_with(
            CapabilityKind::Shell,
            |caps| caps.shell = Some(shell),
            move |caps| caps.shell.as_ref().is_some_and(|s| Arc::ptr_eq(s, &mine)),
        )
    }

    /// Provides the approval service; disposing removes it (unless replaced since).
    pub fn provide_approval(&self, approval: Arc<dyn ApprovalService>) -> Disposer {
        let mine = approval.clone();
        self.provide_with(
            CapabilityKind::Approval,
            |caps| caps.approval = Some(approval),
            move |caps| {
                caps.approval
                    .as_ref()
                    .is_some_and(|a| Arc::ptr_eq(a, &mine))
            },
        )
    }

    /// Provides the nested dispatcher; disposing removes it (unless replaced since).
    pub fn provide_dispatcher(&self, dispatcher: Arc<dyn ToolDispatcher>) -> Disposer {
        let mine = dispatcher.clone();
        self.provide_with(
            CapabilityKind::Dispatcher,
            |caps| caps.dispatcher = Some(dispatcher),
            move |caps| {
                caps.dispatcher
                    .as_ref()
                    .is_some_and(|d| Arc::ptr_eq(d, &mine))
            },
        )
    }

    /// Provides the client channel (a host serving its tools to a client);
    /// disposing removes it (unless replaced since).
    pub fn provide_client(&self, client: Arc<dyn ClientChannel>) -> Disposer {
        let mine = client.clone();
        self.provide_with(
            CapabilityKind::Client,
            |caps| caps.client = Some(client),
            move |caps| caps.client.as_ref().is_some_and(|c| Arc::ptr_eq(c, &mine)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{ApprovalOutcome, ApprovalRequest};
    use tokio_util::sync::CancellationToken;

    /// Each execution's snapshot is a clone of this thread's copy: after the
    /// first, no snapshot loads the published capabilities (no lock but the
    /// thread's own, no shared count written), until a change.
    #[test]
    fn a_snapshot_makes_no_copy_until_a_change() {
        let slots = CapabilitySlots::new();
        let first = slots.snapshot();
        let made = slots.current.capabilities.copies_made();
        for _ in 0..100 {
            assert!(Arc::ptr_eq(&first, &slots.snapshot()));
        }
        assert_eq!(slots.current.capabilities.copies_made(), made);
    }

    #[test]
    fn a_change_is_seen_by_the_next_snapshot_on_every_thread() {
        struct Nothing;
        #[async_trait::async_trait]
        impl crate::policy::ApprovalService for Nothing {
            async fn request(
                &self,
                _request: ApprovalRequest,
                _cancel: CancellationToken,
            ) -> ApprovalOutcome {
                unreachable!("never asked")
            }
        }
        let slots = CapabilitySlots::new();
        let before = std::thread::scope(|s| s.spawn(|| slots.snapshot()).join().expect("reads"));
        assert!(before.approval.is_none());
        let provided = slots.provide_approval(Arc::new(Nothing));
        assert!(slots.snapshot().approval.is_some());
        std::thread::scope(|s| {
            s.spawn(|| assert!(slots.snapshot().approval.is_some()));
        });
        provided.dispose();
        assert!(slots.snapshot().approval.is_none());
    }
}
