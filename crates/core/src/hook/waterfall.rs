//! Waterfall hook points: a chain of around-listeners ending in a default.

use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use futures::future::BoxFuture;

use super::listeners::{ListenerList, Snapshot};
use super::{AgentId, Decider, Disposer, HookError, ListenerSpec, Provenance, panic_message};

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
/// use tack_core::hook::{Next, Waterfall, WaterfallListener};
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

/// The object-safe form every listener is stored as.
pub(crate) trait ErasedListener<In, Out>: Send + Sync + 'static {
    fn call_erased(&self, input: In, next: Next<In, Out>) -> BoxFuture<'static, Out>;
}

struct ClosureListener<F>(F);

impl<In, Out, F, Fut> ErasedListener<In, Out> for ClosureListener<F>
where
    F: Fn(In, Next<In, Out>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Out> + Send + 'static,
{
    #[inline]
    fn call_erased(&self, input: In, next: Next<In, Out>) -> BoxFuture<'static, Out> {
        Box::pin((self.0)(input, next))
    }
}

struct TypedListener<L>(Arc<L>);

impl<In, Out, L> ErasedListener<In, Out> for TypedListener<L>
where
    In: Send + 'static,
    Out: Send + 'static,
    L: WaterfallListener<In, Out>,
{
    fn call_erased(&self, input: In, next: Next<In, Out>) -> BoxFuture<'static, Out> {
        // The typed future borrows the listener; owning an `Arc` of it makes the
        // boxed future `'static` without asking the author for `'static` futures.
        let listener = self.0.clone();
        Box::pin(async move { listener.call(input, next).await })
    }
}

type DefaultFn<In, Out> = dyn Fn(In) -> BoxFuture<'static, Out> + Send + Sync;
type ProvenanceSlot<Out> = fn(&mut Out) -> Option<&mut Option<Provenance>>;

struct Inner<In, Out> {
    name: &'static str,
    list: Arc<ListenerList<dyn ErasedListener<In, Out>>>,
    default: Box<DefaultFn<In, Out>>,
    provenance: Option<ProvenanceSlot<Out>>,
}

/// A waterfall hook point: listeners form a chain around the hook's default.
///
/// ```text
///  dispatch(input)
///      │
///      ▼
///  ┌─ priority 100, registered 1st ─┐   outermost: sees the input first,
///  │ ┌─ priority 100, registered 2nd┐│   the output last
///  │ │ ┌─ priority 0 ──────────────┐ ││
///  │ │ │ ┌─ priority -5 ──────────┐│ ││
///  │ │ │ │        default         ││ ││   allow / the tool body / identity
///  │ │ │ └────────────────────────┘│ ││
///  │ │ └───────────────────────────┘ ││
///  │ └───────────────────────────────┘│
///  └──────────────────────────────────┘
/// ```
///
/// * **Order**: higher [`Priority`](super::Priority) first; equal priorities in
///   registration order (first registered is outermost).
/// * **Scope**: a dispatch for agent A runs the global listeners and A's, in one
///   merged order, never another agent's.
/// * **Snapshot**: the listener list is read once when the dispatch starts;
///   registering or disposing during it changes later dispatches only.
/// * **Failure**: a panic anywhere in the chain makes the dispatch return
///   [`HookError`] naming the listener (or the default) that panicked. It never
///   falls back to the default, and an outer listener cannot hide it.
///
/// `Waterfall` is a cheap handle (`Clone` shares the same hook point).
///
/// ```
/// use tack_core::hook::{ListenerSpec, Priority, Waterfall};
///
/// # futures::executor::block_on(async {
/// let hook: Waterfall<String, String> = Waterfall::new("demo/greet", |name| async move {
///     format!("hello {name}")
/// });
/// // Rewrite the input, then delegate.
/// let _shout = hook.tap("upper", |name: String, next| next.run(name.to_uppercase()));
/// // Transform the output; runs outside `upper` because of its priority.
/// let _bang = hook.tap(
///     ListenerSpec::new("bang").with_priority(Priority::EARLY),
///     |name, next| async move { format!("{}!", next.run(name).await) },
/// );
/// assert_eq!(hook.dispatch(None, "ada".into()).await.unwrap(), "hello ADA!");
/// # });
/// ```
pub struct Waterfall<In, Out> {
    inner: Arc<Inner<In, Out>>,
}

