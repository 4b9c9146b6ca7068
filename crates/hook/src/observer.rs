//! Observer hook points: notifications that cannot change what they observe.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use super::listeners::ListenerList;
use super::{AgentId, Disposables, Disposer, Order, OrderError, Scope, panic_message};

/// An observer as the list stores it: the closure given to
/// [`Observer::tap`], behind the list's `Arc`.
type Listener<T> = dyn Fn(&Arc<T>) + Send + Sync;

struct Inner<T> {
    name: &'static str,
    list: Arc<ListenerList<Listener<T>>>,
}

/// An observer hook point: every listener sees the same frozen `Arc<T>`.
///
/// A listener is a closure (`Fn(&Arc<T>)`); one with state of its own is a
/// closure that captures it (a struct, a counter, a channel's sender).
/// Observers are synchronous on purpose: an observer never delays or
/// reorders the work it observes. One that needs I/O hands the value (an
/// `Arc`, cheap to clone) to a channel or a task.
///
/// Order, scope and snapshot rules are those of [`Waterfall`](super::Waterfall).
/// A panicking observer is contained: it is logged with `tracing` (level
/// `error`), named in the returned [`Notified`] report, and the other observers
/// still run.
///
/// ```
/// use std::sync::Arc;
/// use tack_hook::Observer;
///
/// let hook: Observer<u32> = Observer::new("demo/numbers");
/// let _bad = hook.tap("bad", |_| panic!("observer bug"));
/// let _good = hook.tap("good", |n: &Arc<u32>| assert_eq!(**n, 7));
/// let report = hook.notify(None, &Arc::new(7));
/// assert_eq!(report.reached, 2);
/// assert_eq!(report.panicked.len(), 1);
/// assert_eq!(&*report.panicked[0], "bad");
/// ```
pub struct Observer<T> {
    inner: Arc<Inner<T>>,
    /// The bag every registration made through this handle goes into
    /// (see [`owned_by`](Self::owned_by)).
    owner: Option<Arc<Disposables>>,
    /// The scope of every registration made through this handle (see
    /// [`for_agent`](Self::for_agent)). Read when registering only.
    scope: Scope,
}

impl<T> Clone for Observer<T> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            owner: self.owner.clone(),
            scope: self.scope.clone(),
        }
    }
}

impl<T> fmt::Debug for Observer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Observer")
            .field("name", &self.inner.name)
            .field("scope", &self.scope)
            .field("listeners", &self.inner.list)
            .finish()
    }
}

/// What a [`Observer::notify`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Notified {
    /// How many observers were run.
    pub reached: usize,
    /// The names of those that panicked (contained and logged).
    pub panicked: Vec<Arc<str>>,
}

