//! Waterfall hook points: a chain of around-listeners ending in a default.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::future_pool::{PoolKey, Pooled};

use super::listeners::ListenerList;
use super::view::{Pos, View};
use super::{
    AgentId, Disposables, Disposer, HookError, Order, OrderError, Provenance, Scope, panic_message,
};

/// A typed waterfall listener: the named-type alternative to a closure given to
/// [`Waterfall::tap`].
///
/// The listener receives the input and the rest of the chain as a [`Next`]. It
/// may
///
/// * **short-circuit**: return an output without calling `next`;
/// * **delegate**: `next.run(input).await`;
/// * **rewrite** the input before delegating;
/// * **transform** what `next` returned.
///
/// ```
/// use tack_hook::{Next, Waterfall, WaterfallListener};
///
/// /// Doubles whatever the rest of the chain produces.
/// struct Doubler;
/// impl WaterfallListener<u32, u32> for Doubler {
///     async fn call(&self, input: u32, next: Next<u32, u32>) -> u32 {
///         next.run(input).await * 2
///     }
/// }
///
/// # futures::executor::block_on(async {
/// let hook = Waterfall::new("demo/double", |x: u32| async move { x + 1 });
/// let _kept = hook.register("doubler", Doubler);
/// assert_eq!(hook.dispatch(None, 1).await.unwrap(), 4);
/// # });
/// ```
pub trait WaterfallListener<In, Out>: Send + Sync + 'static {
    /// Handles one dispatch. See the trait documentation for what a listener may do.
    fn call(&self, input: In, next: Next<In, Out>) -> impl Future<Output = Out> + Send;
}

/// What calling a listener produced.
pub(crate) enum Step<In, Out> {
    /// The listener returned the future of a `next.run(input)` itself,
    /// unpolled (a tail call): the [`Walk`] holds that input and that rest
    /// of the chain (normally the chain the listener was given). No box and
    /// no level of its own.
    Tail,
    /// Any other future, in a box of this thread's pool (see
    /// `future_pool`): no allocation once the thread has run one of its type.
    Pooled(Pooled<Out>),
    /// A `NextFuture` the listener polled before returning it.
    Other(NextFuture<In, Out>),
}

/// A run of tail calls: the input and the rest of the chain the next
/// listener is given, which its `next.run(..)` gives back. One place the
/// chain's handle moves through, listener after listener.
pub(crate) struct Walk<In, Out> {
    input: Option<In>,
    view: Option<Stages<In, Out>>,
    /// The position of the `Next` the listener is given.
    pos: Pos,
}

impl<In, Out> Walk<In, Out> {
    /// The input and the `Next` for the listener being called.
    #[inline]
    fn take(&mut self) -> (In, Next<In, Out>) {
        match (self.input.take(), self.view.take()) {
            (Some(input), Some(view)) => (
                input,
                Next {
                    view,
                    pos: self.pos,
                },
            ),
            _ => unreachable!("a walk holds its input and view until a listener is called"),
        }
    }
}

/// The object-safe form every listener is stored as.
pub(crate) trait ErasedListener<In, Out>: Send + Sync + 'static {
    /// Calls the listener with the input and the rest of the chain `walk`
    /// holds.
    fn call_erased(&self, walk: &mut Walk<In, Out>) -> Step<In, Out>;
}

/// A closure listener, with the pool key of the futures it returns.
struct ClosureListener<F> {
    listener: F,
    key: PoolKey,
}

impl<F> ClosureListener<F> {
    fn new<In, Out, Fut>(listener: F) -> Self
    where
        F: Fn(In, Next<In, Out>) -> Fut,
        Fut: 'static,
    {
        Self {
            listener,
            key: PoolKey::of::<Fut>(),
        }
    }
}

