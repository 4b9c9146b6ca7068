//! Guards: monotonic checks that can only pass or deny. Plugins add them
//! through `ToolHooks::guard`/`guard_async`; the list and its run are the
//! host's (`tack_core::host::Guards`).

use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;

use crate::hook::{
    AgentId, Disposables, Disposer, HookError, ListenerList, Order, Provenance, Scope,
    panic_message,
};
use crate::tool::ToolExecution;

/// What a guard answers: `Ok(())` lets the call continue (to the next
/// guard, then to execution), `Err(reason)` stops it.
type GuardResult = Result<(), String>;

trait ErasedGuard: Send + Sync + 'static {
    fn check_erased<'a>(&'a self, execution: &'a Arc<ToolExecution>) -> Check<'a>;
}

/// What checking one guard gave: a synchronous guard's answer at once (no
/// future, no allocation), or an asynchronous guard's future.
enum Check<'a> {
    Ready(GuardResult),
    Boxed(BoxFuture<'a, GuardResult>),
}

struct AsyncClosureGuard<F>(F);

impl<F, Fut> ErasedGuard for AsyncClosureGuard<F>
where
    F: Fn(Arc<ToolExecution>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    fn check_erased<'a>(&'a self, execution: &'a Arc<ToolExecution>) -> Check<'a> {
        Check::Boxed(Box::pin((self.0)(execution.clone())))
    }
}

struct SyncClosureGuard<F>(F);

impl<F> ErasedGuard for SyncClosureGuard<F>
where
    F: Fn(&ToolExecution) -> Result<(), String> + Send + Sync + 'static,
{
    fn check_erased<'a>(&'a self, execution: &'a Arc<ToolExecution>) -> Check<'a> {
        Check::Ready((self.0)(execution))
    }
}

/// What a run of the guards concluded. Closed: the pipeline matches it
/// completely, with no arm for an outcome it does not know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GuardOutcome {
    /// Every guard passed.
    Passed,
    /// A guard denied; later guards did not run.
    Denied {
        /// The guard's reason.
        reason: String,
        /// `tools/guard › listener <name>`.
        provenance: Provenance,
    },
}

/// The guard list of a host (what
/// [`ToolHooks::guards`](crate::hooks::ToolHooks::guards) gives the
/// pipeline), scoped like listeners: the global guards run first, then the
/// calling agent's, each layer in registration order.
///
/// Plugins add guards through [`ToolHooks::guard`](crate::hooks::ToolHooks::guard)
/// (synchronous) and [`ToolHooks::guard_async`](crate::hooks::ToolHooks::guard_async);
/// a host runs them ([`run`](Self::run)) after `tools/pre-execute` (and
/// approval). A guard answers `Result<(), String>`: `Ok(())` lets the call
/// continue, `Err(reason)` stops it, and nothing a later guard answers can
/// undo that.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use tack_core::hooks::ToolHooks;
/// use tack_core::host::{GuardOutcome, NewExecutionToken, NewToolExecution};
/// use tack_core::tool::{CallId, ExecutionToken, Tier, ToolExecution, ToolName};
///
/// let hooks = ToolHooks::new();
/// let _g = hooks.guard("no-rm", |exec| {
///     if exec.arg_str("command").is_some_and(|c| c.contains("rm -rf")) {
///         Err("`rm -rf` is not allowed".into())
///     } else {
///         Ok(())
///     }
/// });
/// let exec = Arc::new(ToolExecution::new(
///     CallId::from("c1"), ToolName::new("bash").unwrap(),
///     Arc::new(json!({"command": "rm -rf /"})), Tier::Executes,
///     ExecutionToken::issue(CallId::from("c1")),
/// ));
/// # futures::executor::block_on(async {
/// let outcome = hooks.guards().run(None, &exec).await.unwrap();
/// assert!(matches!(outcome, GuardOutcome::Denied { .. }));
/// # });
/// ```
#[derive(Clone)]
pub struct Guards {
    list: Arc<ListenerList<dyn ErasedGuard>>,
    /// The footprint additions made through this handle go into.
    owner: Option<Arc<Disposables>>,
    /// Whom additions made through this handle apply to.
    scope: Scope,
}

impl fmt::Debug for Guards {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guards")
            .field("guards", &self.list)
            .finish()
    }
}

impl Guards {
    /// The name guards report under in provenance and errors.
    pub const STAGE: &str = "tools/guard";

    /// An empty guard list.
    pub(crate) fn new() -> Self {
        Self {
            list: ListenerList::new(),
            owner: None,
            scope: Scope::Global,
        }
    }

    /// The same list, its additions also kept in `owner`.
    pub(crate) fn owned_by(&self, owner: Arc<Disposables>) -> Self {
        Self {
            owner: Some(owner),
            ..self.clone()
        }
    }

