//! The handle a plugin gets for a registration its footprint already holds.

use std::fmt;
use std::sync::Arc;

use crate::hook::{Disposables, Disposer};

/// A registration made through a [`PluginContext`](super::PluginContext):
/// the plugin's footprint owns it, so it stays installed until the plugin is
/// unloaded, **whatever happens to this handle**.
///
/// Dropping a `Registration` does nothing (as with a [`Disposer`]): writing
/// `let _gate = cx.hooks().pre_execute().tap(..)` inside `install` keeps the
/// gate installed. The handle is only needed to remove the registration
/// early, with [`dispose`](Self::dispose); the footprint's own disposal later
/// finds it already undone (disposal is idempotent).
///
/// ```
/// use tack_core::hook::{Disposables, Disposer};
/// use tack_core::plugin::Registration;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
///
/// let undone = Arc::new(AtomicUsize::new(0));
/// let footprint = Disposables::new();
/// let count = undone.clone();
/// let handle = Registration::keep_in(&footprint, Disposer::new(move || {
///     count.fetch_add(1, Ordering::SeqCst);
/// }));
/// drop(handle); // nothing happens: the footprint holds the registration
/// assert_eq!(undone.load(Ordering::SeqCst), 0);
/// footprint.dispose(); // unload
/// assert_eq!(undone.load(Ordering::SeqCst), 1);
/// ```
#[derive(Clone)]
pub struct Registration {
    disposer: Arc<Disposer>,
}

impl Registration {
    /// Puts `disposer` into `footprint` and returns a handle that can undo it
    /// early. Dropping the handle leaves the registration to the footprint.
    pub fn keep_in(footprint: &Disposables, disposer: Disposer) -> Self {
        let disposer = Arc::new(disposer);
        let owned = disposer.clone();
        footprint.add(Disposer::new(move || owned.dispose()));
        Self { disposer }
    }

    /// Undoes the registration now, before the plugin is unloaded.
    /// Idempotent, thread-safe, and safe from inside the listener it removes.
    pub fn dispose(&self) {
        self.disposer.dispose();
    }

    /// Whether the registration has been undone (early, or by unloading the plugin).
    pub fn is_disposed(&self) -> bool {
        self.disposer.is_disposed()
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("disposed", &self.is_disposed())
            .finish()
    }
}