impl<In, Out, F, Fut> ErasedListener<In, Out> for ClosureListener<F>
where
    In: Send + 'static,
    Out: Send + 'static,
    F: Fn(In, Next<In, Out>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Out> + Send + 'static,
{
    #[inline]
    fn call_erased(&self, walk: &mut Walk<In, Out>) -> Step<In, Out> {
        let (input, next) = walk.take();
        // Resolved at compile time: when the closure's future type is
        // `NextFuture`, it returned `next.run(..)` directly.
        if TypeId::of::<Fut>() == TypeId::of::<NextFuture<In, Out>>() {
            // Emptied below either way (its parts moved out), so there is
            // nothing left to drop: not dropping it saves the check.
            let mut returned = ManuallyDrop::new((self.listener)(input, next));
            let any: &mut dyn Any = &mut *returned;
            let Some(returned) = any.downcast_mut::<NextFuture<In, Out>>() else {
                unreachable!("the future's type is `NextFuture`")
            };
            // Unpolled: its parts go back into the walk where they are.
            if let State::Start(input @ Some(_)) = &mut returned.state {
                walk.input = input.take();
                walk.view = returned.view.take();
                walk.pos = returned.pos;
                return Step::Tail;
            }
            return Step::Other(returned.take());
        }
        // Any other future goes into a box of the pool for its type (see
        // `future_pool`): no allocation once the thread has run one.
        Step::Pooled(Pooled::keyed(self.key, (self.listener)(input, next)))
    }
}

/// A typed listener, with the pool key of its futures.
struct TypedListener<L> {
    listener: Arc<L>,
    key: PoolKey,
}

impl<L> TypedListener<L> {
    fn new<In, Out>(listener: L) -> Self
    where
        In: Send + 'static,
        Out: Send + 'static,
        L: WaterfallListener<In, Out>,
    {
        Self {
            listener: Arc::new(listener),
            key: PoolKey::returned_by(typed_call::<In, Out, L>),
        }
    }
}

/// A typed listener's future: it owns an `Arc` of the listener, so it is
/// `'static` without asking the author for `'static` futures.
async fn typed_call<In, Out, L>(listener: Arc<L>, input: In, next: Next<In, Out>) -> Out
where
    In: Send + 'static,
    Out: Send + 'static,
    L: WaterfallListener<In, Out>,
{
    listener.call(input, next).await
}

impl<In, Out, L> ErasedListener<In, Out> for TypedListener<L>
where
    In: Send + 'static,
    Out: Send + 'static,
    L: WaterfallListener<In, Out>,
{
    fn call_erased(&self, walk: &mut Walk<In, Out>) -> Step<In, Out> {
        let (input, next) = walk.take();
        let listener = self.listener.clone();
        Step::Pooled(Pooled::keyed(self.key, typed_call(listener, input, next)))
    }
}

/// A hook point's default: asynchronous (its future is boxed), or
/// synchronous (run when its [`NextFuture`] is polled, without a future).
enum DefaultFn<In, Out> {
    Async(Arc<dyn Fn(In) -> Pooled<Out> + Send + Sync>),
    Sync(Arc<dyn Fn(In) -> Out + Send + Sync>),
}

impl<In, Out> Clone for DefaultFn<In, Out> {
    fn clone(&self) -> Self {
        match self {
            Self::Async(f) => Self::Async(f.clone()),
            Self::Sync(f) => Self::Sync(f.clone()),
        }
    }
}

/// Where a [`NextFuture`] is: not started (the rest of the chain from its
/// position runs with this input when it is first polled), or waiting on
/// the boxed future of a listener or of an asynchronous default. A
/// synchronous default's output is returned by the poll that starts the
/// future, so it needs no state of its own.
enum State<In, Out> {
    /// The input, until the first poll takes it.
    Start(Option<In>),
    Running(Pooled<Out>),
}

type ProvenanceSlot<Out> = fn(&mut Out) -> Option<&mut Option<Provenance>>;

/// What every dispatch of one waterfall shares: its name, its default and its
/// provenance slot. Carried by each view, so a chain needs one pointer.
struct Meta<In, Out> {
    hook: &'static str,
    default: DefaultFn<In, Out>,
    provenance: Option<ProvenanceSlot<Out>>,
}

impl<In, Out> Clone for Meta<In, Out> {
    fn clone(&self) -> Self {
        Self {
            hook: self.hook,
            default: self.default.clone(),
            provenance: self.provenance,
        }
    }
}

/// The listeners of one dispatch, with the hook's [`Meta`].
type Stages<In, Out> = View<dyn ErasedListener<In, Out>, Meta<In, Out>>;

/// The registrations of one waterfall.
type Listeners<In, Out> = ListenerList<dyn ErasedListener<In, Out>, Meta<In, Out>>;

struct Inner<In, Out> {
    hook: &'static str,
    list: Arc<Listeners<In, Out>>,
}

/// A waterfall hook point: listeners form a chain around the hook's default.
///
/// ```text
///  dispatch(input)
///      │
///      ▼
///  ┌─ rank 100, registered 1st ─────┐   outermost: sees the input first,
///  │ ┌─ rank 100, registered 2nd ───┐│   the output last
///  │ │ ┌─ rank 0 ──────────────────┐ ││
///  │ │ │ ┌─ rank -5 ──────────────┐│ ││
///  │ │ │ │        default         ││ ││   allow / the tool body / identity
///  │ │ │ └────────────────────────┘│ ││
///  │ │ └───────────────────────────┘ ││
///  │ └───────────────────────────────┘│
///  └──────────────────────────────────┘
/// ```
///
/// * **Order**: higher rank first ([`Order::EARLY`](super::Order::EARLY),
///   [`Order::LATE`](super::Order::LATE), given with
///   [`tap_with`](Self::tap_with); [`tap`](Self::tap) is
///   [`Order::NORMAL`](super::Order::NORMAL)); equal ranks in registration
///   order (first registered is outermost). An [`Order`] that names
///   listeners places this one before or after them, whatever their ranks.
/// * **Scope**: a listener registered through [`for_agent`](Self::for_agent)
///   applies to that agent only; one registered through any other handle, to
///   every agent. A dispatch for agent A runs the global listeners and A's, in
///   one merged order, never another agent's.
/// * **Snapshot**: the listener list is read once when the dispatch starts;
///   registering or disposing during it changes later dispatches only.
/// * **Failure**: a panic anywhere in the chain makes the dispatch return
///   [`HookError`] naming the listener (or the default) that panicked. It never
///   falls back to the default, and an outer listener cannot hide it.
///
/// `Waterfall` is a cheap handle (`Clone` shares the same hook point).
///
/// ```
/// use tack_hook::{Order, Waterfall};
///
/// # futures::executor::block_on(async {
/// let hook: Waterfall<String, String> = Waterfall::new("demo/greet", |name| async move {
///     format!("hello {name}")
/// });
/// // Rewrite the input, then delegate.
/// let _shout = hook.tap("upper", |name: String, next| next.run(name.to_uppercase()));
/// // Transform the output; runs outside `upper` because of its priority.
/// let _bang = hook.tap_with(
///     "bang", Order::EARLY,
///     |name, next| async move { format!("{}!", next.run(name).await) },
/// ).unwrap();
/// assert_eq!(hook.dispatch(None, "ada".into()).await.unwrap(), "hello ADA!");
/// # });
/// ```
pub struct Waterfall<In, Out> {
    inner: Arc<Inner<In, Out>>,
    /// The bag every registration made through this handle goes into
    /// (see [`owned_by`](Self::owned_by)).
    owner: Option<Arc<Disposables>>,
    /// The scope of every registration made through this handle (see
    /// [`for_agent`](Self::for_agent)). Read when registering only: a
    /// dispatch reads the list.
    scope: Scope,
}

impl<In, Out> Clone for Waterfall<In, Out> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            owner: self.owner.clone(),
            scope: self.scope.clone(),
        }
    }
}

impl<In, Out> fmt::Debug for Waterfall<In, Out> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Waterfall")
            .field("name", &self.inner.hook)
            .field("scope", &self.scope)
            .field("listeners", &self.inner.list)
            .finish()
    }
}