    /// The same list, its additions applying to `agent` only (what
    /// [`ToolHooks::for_agent`](crate::hooks::ToolHooks::for_agent) gives).
    pub(crate) fn for_agent(&self, agent: &AgentId) -> Self {
        Self {
            scope: Scope::Agent(agent.clone()),
            ..self.clone()
        }
    }

    /// Adds `guard` in its layer: guards are not reorderable, the global
    /// layer runs first, then the agent's, and within a layer registration
    /// order alone decides (every guard of a layer has the same rank).
    fn insert(&self, name: impl Into<Arc<str>>, guard: Arc<dyn ErasedGuard>) -> Disposer {
        let scope = self.scope.clone();
        let rank = match scope {
            Scope::Global => 1,
            _ => Order::NORMAL.rank(),
        };
        let disposer = self.list.insert_ranked(scope, name.into(), rank, guard);
        match &self.owner {
            Some(owner) => owner.hold(disposer),
            None => disposer,
        }
    }

    /// Adds an asynchronous guard at the end of its layer (what
    /// [`ToolHooks::guard_async`](crate::hooks::ToolHooks::guard_async) does).
    pub(crate) fn add_async<F, Fut>(&self, name: impl Into<Arc<str>>, guard: F) -> Disposer
    where
        F: Fn(Arc<ToolExecution>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), String>> + Send + 'static,
    {
        self.insert(name, Arc::new(AsyncClosureGuard(guard)))
    }

    /// Adds a synchronous guard at the end of its layer (what
    /// [`ToolHooks::guard`](crate::hooks::ToolHooks::guard) does).
    pub(crate) fn add_sync<F>(&self, name: impl Into<Arc<str>>, guard: F) -> Disposer
    where
        F: Fn(&ToolExecution) -> Result<(), String> + Send + Sync + 'static,
    {
        self.insert(name, Arc::new(SyncClosureGuard(guard)))
    }

    /// Runs the guards a dispatch for `agent` reaches — the global ones, then
    /// the agent's, each in registration order — stopping at the first
    /// denial. The list is snapshotted when the run starts.
    ///
    /// # Errors
    ///
    /// `HookError::ListenerPanicked` when a guard panics: the caller must fail
    /// the call closed.
    #[cfg(feature = "host")]
    pub async fn run(
        &self,
        agent: Option<&AgentId>,
        execution: &Arc<ToolExecution>,
    ) -> Result<GuardOutcome, HookError> {
        if self.list.is_empty() {
            // No guard anywhere: passed without reading the list.
            return Ok(GuardOutcome::Passed);
        }
        let view = self.list.view(agent);
        for (name, listener) in view.listeners() {
            // A panic while checking (a synchronous guard, or an asynchronous
            // one building or running its future) is contained alike.
            let checked = match catch_unwind(AssertUnwindSafe(|| listener.check_erased(execution)))
            {
                Ok(Check::Ready(answer)) => Ok(answer),
                Ok(Check::Boxed(future)) => AssertUnwindSafe(future).catch_unwind().await,
                Err(payload) => Err(payload),
            };
            match checked {
                Ok(Ok(())) => {}
                Ok(Err(reason)) => {
                    return Ok(GuardOutcome::Denied {
                        reason,
                        provenance: Provenance::listener(Guards::STAGE, name.clone()),
                    });
                }
                Err(payload) => {
                    let message = panic_message(&*payload);
                    tracing::error!(guard = &**name, %message, "guard panicked; failing closed");
                    return Err(HookError::ListenerPanicked {
                        hook: Guards::STAGE,
                        listener: name.clone(),
                        message,
                    });
                }
            }
        }
        Ok(GuardOutcome::Passed)
    }

    /// Names of the guards a dispatch for `agent` would run now, in order.
    pub fn names(&self, agent: Option<&AgentId>) -> Vec<Arc<str>> {
        self.list.names_for(agent)
    }

    /// Whether a dispatch for `agent` would run any guard now (what
    /// [`names`](Self::names) tells, without collecting them).
    pub fn has_listeners(&self, agent: Option<&AgentId>) -> bool {
        self.list.reaches_any(agent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::AgentId;

    #[test]
    fn has_listeners_follows_scope_and_disposal() {
        let guards = Guards::new();
        let a = AgentId::new("a");
        let b = AgentId::new("b");
        assert!(!guards.has_listeners(None));
        let scoped = guards.for_agent(&a).add_sync("only-a", |_| Ok(()));
        assert!(guards.has_listeners(Some(&a)));
        assert!(!guards.has_listeners(Some(&b)));
        assert!(!guards.has_listeners(None));
        let global = guards.add_sync("all", |_| Ok(()));
        assert!(guards.has_listeners(None) && guards.has_listeners(Some(&b)));
        global.dispose();
        scoped.dispose();
        assert!(!guards.has_listeners(Some(&a)));
        assert_eq!(guards.names(Some(&a)).len(), 0);
    }
}