impl<In, Out> Clone for Waterfall<In, Out> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<In, Out> fmt::Debug for Waterfall<In, Out> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Waterfall")
            .field("name", &self.inner.name)
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
        Self {
            inner: Arc::new(Inner {
                name,
                list: ListenerList::new(),
                default: Box::new(move |input| Box::pin(default(input))),
                provenance: None,
            }),
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
    /// When the hook handle has already been cloned (the setting would not reach
    /// the clones).
    pub fn with_provenance(mut self, slot: ProvenanceSlot<Out>) -> Self {
        let inner = Arc::get_mut(&mut self.inner)
            .expect("with_provenance is called on a fresh hook point, before it is cloned");
        inner.provenance = Some(slot);
        self
    }

    /// The hook point's name.
    pub fn name(&self) -> &'static str {
        self.inner.name
    }

    /// Registers a closure listener. The closure gets the input and a [`Next`];
    /// see [`WaterfallListener`] for what it may do with them.
    pub fn tap<F, Fut>(&self, spec: impl Into<ListenerSpec>, listener: F) -> Disposer
    where
        F: Fn(In, Next<In, Out>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Out> + Send + 'static,
    {
        self.inner
            .list
            .insert(spec.into(), Arc::new(ClosureListener(listener)))
    }

    /// Registers a typed listener.
    pub fn register<L>(&self, spec: impl Into<ListenerSpec>, listener: L) -> Disposer
    where
        L: WaterfallListener<In, Out>,
    {
        self.inner
            .list
            .insert(spec.into(), Arc::new(TypedListener(Arc::new(listener))))
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
        let chain = Arc::new(Chain {
            snapshot: self.inner.list.snapshot(),
            agent: agent.cloned(),
            hook: self.inner.clone(),
            culprit: OnceLock::new(),
        });
        Dispatch {
            state: DispatchState::Start {
                chain,
                input: Some(input),
            },
        }
    }

    /// Names of the listeners a dispatch for `agent` would run now, outermost first.
    pub fn listener_names(&self, agent: Option<&AgentId>) -> Vec<Arc<str>> {
        self.inner.list.names_for(agent)
    }

    /// How many listeners are registered, across every scope.
    pub fn listener_count(&self) -> usize {
        self.inner.list.len()
    }
}

/// The state of one dispatch, shared by every [`Next`] of its chain.
struct Chain<In, Out> {
    snapshot: Snapshot<dyn ErasedListener<In, Out>>,
    agent: Option<AgentId>,
    hook: Arc<Inner<In, Out>>,
    /// The innermost code that panicked first, recorded while the panic unwinds.
    culprit: OnceLock<Decider>,
}

impl<In, Out> Chain<In, Out> {
    fn decider(&self, at: Position) -> Decider {
        match at {
            Position::Listener(index) => self
                .snapshot
                .get(index)
                .map_or(Decider::Default, |e| Decider::Listener(e.name.clone())),
            Position::Default => Decider::Default,
        }
    }

    fn error(&self, payload: &(dyn std::any::Any + Send)) -> HookError {
        let message = panic_message(payload);
        tracing::error!(hook = self.hook.name, %message, "hook listener panicked");
        self.error_with(message)
    }

    fn error_with(&self, message: String) -> HookError {
        match self.culprit.get() {
            Some(Decider::Listener(name)) => HookError::ListenerPanicked {
                hook: self.hook.name,
                listener: name.clone(),
                message,
            },
            _ => HookError::DefaultPanicked {
                hook: self.hook.name,
                message,
            },
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Position {
    Listener(usize),
    Default,
}

/// Records who was running when a panic unwound through it. Innermost first:
/// the first witness dropped during unwinding wins the `OnceLock`.
struct Witness<'a, In, Out> {
    chain: &'a Chain<In, Out>,
    at: Position,
    armed: bool,
}

impl<'a, In, Out> Witness<'a, In, Out> {
    #[inline]
    fn new(chain: &'a Chain<In, Out>, at: Position) -> Self {
        Self {
            chain,
            at,
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
            let _ = self.chain.culprit.set(self.chain.decider(self.at));
        }
    }
}

/// The rest of a waterfall chain, handed to each listener.
///
/// Consumed by [`run`](Next::run): a listener can delegate at most once, and
/// the compiler enforces it. Dropping it without running skips the rest of the
/// chain (a short-circuit).
#[must_use = "a Next that is neither run nor deliberately dropped usually means a forgotten `.run(input).await`"]
pub struct Next<In, Out> {
    chain: Arc<Chain<In, Out>>,
    index: usize,
}

impl<In, Out> fmt::Debug for Next<In, Out> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next")
            .field("hook", &self.chain.hook.name)
            .field("index", &self.index)
            .finish()
    }
}