impl<In: Send + 'static, Out: Send + 'static> Waterfall<In, Out> {
    /// A hook point named `name` (for tracing, docs and errors, e.g.
    /// `tools/pre-execute`) whose chain ends in `default`.
    pub fn new<F, Fut>(name: &'static str, default: F) -> Self
    where
        F: Fn(In) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Out> + Send + 'static,
    {
        Self::build(
            name,
            {
                let key = PoolKey::of::<Fut>();
                DefaultFn::Async(Arc::new(move |input| Pooled::keyed(key, default(input))))
            },
            None,
        )
    }

    /// A hook point whose default is synchronous: a dispatch that reaches
    /// the default builds no future for it (no allocation).
    pub fn new_sync<F>(name: &'static str, default: F) -> Self
    where
        F: Fn(In) -> Out + Send + Sync + 'static,
    {
        Self::build(name, DefaultFn::Sync(Arc::new(default)), None)
    }

    fn build(
        hook: &'static str,
        default: DefaultFn<In, Out>,
        provenance: Option<ProvenanceSlot<Out>>,
    ) -> Self {
        let meta = Meta {
            hook,
            default,
            provenance,
        };
        Self {
            inner: Arc::new(Inner {
                hook,
                list: ListenerList::with_meta(meta),
            }),
            owner: None,
            scope: Scope::Global,
        }
    }

    /// Makes the hook stamp the [`Provenance`] of each output into the slot
    /// `slot` returns: an output whose slot is still empty when the listener (or
    /// default) that returned it completes gets that listener's name.
    ///
    /// Call it right after [`new`](Self::new), before sharing the hook.
    ///
    /// # Panics
    ///
    /// When the hook handle has already been cloned or has listeners (the
    /// setting would not reach them).
    pub fn with_provenance(self, slot: ProvenanceSlot<Out>) -> Self {
        assert!(
            Arc::strong_count(&self.inner) == 1 && self.inner.list.is_empty(),
            "with_provenance is called on a fresh hook point, before it is cloned or has listeners"
        );
        let default = self.inner.list.view(None).meta().default.clone();
        Self::build(self.inner.hook, default, Some(slot))
    }

    /// The hook point's name.
    pub fn name(&self) -> &'static str {
        self.inner.hook
    }

    /// A handle to the same hook point whose registrations also go into
    /// `owner`: each stays installed until `owner` is disposed (or its own
    /// returned [`Disposer`] is), whatever happens to that disposer. This is
    /// how a plugin's registrations join its footprint. It keeps this
    /// handle's scope (see [`for_agent`](Self::for_agent)).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tack_hook::{Disposables, Waterfall};
    ///
    /// let hook = Waterfall::new_sync("demo/owned", |x: u32| x);
    /// let footprint = Arc::new(Disposables::new());
    /// let _ = hook.owned_by(footprint.clone()).tap("plus-one", |x, next| next.run(x + 1));
    /// assert_eq!(hook.listener_count(), 1); // dropping the handle kept it
    /// footprint.dispose();
    /// assert_eq!(hook.listener_count(), 0);
    /// ```
    pub fn owned_by(&self, owner: Arc<Disposables>) -> Self {
        Self {
            inner: self.inner.clone(),
            owner: Some(owner),
            scope: self.scope.clone(),
        }
    }

    /// A handle to the same hook point whose registrations apply to `agent`
    /// only: a dispatch for `agent` runs them, merged with the global
    /// listeners in one order, and a dispatch for another agent (or for
    /// none) never does. Ordering by name ([`Order::before`],
    /// [`Order::after`]) works across scopes.
    ///
    /// It keeps this handle's owner (see [`owned_by`](Self::owned_by)), and
    /// `owned_by` keeps the agent, so `hook.owned_by(bag).for_agent(a)` and
    /// `hook.for_agent(a).owned_by(bag)` are the same handle. On a handle
    /// scoped already, the new agent replaces the old one. Dispatching and
    /// the listener queries are the hook point's, whatever the handle.
    ///
    /// ```
    /// use tack_hook::{AgentId, Waterfall};
    ///
    /// # futures::executor::block_on(async {
    /// let hook = Waterfall::new_sync("demo/scoped", |x: u32| x);
    /// let reviewer = AgentId::new("reviewer");
    /// let _all = hook.tap("plus-one", |x, next| next.run(x + 1));
    /// let _own = hook.for_agent(&reviewer).tap("times-ten", |x, next| next.run(x * 10));
    /// assert_eq!(hook.dispatch(Some(&reviewer), 1).await.unwrap(), 20);
    /// assert_eq!(hook.dispatch(Some(&AgentId::new("coder")), 1).await.unwrap(), 2);
    /// assert_eq!(hook.dispatch(None, 1).await.unwrap(), 2);
    /// # });
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

    /// Adds an erased listener at the default rank, in this handle's scope,
    /// kept by the owner.
    fn add(&self, name: Arc<str>, listener: Arc<dyn ErasedListener<In, Out>>) -> Disposer {
        self.keep(self.inner.list.insert(self.scope.clone(), name, listener))
    }

    /// Adds an erased listener placed by `order`, in this handle's scope,
    /// kept by the owner.
    fn add_ordered(
        &self,
        name: Arc<str>,
        order: Order,
        listener: Arc<dyn ErasedListener<In, Out>>,
    ) -> Result<Disposer, OrderError> {
        self.inner
            .list
            .insert_ordered(self.inner.hook, self.scope.clone(), name, order, listener)
            .map(|disposer| self.keep(disposer))
    }

    /// Registers a closure listener named `name`. The closure gets the input
    /// and a [`Next`]; see [`WaterfallListener`] for what it may do with them.
    ///
    /// The name appears in tracing, in error messages ("listener `audit`
    /// panicked") and in the provenance of the decisions the listener makes;
    /// it need not be unique, but one that says who registered the listener
    /// helps the people reading logs. The listener goes in this handle's
    /// scope (every agent, unless the handle came from
    /// [`for_agent`](Self::for_agent)), at [`Order::NORMAL`].
    ///
    /// A closure that only inspects or rewrites the input and then returns
    /// `next.run(input)` itself (not wrapped in an `async` block) is a tail
    /// call: it costs no allocation and no level of nesting.
    pub fn tap<F, Fut>(&self, name: impl Into<Arc<str>>, listener: F) -> Disposer
    where
        F: Fn(In, Next<In, Out>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Out> + Send + 'static,
    {
        self.add(name.into(), Arc::new(ClosureListener::new(listener)))
    }

    /// Registers a typed listener named `name` (see [`tap`](Self::tap)).
    pub fn register<L>(&self, name: impl Into<Arc<str>>, listener: L) -> Disposer
    where
        L: WaterfallListener<In, Out>,
    {
        self.add(name.into(), Arc::new(TypedListener::new(listener)))
    }

    /// Registers a closure listener placed by `order`: before or after
    /// other listeners of this hook point, by name (see [`Order`]).
    ///
    /// # Errors
    ///
    /// [`OrderError`] when a name in `order` is not registered here, or the
    /// constraints conflict; nothing is registered then.
    pub fn tap_with<F, Fut>(
        &self,
        name: impl Into<Arc<str>>,
        order: Order,
        listener: F,
    ) -> Result<Disposer, OrderError>
    where
        F: Fn(In, Next<In, Out>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Out> + Send + 'static,
    {
        self.add_ordered(name.into(), order, Arc::new(ClosureListener::new(listener)))
    }

    /// Registers a typed listener placed by `order` (see [`tap_with`](Self::tap_with)).
    ///
    /// # Errors
    ///
    /// As [`tap_with`](Self::tap_with).
    pub fn register_with<L>(
        &self,
        name: impl Into<Arc<str>>,
        order: Order,
        listener: L,
    ) -> Result<Disposer, OrderError>
    where
        L: WaterfallListener<In, Out>,
    {
        self.add_ordered(name.into(), order, Arc::new(TypedListener::new(listener)))
    }

    /// Runs the chain for `agent` (`None`: global listeners only).
    ///
    /// The listener list is snapshotted now; the returned future drives the
    /// chain and is `'static`, so it may be spawned.
    ///
    /// # Errors
    ///
    /// [`HookError`] when a listener or the default panicked.
    pub fn dispatch(&self, agent: Option<&AgentId>, input: In) -> Dispatch<In, Out> {
        Dispatch {
            hook: self.inner.hook,
            state: DispatchState::Start {
                view: self.inner.list.view(agent),
                input,
            },
        }
    }

    /// [`dispatch`](Self::dispatch) when a listener reaches `agent`; else
    /// the input back (the caller runs its default its own way). One
    /// snapshot read for both the check and the dispatch.
    ///
    /// ```
    /// use tack_hook::Waterfall;
    ///
    /// # futures::executor::block_on(async {
    /// let hook = Waterfall::new("demo/twice", |x: u32| async move { x * 2 });
    /// assert_eq!(hook.try_dispatch(None, 3).err(), Some(3));
    /// let _plus = hook.tap("plus", |x: u32, next| next.run(x + 1));
    /// let dispatch = hook.try_dispatch(None, 3).ok().expect("a listener");
    /// assert_eq!(dispatch.await.unwrap(), 8);
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// The input, when no listener reaches `agent`.
    pub fn try_dispatch(
        &self,
        agent: Option<&AgentId>,
        input: In,
    ) -> Result<Dispatch<In, Out>, In> {
        if self.inner.list.is_empty() {
            return Err(input);
        }
        let view = self.inner.list.view(agent);
        if view.entries.iter().next().is_none() {
            return Err(input);
        }
        Ok(Dispatch {
            hook: self.inner.hook,
            state: DispatchState::Start { view, input },
        })
    }

    /// Names of the listeners a dispatch for `agent` would run now, outermost first.
    pub fn listener_names(&self, agent: Option<&AgentId>) -> Vec<Arc<str>> {
        self.inner.list.names_for(agent)
    }

    /// How many listeners are registered, across every scope.
    pub fn listener_count(&self) -> usize {
        self.inner.list.len()
    }

    /// Whether a dispatch for `agent` would run any listener (if not, it would
    /// return the default's output).
    pub fn has_listeners(&self, agent: Option<&AgentId>) -> bool {
        self.inner.list.reaches_any(agent)
    }
}

thread_local! {
    /// Who was running when a panic started unwinding through a chain, recorded
    /// by the innermost [`Witness`] and consumed by the enclosing [`Dispatch`]:
    /// a listener's name, or `None` for the default.
    static CULPRIT: RefCell<Option<Option<Arc<str>>>> = const { RefCell::new(None) };
}

fn take_culprit() -> Option<Option<Arc<str>>> {
    CULPRIT.try_with(|c| c.borrow_mut().take()).ok().flatten()
}

/// Who sits at `pos` of a view: a listener's name, or (past the last) `None`
/// for the default.
fn listener_at<In, Out>(view: &Stages<In, Out>, pos: Pos) -> Option<Arc<str>> {
    view.entries.at(pos).map(|(e, _, _)| e.name.clone())
}

/// Records who was running when a panic unwound through it. Innermost first:
/// the first witness dropped during unwinding fills the thread's slot.
struct Witness<'a, In, Out> {
    view: &'a Stages<In, Out>,
    pos: Pos,
    armed: bool,
}

impl<'a, In, Out> Witness<'a, In, Out> {
    #[inline]
    fn new(view: &'a Stages<In, Out>, pos: Pos) -> Self {
        Self {
            view,
            pos,
            armed: true,
        }
    }

    #[inline]
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl<In, Out> Drop for Witness<'_, In, Out> {
    fn drop(&mut self) {
        if self.armed && std::thread::panicking() {
            let _ = CULPRIT.try_with(|c| {
                let mut slot = c.borrow_mut();
                if slot.is_none() {
                    *slot = Some(listener_at(self.view, self.pos));
                }
            });
        }
    }
}

/// The rest of a waterfall chain, handed to each listener.
///
/// Consumed by [`run`](Next::run): a listener can delegate at most once
/// through one `Next`, and the compiler enforces it. Dropping it without
/// running skips the rest of the chain (a short-circuit). A wrapper that
/// means to run the rest of the chain again — a retry — says so by taking a
/// second handle first, with [`fork`](Next::fork).
#[must_use = "a Next that is neither run nor deliberately dropped usually means a forgotten `.run(input).await`"]
pub struct Next<In, Out> {
    view: Stages<In, Out>,
    pos: Pos,
}

impl<In, Out> fmt::Debug for Next<In, Out> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next")
            .field("hook", &self.view.meta().hook)
            .field("pos", &self.pos)
            .finish()
    }
}

