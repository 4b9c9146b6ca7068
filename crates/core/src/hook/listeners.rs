//! The listener list shared by every kind of hook point: registration, ordering,
//! copy-on-write snapshots and disposal.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::RwLock;

use super::{Disposer, Scope};

/// The relative order of listeners on one hook point. Higher runs first (outer).
///
/// Listeners with equal priority run in registration order: the first registered
/// is the outermost. The default is [`Priority::NORMAL`] (0).
///
/// ```
/// use tack_core::hook::Priority;
/// assert!(Priority::EARLY > Priority::NORMAL);
/// assert!(Priority::NORMAL > Priority::LATE);
/// assert_eq!(Priority::default(), Priority::NORMAL);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority(pub i32);

impl Priority {
    /// Outer than the default: sees the input first and the output last
    /// (audit, security gates).
    pub const EARLY: Priority = Priority(100);
    /// The default.
    pub const NORMAL: Priority = Priority(0);
    /// Inner than the default: closest to the hook's default (e.g. the tool body).
    pub const LATE: Priority = Priority(-100);
}

/// How a listener is registered: its name, its scope and its priority.
///
/// The name appears in tracing, in error messages ("listener `audit` panicked")
/// and in the provenance of the decisions the listener makes; it need not be
/// unique, but a name that says who registered it helps the people reading logs.
///
/// ```
/// use tack_core::hook::{AgentId, ListenerSpec, Priority, Scope};
/// let spec = ListenerSpec::new("audit").with_priority(Priority::EARLY);
/// assert_eq!(spec.name(), "audit");
/// assert_eq!(spec.scope(), &Scope::Global);
///
/// let scoped = ListenerSpec::for_agent(AgentId::new("a"), "only-a");
/// assert_eq!(scoped.scope(), &Scope::Agent(AgentId::new("a")));
///
/// // A bare name is a global listener with normal priority.
/// let from_str: ListenerSpec = "plain".into();
/// assert_eq!(from_str.priority(), Priority::NORMAL);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListenerSpec {
    name: Arc<str>,
    scope: Scope,
    priority: Priority,
}

impl ListenerSpec {
    /// A global listener with normal priority.
    pub fn new(name: impl Into<Arc<str>>) -> Self {
        Self {
            name: name.into(),
            scope: Scope::Global,
            priority: Priority::NORMAL,
        }
    }

    /// A listener that only dispatches made for `agent` reach.
    pub fn for_agent(agent: super::AgentId, name: impl Into<Arc<str>>) -> Self {
        Self::new(name).with_scope(Scope::Agent(agent))
    }

    /// Sets the scope.
    pub fn with_scope(mut self, scope: impl Into<Scope>) -> Self {
        self.scope = scope.into();
        self
    }

    /// Sets the priority.
    pub fn with_priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }

    /// The listener's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The listener's scope.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The listener's priority.
    pub fn priority(&self) -> Priority {
        self.priority
    }
}

impl From<&str> for ListenerSpec {
    fn from(name: &str) -> Self {
        Self::new(name)
    }
}

impl From<String> for ListenerSpec {
    fn from(name: String) -> Self {
        Self::new(name)
    }
}

impl From<(Scope, &str)> for ListenerSpec {
    fn from((scope, name): (Scope, &str)) -> Self {
        Self::new(name).with_scope(scope)
    }
}

/// One registered listener inside a snapshot.
pub(crate) struct Entry<L: ?Sized> {
    pub(crate) id: u64,
    pub(crate) name: Arc<str>,
    pub(crate) scope: Scope,
    pub(crate) priority: Priority,
    pub(crate) listener: Arc<L>,
}

impl<L: ?Sized> Clone for Entry<L> {
    fn clone(&self) -> Self {
        Self {
            id: self.id,
            name: self.name.clone(),
            scope: self.scope.clone(),
            priority: self.priority,
            listener: self.listener.clone(),
        }
    }
}

/// An immutable, ordered view of a hook point's listeners, taken when a dispatch starts.
pub(crate) type Snapshot<L> = Arc<[Entry<L>]>;

/// The registered listeners of one hook point.
///
/// Copy-on-write: registration and disposal build a new sorted slice under a
/// write lock; a dispatch takes the current slice with one read lock and one
/// reference-count increment and never holds the lock while listeners run.
pub(crate) struct ListenerList<L: ?Sized> {
    entries: RwLock<Snapshot<L>>,
    next_id: AtomicU64,
}

impl<L: ?Sized + Send + Sync + 'static> ListenerList<L> {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            entries: RwLock::new(Arc::from(Vec::new())),
            next_id: AtomicU64::new(0),
        })
    }

    /// The current listeners, in dispatch order, across every scope.
    #[inline]
    pub(crate) fn snapshot(&self) -> Snapshot<L> {
        self.entries.read().clone()
    }

    /// Adds a listener; the returned disposer removes exactly this registration.
    pub(crate) fn insert(self: &Arc<Self>, spec: ListenerSpec, listener: Arc<L>) -> Disposer {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let entry = Entry {
            id,
            name: spec.name,
            scope: spec.scope,
            priority: spec.priority,
            listener,
        };
        {
            let mut entries = self.entries.write();
            // Higher priority first; equal priority keeps registration order, so the
            // new entry goes after every entry whose priority is >= its own.
            let at = entries.partition_point(|e| e.priority >= entry.priority);
            let mut next: Vec<Entry<L>> = Vec::with_capacity(entries.len() + 1);
            next.extend(entries[..at].iter().cloned());
            next.push(entry);
            next.extend(entries[at..].iter().cloned());
            *entries = Arc::from(next);
        }
        let list: Weak<Self> = Arc::downgrade(self);
        Disposer::new(move || {
            if let Some(list) = list.upgrade() {
                list.remove(id);
            }
        })
    }

    fn remove(&self, id: u64) {
        let mut entries = self.entries.write();
        if entries.iter().any(|e| e.id == id) {
            let next: Vec<Entry<L>> = entries.iter().filter(|e| e.id != id).cloned().collect();
            *entries = Arc::from(next);
        }
    }

    /// Names of the listeners a dispatch for `agent` would reach, in order.
    pub(crate) fn names_for(&self, agent: Option<&super::AgentId>) -> Vec<Arc<str>> {
        self.snapshot()
            .iter()
            .filter(|e| e.scope.reaches(agent))
            .map(|e| e.name.clone())
            .collect()
    }

    /// How many listeners are registered, across every scope.
    pub(crate) fn len(&self) -> usize {
        self.entries.read().len()
    }
}

impl<L: ?Sized> fmt::Debug for ListenerList<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entries = self.entries.read();
        f.debug_list()
            .entries(entries.iter().map(|e| (&*e.name, &e.scope, e.priority)))
            .finish()
    }
}