impl<In: Send + 'static, Out: Send + 'static> Next<In, Out> {
    /// Runs the rest of the chain with `input` (possibly rewritten).
    pub fn run(self, input: In) -> NextFuture<In, Out> {
        let Next { chain, mut index } = self;
        let agent = chain.agent.as_ref();
        let found = loop {
            match chain.snapshot.get(index) {
                Some(entry) if entry.scope.reaches(agent) => break Some(entry),
                Some(_) => index += 1,
                None => break None,
            }
        };
        let (inner, at) = match found {
            Some(entry) => {
                let at = Position::Listener(index);
                let witness = Witness::new(&chain, at);
                let next = Next {
                    chain: chain.clone(),
                    index: index + 1,
                };
                let fut = entry.listener.call_erased(input, next);
                witness.disarm();
                (fut, at)
            }
            None => {
                let witness = Witness::new(&chain, Position::Default);
                let fut = (chain.hook.default)(input);
                witness.disarm();
                (fut, Position::Default)
            }
        };
        NextFuture { inner, chain, at }
    }

    /// The hook point this chain belongs to.
    pub fn hook_name(&self) -> &'static str {
        self.chain.hook.name
    }

    /// The agent the dispatch was made for.
    pub fn agent(&self) -> Option<&AgentId> {
        self.chain.agent.as_ref()
    }
}

/// The future returned by [`Next::run`]: the output of the rest of the chain.
#[must_use = "futures do nothing unless awaited"]
pub struct NextFuture<In, Out> {
    inner: BoxFuture<'static, Out>,
    chain: Arc<Chain<In, Out>>,
    at: Position,
}

impl<In, Out> fmt::Debug for NextFuture<In, Out> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NextFuture")
            .field("hook", &self.chain.hook.name)
            .finish_non_exhaustive()
    }
}

impl<In, Out> Future for NextFuture<In, Out> {
    type Output = Out;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Out> {
        let this = self.get_mut();
        let witness = Witness::new(&this.chain, this.at);
        let polled = this.inner.as_mut().poll(cx);
        witness.disarm();
        match polled {
            Poll::Ready(mut out) => {
                if let Some(slot_of) = this.chain.hook.provenance
                    && let Some(slot) = slot_of(&mut out)
                    && slot.is_none()
                {
                    *slot = Some(Provenance {
                        hook: this.chain.hook.name.into(),
                        decider: this.chain.decider(this.at),
                    });
                }
                Poll::Ready(out)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The future returned by [`Waterfall::dispatch`].
#[must_use = "futures do nothing unless awaited"]
pub struct Dispatch<In, Out> {
    state: DispatchState<In, Out>,
}

enum DispatchState<In, Out> {
    Start {
        chain: Arc<Chain<In, Out>>,
        input: Option<In>,
    },
    Running {
        chain: Arc<Chain<In, Out>>,
        fut: NextFuture<In, Out>,
    },
    Done,
}

// `In` is only ever moved out of its `Option`, never pinned, so the dispatch is
// `Unpin` whatever `In` is.
impl<In, Out> Unpin for Dispatch<In, Out> {}

impl<In, Out> fmt::Debug for Dispatch<In, Out> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            DispatchState::Start { .. } => "start",
            DispatchState::Running { .. } => "running",
            DispatchState::Done => "done",
        };
        f.debug_struct("Dispatch").field("state", &state).finish()
    }
}

impl<In: Send + 'static, Out: Send + 'static> Future for Dispatch<In, Out> {
    type Output = Result<Out, HookError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        loop {
            match &mut this.state {
                DispatchState::Start { chain, input } => {
                    let chain = chain.clone();
                    let Some(input) = input.take() else {
                        this.state = DispatchState::Done;
                        continue;
                    };
                    let first = Next {
                        chain: chain.clone(),
                        index: 0,
                    };
                    match catch_unwind(AssertUnwindSafe(|| first.run(input))) {
                        Ok(fut) => this.state = DispatchState::Running { chain, fut },
                        Err(payload) => {
                            this.state = DispatchState::Done;
                            return Poll::Ready(Err(chain.error(&*payload)));
                        }
                    }
                }
                DispatchState::Running { chain, fut } => {
                    let polled = catch_unwind(AssertUnwindSafe(|| Pin::new(&mut *fut).poll(cx)));
                    let result = match polled {
                        Ok(Poll::Pending) => return Poll::Pending,
                        Ok(Poll::Ready(out)) => match chain.culprit.get() {
                            // A listener caught a panic from further in and returned
                            // anyway: the failure still stands.
                            Some(_) => Err(chain.error_with(
                                "the panic was caught by an outer listener, which is not allowed to hide it"
                                    .to_owned(),
                            )),
                            None => Ok(out),
                        },
                        Err(payload) => Err(chain.error(&*payload)),
                    };
                    this.state = DispatchState::Done;
                    return Poll::Ready(result);
                }
                DispatchState::Done => {
                    panic!("a waterfall Dispatch was polled after it completed")
                }
            }
        }
    }
}