impl<In: Send + 'static, Out: Send + 'static> Next<In, Out> {
    /// Runs the rest of the chain with `input` (possibly rewritten).
    ///
    /// Nothing runs until the returned future is first polled. A listener
    /// that returns this future itself (a tail call) adds no level to the
    /// chain: the future that called it goes on to the next listener in the
    /// same loop, so a chain of any length of such listeners takes no more
    /// stack than one.
    #[inline]
    pub fn run(self, input: In) -> impl Future<Output = Out> + Send + Unpin + 'static {
        self.run_named(input)
    }

    /// [`run`](Self::run) with the future's type named, for the engine.
    #[inline]
    pub(crate) fn run_named(self, input: In) -> NextFuture<In, Out> {
        NextFuture {
            state: State::Start(Some(input)),
            view: Some(self.view),
            pos: self.pos,
        }
    }

    /// A second handle on the same rest of the chain, for a wrapper that runs
    /// it again: a retry runs one handle, looks at the output, and may run
    /// the other. Each run goes through every listener after this one and the
    /// default anew (a deadline wrapped inside the retry applies to each
    /// attempt; one wrapped outside it, to all of them).
    ///
    /// ```
    /// use tack_hook::Waterfall;
    ///
    /// // The default fails (returns `None`) on its first run only.
    /// let runs = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    /// let counted = runs.clone();
    /// let hook = Waterfall::new("demo/flaky", move |x: u32| {
    ///     let run = counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ///     async move { (run > 0).then_some(x) }
    /// });
    /// let _kept = hook.tap("retry-once", |x, next| async move {
    ///     let again = next.fork();
    ///     match next.run(x).await {
    ///         None => again.run(x).await,
    ///         answered => answered,
    ///     }
    /// });
    /// # futures::executor::block_on(async {
    /// assert_eq!(hook.dispatch(None, 7).await.unwrap(), Some(7));
    /// # });
    /// assert_eq!(runs.load(std::sync::atomic::Ordering::Relaxed), 2);
    /// ```
    pub fn fork(&self) -> Self {
        Self {
            view: self.view.clone(),
            pos: self.pos,
        }
    }

    /// The hook point this chain belongs to.
    pub fn hook_name(&self) -> &'static str {
        self.view.meta().hook
    }
}