impl<T: Send + Sync + 'static> Observer<T> {
    /// An observer hook point named `name` (e.g. `tools/result`).
    pub fn new(name: &'static str) -> Self {
        Self {
            inner: Arc::new(Inner {
                name,
                list: ListenerList::new(),
            }),
            owner: None,
            scope: Scope::Global,
        }
    }

    /// The hook point's name.
    pub fn name(&self) -> &'static str {
        self.inner.name
    }

    /// A handle to the same hook point whose registrations also go into
    /// `owner` (see [`Waterfall::owned_by`](crate::Waterfall::owned_by)). It
    /// keeps this handle's scope.
    pub fn owned_by(&self, owner: Arc<Disposables>) -> Self {
        Self {
            inner: self.inner.clone(),
            owner: Some(owner),
            scope: self.scope.clone(),
        }
    }

    /// A handle to the same hook point whose registrations apply to `agent`
    /// only: a notification for `agent` reaches them, one for another agent
    /// (or for none) never does. It keeps this handle's owner, as
    /// [`owned_by`](Self::owned_by) keeps the agent (see
    /// [`Waterfall::for_agent`](crate::Waterfall::for_agent)).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tack_hook::{AgentId, Observer};
    ///
    /// let hook: Observer<u32> = Observer::new("demo/scoped");
    /// let reviewer = AgentId::new("reviewer");
    /// let _all = hook.tap("everyone", |_| {});
    /// let _own = hook.for_agent(&reviewer).tap("reviewer-only", |_| {});
    /// assert_eq!(hook.notify(Some(&reviewer), &Arc::new(1)).reached, 2);
    /// assert_eq!(hook.notify(Some(&AgentId::new("coder")), &Arc::new(1)).reached, 1);
    /// assert_eq!(hook.notify(None, &Arc::new(1)).reached, 1);
    /// ```
    pub fn for_agent(&self, agent: impl Into<AgentId>) -> Self {
        Self {
            inner: self.inner.clone(),
            owner: self.owner.clone(),
            scope: Scope::Agent(agent.into()),
        }
    }

    fn keep(&self, disposer: Disposer) -> Disposer {
        Disposables::hold_in(self.owner.as_ref(), disposer)
    }

    /// Registers an observer named `name`: a closure that sees each frozen
    /// value (and captures whatever state it keeps). It goes in this
    /// handle's scope (every agent, unless the handle came from
    /// [`for_agent`](Self::for_agent)); the name is used as a waterfall
    /// listener's is (see [`Waterfall::tap`](crate::Waterfall::tap)).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use tack_hook::Observer;
    ///
    /// /// A named observer with state: the closure captures it.
    /// struct Counter(AtomicUsize);
    /// impl Counter {
    ///     fn observe(&self, _said: &Arc<String>) {
    ///         self.0.fetch_add(1, Ordering::Relaxed);
    ///     }
    /// }
    ///
    /// let hook: Observer<String> = Observer::new("demo/said");
    /// let counter = Arc::new(Counter(AtomicUsize::new(0)));
    /// let c = counter.clone();
    /// let _kept = hook.tap("counter", move |said| c.observe(said));
    /// hook.notify(None, &Arc::new("hi".to_owned()));
    /// assert_eq!(counter.0.load(Ordering::Relaxed), 1);
    /// ```
    pub fn tap<F>(&self, name: impl Into<Arc<str>>, observer: F) -> Disposer
    where
        F: Fn(&Arc<T>) + Send + Sync + 'static,
    {
        let disposer = self
            .inner
            .list
            .insert(self.scope.clone(), name.into(), Arc::new(observer));
        self.keep(disposer)
    }

    /// Registers a closure observer placed by `order`: before or after other
    /// observers of this hook point, by name (see [`Order`]).
    ///
    /// # Errors
    ///
    /// [`OrderError`] when a name in `order` is not registered here, or the
    /// constraints conflict; nothing is registered then.
    pub fn tap_with<F>(
        &self,
        name: impl Into<Arc<str>>,
        order: Order,
        observer: F,
    ) -> Result<Disposer, OrderError>
    where
        F: Fn(&Arc<T>) + Send + Sync + 'static,
    {
        self.inner
            .list
            .insert_ordered(
                self.inner.name,
                self.scope.clone(),
                name.into(),
                order,
                Arc::new(observer),
            )
            .map(|disposer| self.keep(disposer))
    }

    /// Shows `value` to every observer that a dispatch for `agent` reaches, in
    /// order, containing panics.
    pub fn notify(&self, agent: Option<&AgentId>, value: &Arc<T>) -> Notified {
        let view = self.inner.list.view(agent);
        let mut report = Notified::default();
        for entry in view.entries.iter() {
            report.reached += 1;
            let listener = &entry.listener;
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| listener(value))) {
                let message = panic_message(&*payload);
                tracing::error!(
                    hook = self.inner.name,
                    listener = &*entry.name,
                    %message,
                    "observer panicked; contained, the other observers still run"
                );
                report.panicked.push(entry.name.clone());
            }
        }
        report
    }

    /// Names of the observers a dispatch for `agent` would run now, in order.
    pub fn listener_names(&self, agent: Option<&AgentId>) -> Vec<Arc<str>> {
        self.inner.list.names_for(agent)
    }

    /// How many observers are registered, across every scope.
    pub fn listener_count(&self) -> usize {
        self.inner.list.len()
    }

    /// Whether a notification for `agent` would reach any observer.
    pub fn has_listeners(&self, agent: Option<&AgentId>) -> bool {
        self.inner.list.reaches_any(agent)
    }
}
