//! Disposers: the handles that undo a registration.

use std::fmt;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

/// Something that can undo the registration it handed out under `key`.
pub(crate) trait Undo: Send + Sync {
    /// Undoes the registration `key`; nothing when it is already undone.
    fn undo(&self, key: u128);
}

/// What a disposer runs.
enum DisposeAction {
    /// Any action.
    Boxed(Box<dyn FnOnce() + Send>),
    /// Undo registration `key` of a registry, if it still exists: no
    /// allocation of its own (a listener list's disposers are made by the
    /// thousand when sessions come and go).
    Undo(Weak<dyn Undo>, u128),
    /// Dispose a registration another handle shares (see
    /// [`Disposables::hold`]).
    Shared(Arc<Disposer>),
}

impl DisposeAction {
    fn run(self) {
        match self {
            Self::Boxed(action) => action(),
            Self::Undo(registry, key) => {
                if let Some(registry) = registry.upgrade() {
                    registry.undo(key);
                }
            }
            Self::Shared(shared) => shared.dispose(),
        }
    }
}

/// Undoes one registration (a listener, a guard, a tool, a capability).
///
/// * [`dispose`](Disposer::dispose) is idempotent: the first call undoes the
///   registration, later calls do nothing.
/// * It may be called from any thread, and from inside the very listener it
///   removes: dispatch never holds a lock while a listener runs, so this cannot
///   deadlock. A dispatch already in progress keeps its snapshot; the removal
///   affects later dispatches only.
/// * **Dropping a `Disposer` leaves the registration in place**: only
///   [`dispose`](Disposer::dispose) removes it. `let _ = hook.tap(..)` keeps the
///   listener for as long as the hook point lives; keep the handle (or put it
///   in a [`Disposables`] bag, a plugin's footprint) to remove it later.
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::sync::Arc;
/// use tack_hook::Disposer;
///
/// let undone = Arc::new(AtomicBool::new(false));
/// let flag = undone.clone();
/// let disposer = Disposer::new(move || flag.store(true, Ordering::SeqCst));
/// drop(Disposer::new(|| unreachable!("dropping never undoes")));
/// disposer.dispose();
/// disposer.dispose(); // idempotent
/// assert!(undone.load(Ordering::SeqCst));
/// ```
pub struct Disposer {
    action: Mutex<Option<DisposeAction>>,
}

impl Disposer {
    /// A disposer that runs `action` once, on the first [`dispose`](Self::dispose)
    /// (never on drop).
    pub fn new(action: impl FnOnce() + Send + 'static) -> Self {
        Self {
            action: Mutex::new(Some(DisposeAction::Boxed(Box::new(action)))),
        }
    }

    /// A disposer that undoes registration `key` of `registry` (if the
    /// registry still exists then).
    pub(crate) fn undo(registry: Weak<dyn Undo>, key: u128) -> Self {
        Self {
            action: Mutex::new(Some(DisposeAction::Undo(registry, key))),
        }
    }

    /// A disposer that has nothing to undo.
    pub fn noop() -> Self {
        Self {
            action: Mutex::new(None),
        }
    }

    /// Undoes the registration. Idempotent, thread-safe, re-entrant.
    pub fn dispose(&self) {
        // Take the action out under the lock, run it after releasing the lock, so an
        // action that (directly or not) disposes this disposer again finds `None`.
        let action = self.action.lock().take();
        if let Some(action) = action {
            action.run();
        }
    }

    /// Whether this disposer has already run (or was created with nothing to undo).
    pub fn is_disposed(&self) -> bool {
        match &*self.action.lock() {
            None => true,
            Some(DisposeAction::Shared(shared)) => shared.is_disposed(),
            Some(_) => false,
        }
    }

    fn shared(shared: Arc<Disposer>) -> Self {
        Self {
            action: Mutex::new(Some(DisposeAction::Shared(shared))),
        }
    }
}

impl fmt::Debug for Disposer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Disposer")
            .field("disposed", &self.is_disposed())
            .finish()
    }
}

/// A bag of [`Disposer`]s: a plugin's whole footprint.
///
/// [`dispose`](Self::dispose) disposes every member in reverse order of
/// addition (last registered, first removed). The bag stays usable
/// afterwards: disposers added later are disposed by the next call. Like a
/// [`Disposer`], dropping the bag undoes nothing.
///
/// ```
/// use tack_hook::{Disposables, Disposer};
/// let bag = Disposables::new();
/// bag.add(Disposer::new(|| println!("second")));
/// bag.add(Disposer::new(|| println!("first")));
/// assert_eq!(bag.len(), 2);
/// bag.dispose();
/// assert!(bag.is_empty());
/// ```
#[derive(Default)]
pub struct Disposables {
    members: Mutex<Vec<Disposer>>,
}

impl Disposables {
    /// An empty bag.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a disposer to the bag.
    pub fn add(&self, disposer: Disposer) {
        self.members.lock().push(disposer);
    }

    /// Keeps `disposer` in the bag and returns a handle to the same
    /// registration: either undoes it (the handle early, the bag when it is
    /// disposed), and dropping the handle leaves it to the bag.
    ///
    /// ```
    /// use tack_hook::{Disposables, Disposer};
    /// let bag = Disposables::new();
    /// let handle = bag.hold(Disposer::new(|| println!("undone once")));
    /// drop(handle); // the bag still holds the registration
    /// assert!(!bag.is_empty());
    /// let handle = bag.hold(Disposer::noop());
    /// bag.dispose();
    /// assert!(handle.is_disposed());
    /// ```
    pub fn hold(&self, disposer: Disposer) -> Disposer {
        let shared = Arc::new(disposer);
        self.add(Disposer::shared(shared.clone()));
        Disposer::shared(shared)
    }

    /// `disposer`, held in `owner` when there is one (see
    /// [`hold`](Self::hold)): how an owned hook point keeps what is
    /// registered through it.
    pub(crate) fn hold_in(owner: Option<&Arc<Disposables>>, disposer: Disposer) -> Disposer {
        match owner {
            Some(owner) => owner.hold(disposer),
            None => disposer,
        }
    }

    /// Moves every disposer of `other` into this bag, keeping their order.
    pub fn absorb(&self, other: Disposables) {
        let moved = std::mem::take(&mut *other.members.lock());
        self.members.lock().extend(moved);
    }

    /// How many disposers the bag holds.
    pub fn len(&self) -> usize {
        self.members.lock().len()
    }

    /// Whether the bag holds no disposer.
    pub fn is_empty(&self) -> bool {
        self.members.lock().is_empty()
    }

    /// Disposes every member, last added first. Thread-safe and re-entrant: a
    /// member may dispose the bag again while it runs.
    pub fn dispose(&self) {
        loop {
            // Pop one at a time without holding the lock while the action runs.
            let next = self.members.lock().pop();
            match next {
                Some(disposer) => disposer.dispose(),
                None => break,
            }
        }
    }

    /// Turns the bag into a single [`Disposer`] that disposes all of it.
    pub fn into_disposer(self) -> Disposer {
        Disposer::new(move || self.dispose())
    }
}

impl fmt::Debug for Disposables {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Disposables")
            .field("len", &self.len())
            .finish()
    }
}

impl Extend<Disposer> for Disposables {
    fn extend<I: IntoIterator<Item = Disposer>>(&mut self, iter: I) {
        self.members.get_mut().extend(iter);
    }
}

impl FromIterator<Disposer> for Disposables {
    fn from_iter<I: IntoIterator<Item = Disposer>>(iter: I) -> Self {
        Self {
            members: Mutex::new(iter.into_iter().collect()),
        }
    }
}