/// The future returned by [`Next::run`]: the output of the rest of the chain.
#[must_use = "futures do nothing unless awaited"]
pub(crate) struct NextFuture<In, Out> {
    state: State<In, Out>,
    /// Always present; `None` only in what is left of a future a listener
    /// returned once its parts are moved on (it holds nothing, and is
    /// forgotten).
    view: Option<Stages<In, Out>>,
    pos: Pos,
}

// The input is only ever moved out, never pinned.
impl<In, Out> Unpin for NextFuture<In, Out> {}

impl<In, Out> fmt::Debug for NextFuture<In, Out> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NextFuture")
            .field("hook", &self.view().meta().hook)
            .field("pos", &self.pos)
            .finish_non_exhaustive()
    }
}

/// How the first poll of a [`NextFuture`] got on.
enum Started<In, Out> {
    /// The future of the listener at this position (or, past the last, of
    /// the asynchronous default), to poll.
    Body(Pooled<Out>, Pos),
    /// The synchronous default's output (the position is past the last
    /// listener).
    Ready(Out, Pos),
    /// A listener returned a `NextFuture` of another dispatch, or one
    /// already polled: this future becomes it.
    Other(NextFuture<In, Out>),
}

impl<In, Out> NextFuture<In, Out> {
    /// The listeners this future runs.
    #[inline]
    fn view(&self) -> &Stages<In, Out> {
        match &self.view {
            Some(view) => view,
            None => {
                unreachable!(
                    "only a returned future whose parts moved on has no view, and it is forgotten"
                )
            }
        }
    }

    /// Moves this future out, leaving an empty one that holds nothing.
    fn take(&mut self) -> Self {
        Self {
            state: std::mem::replace(&mut self.state, State::Start(None)),
            view: self.view.take(),
            pos: self.pos,
        }
    }
}

impl<In: 'static, Out: 'static> NextFuture<In, Out> {
    /// Calls the listeners from this future's position with `input`, one
    /// after the other while each returns `next.run(..)` itself (a tail
    /// call), up to the first that returns a future of its own, or the
    /// default.
    ///
    /// A loop, not nested calls: the stack does not grow with the chain.
    /// Listeners are borrowed from this future's view while one handle on
    /// it goes into each listener's [`Next`] and comes back in the future
    /// the listener returns, so a run of tail calls clones the view once.
    fn start(&self, input: In) -> Started<In, Out> {
        let anchor = self.view();
        let lists = anchor.entries.lists();
        let mut walk = Walk {
            input: Some(input),
            view: None,
            pos: self.pos,
        };
        let mut witness = Witness::new(anchor, self.pos);
        loop {
            let pos = walk.pos;
            witness.pos = pos;
            let Some((_, listener, after)) = lists.at(pos) else {
                let Some(input) = walk.input.take() else {
                    unreachable!("a walk holds its input until a listener is called")
                };
                let started = match &anchor.meta().default {
                    DefaultFn::Async(default) => Started::Body(default(input), pos),
                    DefaultFn::Sync(default) => Started::Ready(default(input), pos),
                };
                witness.disarm();
                return started;
            };
            if walk.view.is_none() {
                walk.view = Some(anchor.clone());
            }
            walk.pos = after;
            match listener.call_erased(&mut walk) {
                Step::Tail if walk.view.as_ref().is_some_and(|v| v.same_as(anchor)) => {}
                Step::Tail => {
                    witness.disarm();
                    let (input, Next { view, pos }) = walk.take();
                    return Started::Other(NextFuture {
                        state: State::Start(Some(input)),
                        view: Some(view),
                        pos,
                    });
                }
                Step::Other(other) => {
                    witness.disarm();
                    return Started::Other(other);
                }
                Step::Pooled(body) => {
                    witness.disarm();
                    return Started::Body(body, pos);
                }
            }
        }
    }
}

impl<In: 'static, Out: 'static> Future for NextFuture<In, Out> {
    type Output = Out;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Out> {
        let this = self.get_mut();
        let mut polled = loop {
            match &mut this.state {
                State::Running(body) => {
                    let Some(view) = &this.view else {
                        unreachable!("a running future has its view")
                    };
                    let witness = Witness::new(view, this.pos);
                    let polled = Pin::new(body).poll(cx);
                    witness.disarm();
                    break polled;
                }
                State::Start(input) => {
                    let Some(input) = input.take() else {
                        panic!("a waterfall NextFuture was polled after it completed")
                    };
                    match this.start(input) {
                        Started::Ready(out, pos) => {
                            this.pos = pos;
                            break Poll::Ready(out);
                        }
                        Started::Body(body, pos) => {
                            this.pos = pos;
                            this.state = State::Running(body);
                        }
                        Started::Other(other) => *this = other,
                    }
                }
            }
        };
        // Stamped where it is (an output moved out and back at every level
        // of a chain is copied at every level).
        if let Poll::Ready(out) = &mut polled
            && let Some(slot_of) = this.view().meta().provenance
            && let Some(slot) = slot_of(out)
            && slot.is_none()
        {
            *slot = Some(Provenance {
                hook: this.view().meta().hook.into(),
                listener: listener_at(this.view(), this.pos),
            });
        }
        polled
    }
}

/// The future returned by [`Waterfall::dispatch`].
#[must_use = "futures do nothing unless awaited"]
pub struct Dispatch<In, Out> {
    hook: &'static str,
    state: DispatchState<In, Out>,
}

enum DispatchState<In, Out> {
    Start { view: Stages<In, Out>, input: In },
    Running(NextFuture<In, Out>),
    Done,
}

// `In` is only ever moved out of the state, never pinned, so the dispatch is
// `Unpin` whatever `In` is.
impl<In, Out> Unpin for Dispatch<In, Out> {}

impl<In, Out> fmt::Debug for Dispatch<In, Out> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            DispatchState::Start { .. } => "start",
            DispatchState::Running(_) => "running",
            DispatchState::Done => "done",
        };
        f.debug_struct("Dispatch")
            .field("hook", &self.hook)
            .field("state", &state)
            .finish()
    }
}

fn hook_error(hook: &'static str, culprit: Option<Option<Arc<str>>>, message: String) -> HookError {
    tracing::error!(hook, %message, "hook listener panicked; the dispatch fails closed");
    match culprit {
        Some(Some(listener)) => HookError::ListenerPanicked {
            hook,
            listener,
            message,
        },
        _ => HookError::DefaultPanicked { hook, message },
    }
}

impl<In: Send + 'static, Out: Send + 'static> Future for Dispatch<In, Out> {
    type Output = Result<Out, HookError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let hook = this.hook;
        // Whatever is in the slot belongs to no live dispatch.
        let _ = take_culprit();
        let polled = match std::mem::replace(&mut this.state, DispatchState::Done) {
            DispatchState::Start { view, input } => catch_unwind(AssertUnwindSafe(|| {
                let mut fut = NextFuture {
                    state: State::Start(Some(input)),
                    view: Some(view),
                    pos: Pos::default(),
                };
                let polled = Pin::new(&mut fut).poll(cx);
                (fut, polled)
            })),
            DispatchState::Running(mut fut) => catch_unwind(AssertUnwindSafe(|| {
                let polled = Pin::new(&mut fut).poll(cx);
                (fut, polled)
            })),
            DispatchState::Done => panic!("a waterfall Dispatch was polled after it completed"),
        };
        match polled {
            Err(payload) => Poll::Ready(Err(hook_error(
                hook,
                take_culprit(),
                panic_message(&*payload),
            ))),
            Ok((fut, polled)) => {
                if let Some(culprit) = take_culprit() {
                    // A listener caught a panic from further in and carried on:
                    // the failure still stands.
                    return Poll::Ready(Err(hook_error(
                        hook,
                        Some(culprit),
                        "the panic was caught by an outer listener, which is not allowed to hide it"
                            .to_owned(),
                    )));
                }
                match polled {
                    Poll::Ready(out) => Poll::Ready(Ok(out)),
                    Poll::Pending => {
                        this.state = DispatchState::Running(fut);
                        Poll::Pending
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    /// The future of a chain's first [`Next`], polled once: the default
    /// waits once, so it is left where the chain waits.
    fn polled_once(hook: &Waterfall<u32, u32>) -> NextFuture<u32, u32> {
        let mut fut = Next {
            view: hook.inner.list.view(None),
            pos: Pos::default(),
        }
        .run_named(1);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(Pin::new(&mut fut).poll(&mut cx).is_pending());
        fut
    }

    #[test]
    fn a_tail_listener_adds_no_level_and_a_boxed_one_does() {
        let waits = |x| async move {
            futures::pending!();
            x
        };
        let hook: Waterfall<u32, u32> = Waterfall::new("unit/tail", waits);
        let _tail = hook.tap("tail", |x, next| next.run(x + 1));
        let fut = polled_once(&hook);
        assert_eq!(
            listener_at(fut.view(), fut.pos),
            None,
            "the tail listener's future is the default's"
        );

        let hook: Waterfall<u32, u32> = Waterfall::new("unit/boxed", waits);
        let _boxed = hook.tap("boxed", |x, next| async move { next.run(x).await });
        let fut = polled_once(&hook);
        assert_eq!(listener_at(fut.view(), fut.pos).as_deref(), Some("boxed"));
    }

    /// A run of tail calls holds one handle on the dispatch's view, however
    /// long: counted by the innermost listener, while every listener of
    /// the run is still being called.
    #[test]
    fn a_run_of_tail_calls_holds_one_handle_on_the_view() {
        use crate::Order;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let handles_at_innermost = |tails: usize| {
            let hook: Waterfall<u32, u32> = Waterfall::new_sync("unit/handles", |x| x);
            let seen = Arc::new(AtomicUsize::new(0));
            let counted = seen.clone();
            let mut keep: Vec<Disposer> = (0..tails)
                .map(|_| hook.tap("tail", |x, next| next.run(x)))
                .collect();
            keep.push(
                hook.tap_with("innermost", Order::LATE, move |x, next: Next<u32, u32>| {
                    counted.store(next.view.holders(), Ordering::Relaxed);
                    next.run(x)
                })
                .unwrap(),
            );
            block_on(hook.dispatch(None, 0)).expect("no panic");
            drop(keep);
            seen.load(Ordering::Relaxed)
        };
        let one = handles_at_innermost(1);
        assert_eq!(handles_at_innermost(20), one);
        assert_eq!(handles_at_innermost(300), one, "past the flat list too");
    }

    /// A listener may return the future of a `Next` it kept from an
    /// earlier dispatch: that dispatch's rest of the chain runs (its
    /// snapshot), not the current one's.
    #[test]
    fn a_tail_call_into_a_kept_next_runs_that_chain() {
        use crate::Order;
        use std::sync::Mutex;

        type Log = Vec<&'static str>;
        let hook: Waterfall<Log, Log> = Waterfall::new_sync("unit/kept", |log| log);
        let kept: Arc<Mutex<Option<Next<Log, Log>>>> = Arc::default();
        let stash = kept.clone();
        let _outer = hook
            .tap_with(
                "outer",
                Order::EARLY,
                move |mut log: Log, next: Next<Log, Log>| {
                    log.push("outer");
                    let mut stash = stash.lock().expect("not poisoned");
                    match stash.take() {
                        Some(earlier) => earlier.run(log),
                        None => {
                            *stash = Some(next.fork());
                            next.run(log)
                        }
                    }
                },
            )
            .unwrap();
        let inner = |name: &'static str| {
            move |mut log: Log, next: Next<Log, Log>| {
                log.push(name);
                next.run(log)
            }
        };
        let _first = hook.tap("first", inner("first"));
        assert_eq!(
            block_on(hook.dispatch(None, Vec::new())).unwrap(),
            ["outer", "first"]
        );
        let _second = hook.tap("second", inner("second"));
        assert_eq!(
            block_on(hook.dispatch(None, Vec::new())).unwrap(),
            ["outer", "first"],
            "the kept chain, from before `second`"
        );
        assert_eq!(
            block_on(hook.dispatch(None, Vec::new())).unwrap(),
            ["outer", "first", "second"]
        );
    }

    /// What a listener returns is taken apart without being dropped (its
    /// parts move on): tail calls and a future polled before it was
    /// returned leave no copy of the input and no handle on the view behind.
    #[test]
    fn returned_futures_leave_nothing_behind() {
        let hook: Waterfall<Arc<()>, ()> = Waterfall::new("unit/leaks", |x: Arc<()>| async move {
            futures::pending!();
            drop(x);
        });
        let _tails: Vec<Disposer> = (0..3)
            .map(|_| hook.tap("tail", |x, next: Next<Arc<()>, ()>| next.run(x)))
            .collect();
        let _eager = hook.tap("eager", |x, next: Next<Arc<()>, ()>| {
            let mut fut = next.run(x);
            let mut cx = Context::from_waker(std::task::Waker::noop());
            assert!(Pin::new(&mut fut).poll(&mut cx).is_pending());
            fut
        });
        let input = Arc::new(());
        let before = hook.inner.list.view(None).holders();
        for _ in 0..10 {
            block_on(hook.dispatch(None, input.clone())).expect("no panic");
        }
        assert_eq!(Arc::strong_count(&input), 1, "no copy of the input is kept");
        assert_eq!(
            hook.inner.list.view(None).holders(),
            before,
            "no handle on the view is kept"
        );
    }

    /// A listener may poll the future of `next.run(..)` before returning
    /// it: the chain goes on from where that poll left it.
    #[test]
    fn a_returned_future_polled_already_goes_on() {
        let hook: Waterfall<u32, u32> = Waterfall::new("unit/polled", |x| async move {
            futures::pending!();
            x * 10
        });
        let _eager = hook.tap("eager", |x, next: Next<u32, u32>| {
            let mut fut = next.run(x + 1);
            let mut cx = Context::from_waker(std::task::Waker::noop());
            assert!(Pin::new(&mut fut).poll(&mut cx).is_pending());
            fut
        });
        let _plus = hook.tap("plus", |x, next: Next<u32, u32>| next.run(x + 2));
        assert_eq!(block_on(hook.dispatch(None, 1)).unwrap(), 40);
    }

    /// A chain far longer than a thread's stack could hold as nested calls
    /// (30,000 listeners that return `next.run(..)` themselves, on a 2 MiB
    /// thread, after an async one) runs to the end in order.
    #[test]
    fn a_chain_of_30000_listeners_does_not_overflow_the_stack() {
        let hook: Waterfall<u64, u64> = Waterfall::new("unit/deep", |x| async move { x });
        let keep: Vec<Disposer> = (0..30_000u64)
            .map(|i| {
                if i == 0 {
                    hook.tap("async", |x: u64, next| async move { next.run(x).await })
                } else {
                    hook.tap("tail", |x: u64, next| next.run(x + 1))
                }
            })
            .collect();
        let expected = 30_000 - 1;
        let out = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || block_on(hook.dispatch(None, 0)))
            .expect("spawns")
            .join()
            .expect("no overflow")
            .expect("no panic");
        assert_eq!(out, expected);
        drop(keep);
    }

    #[test]
    fn a_panic_inside_a_tail_listener_is_attributed_to_it() {
        let hook: Waterfall<u32, u32> = Waterfall::new("unit/tail-panic", |x| async move { x });
        let _outer = hook.tap("outer", |x, next| next.run(x));
        let _inner = hook.tap("inner", |x: u32, next| {
            assert!(x < 10, "too big");
            next.run(x)
        });
        let err = block_on(hook.dispatch(None, 11)).expect_err("the listener panics");
        assert_eq!(err.listener(), Some("inner"));
        assert_eq!(block_on(hook.dispatch(None, 1)).expect("no panic"), 1);
        assert_eq!(take_culprit(), None, "the slot is left empty");
    }

    #[test]
    fn past_the_listeners_is_the_default() {
        let hook: Waterfall<u32, u32> = Waterfall::new("unit/listener", |x| async move { x });
        let _a = hook.tap("a", |x, next| next.run(x));
        let view = hook.inner.list.view(None);
        assert_eq!(listener_at(&view, Pos::default()).as_deref(), Some("a"));
        let (_, _, past) = view.entries.at(Pos::default()).expect("one listener");
        assert_eq!(listener_at(&view, past), None);
    }

    /// A dispatch runs the listeners of the moment it started: one disposed
    /// while it is suspended mid-chain still sees the call through, and one
    /// registered meanwhile does not see it; the next dispatch sees the change.
    #[test]
    fn a_dispatch_is_a_snapshot_of_its_start() {
        use crate::{AgentId, Order};
        use futures::channel::oneshot;
        use std::sync::Mutex;
        use std::task::Waker;

        type Log = Vec<&'static str>;
        let hook: Waterfall<Log, Log> = Waterfall::new("unit/snapshot", |log| async move { log });
        let agent = AgentId::new("a");
        let (go, wait) = oneshot::channel::<()>();
        let wait = Arc::new(Mutex::new(Some(wait)));
        let _outer = hook
            .tap_with("outer", Order::EARLY, move |mut log: Log, next| {
                let wait = wait.lock().unwrap().take();
                async move {
                    if let Some(wait) = wait {
                        wait.await.unwrap();
                    }
                    log.push("outer");
                    next.run(log).await
                }
            })
            .unwrap();
        let victim = hook.for_agent(&agent).tap("victim", |mut log: Log, next| {
            log.push("victim");
            next.run(log)
        });
        let mut dispatch = hook.dispatch(Some(&agent), Vec::new());
        let mut cx = Context::from_waker(Waker::noop());
        assert!(
            Pin::new(&mut dispatch).poll(&mut cx).is_pending(),
            "suspended in `outer`"
        );

        victim.dispose();
        let newcomer = |name: &'static str| {
            move |mut log: Log, next: Next<Log, Log>| {
                log.push(name);
                next.run(log)
            }
        };
        let _global = hook.tap("new-global", newcomer("new-global"));
        let _scoped = hook
            .for_agent(&agent)
            .tap("new-scoped", newcomer("new-scoped"));
        go.send(()).unwrap();
        assert_eq!(
            futures::executor::block_on(dispatch).unwrap(),
            ["outer", "victim"]
        );
        assert_eq!(
            futures::executor::block_on(hook.dispatch(Some(&agent), Vec::new())).unwrap(),
            ["outer", "new-global", "new-scoped"]
        );
    }

    /// Few global listeners are walked by index, many by searching the
    /// tree: both walks give the chain order (priority descending, then
    /// registration order), merged with an agent's own listeners.
    #[test]
    fn the_flat_and_the_tree_walks_give_the_same_order() {
        use crate::view::FLAT_MAX;
        use crate::{AgentId, Order};

        type Log = Vec<Arc<str>>;
        let agent = AgentId::new("a");
        for globals in [3, FLAT_MAX, FLAT_MAX + 1, 3 * FLAT_MAX] {
            let hook: Waterfall<Log, Log> = Waterfall::new("unit/walk", |log| async move { log });
            let mut keep = Vec::new();
            // (priority, registration, name, global?)
            let mut registered = Vec::new();
            for i in 0..globals + 10 {
                let name: Arc<str> = format!("l{i}").into();
                // Priorities that interleave the registration order.
                let priority = i32::try_from(i * 7 % 5).unwrap() - 2;
                let scoped = if i >= globals {
                    hook.for_agent(&agent)
                } else {
                    hook.clone()
                };
                registered.push((priority, i, name.clone(), i < globals));
                let logged = name.clone();
                let listener = move |mut log: Log, next: Next<Log, Log>| {
                    log.push(logged.clone());
                    next.run(log)
                };
                keep.push(
                    scoped
                        .tap_with(name, Order::ranked(priority), listener)
                        .unwrap(),
                );
            }
            registered.sort_by_key(|(priority, i, _, _)| (std::cmp::Reverse(*priority), *i));
            let expected: Log = registered.iter().map(|r| r.2.clone()).collect();
            let ran = block_on(hook.dispatch(Some(&agent), Vec::new())).unwrap();
            assert_eq!(ran, expected, "{globals} global listeners");
            let expected: Log = registered
                .iter()
                .filter(|r| r.3)
                .map(|r| r.2.clone())
                .collect();
            let global_only = block_on(hook.dispatch(None, Vec::new())).unwrap();
            assert_eq!(global_only, expected, "{globals} global listeners");
            assert_eq!(global_only.len(), globals);
        }
    }

    /// `owned_by` and `for_agent` compose in either order: the listener is
    /// the agent's only, and goes when the footprint is disposed; a scoped
    /// handle scoped again takes the new agent.
    #[test]
    fn owned_by_and_for_agent_compose_in_either_order() {
        use crate::{AgentId, Disposables, Observer};

        let hook: Waterfall<u32, u32> = Waterfall::new_sync("unit/compose", |x| x);
        let (a, b) = (AgentId::new("a"), AgentId::new("b"));
        let footprint = Arc::new(Disposables::new());
        let _ = hook
            .owned_by(footprint.clone())
            .for_agent(&a)
            .tap("owned-then-scoped", |x, next| next.run(x + 1));
        let _ = hook
            .for_agent(&a)
            .owned_by(footprint.clone())
            .tap("scoped-then-owned", |x, next| next.run(x * 10));
        let b_own = hook.for_agent(&b).tap("b-own", |x, next| next.run(x + 100));
        assert_eq!(
            hook.listener_names(Some(&a)),
            [
                Arc::from("owned-then-scoped"),
                Arc::from("scoped-then-owned")
            ]
        );
        assert_eq!(hook.listener_names(Some(&b)), [Arc::from("b-own")]);
        assert!(hook.listener_names(None).is_empty());
        assert_eq!(block_on(hook.dispatch(Some(&a), 1)).unwrap(), 20);
        assert_eq!(block_on(hook.dispatch(None, 1)).unwrap(), 1);

        footprint.dispose();
        assert!(hook.listener_names(Some(&a)).is_empty(), "both were owned");
        assert_eq!(hook.listener_names(Some(&b)), [Arc::from("b-own")]);

        let _moved = hook
            .for_agent(&a)
            .for_agent(&b)
            .tap("moved", |x, next| next.run(x));
        assert_eq!(
            hook.listener_names(Some(&b)),
            [Arc::from("b-own"), Arc::from("moved")]
        );
        assert!(hook.listener_names(Some(&a)).is_empty());
        b_own.dispose();

        let observer: Observer<u32> = Observer::new("unit/compose-observer");
        let footprint = Arc::new(Disposables::new());
        let _ = observer
            .owned_by(footprint.clone())
            .for_agent(&a)
            .tap("x", |_| {});
        let _ = observer
            .for_agent(&a)
            .owned_by(footprint.clone())
            .tap("y", |_| {});
        assert_eq!(observer.notify(Some(&a), &Arc::new(0)).reached, 2);
        assert_eq!(observer.notify(Some(&b), &Arc::new(0)).reached, 0);
        footprint.dispose();
        assert_eq!(observer.listener_count(), 0);
    }

    #[test]
    #[should_panic(expected = "fresh hook point")]
    fn provenance_cannot_be_set_on_a_shared_hook() {
        let hook: Waterfall<u32, u32> = Waterfall::new("unit/late", |x| async move { x });
        let _clone = hook.clone();
        let _ = hook.with_provenance(|_| None);
    }

    /// A listener's boxed future holds a [`Next`] and, while it waits, a
    /// [`NextFuture`]; keeping both small keeps the box of a no-op async
    /// listener within the allocator's cheapest size classes.
    #[test]
    fn chain_handles_stay_small() {
        assert_eq!(std::mem::size_of::<Pos>(), 16);
        assert!(std::mem::size_of::<Next<u64, u64>>() <= 40);
        assert!(std::mem::size_of::<NextFuture<u64, u64>>() <= 64);
    }
}
