//! The bundle of tool hook points a host owns and plugins attach to.

use std::future::Future;
use std::sync::Arc;

use super::{CodeDispatchEvent, ExecuteOutput, ExecuteRequest, ExecutionRecord, PostDecision};
use crate::hook::{AgentId, Disposables, Disposer, Observer, Waterfall};
use crate::policy::PreDecision;
use crate::policy::guard::Guards;
use crate::tool::ToolExecution;

/// `tools/pre-execute`: allow, ask or deny a valid call before it runs.
pub(crate) type PreExecuteHook = Waterfall<Arc<ToolExecution>, PreDecision>;
/// `tools/execute`: wrappers around the body (timeouts live here).
pub(crate) type ExecuteHook = Waterfall<ExecuteRequest, ExecuteOutput>;
/// `tools/post-execute`: inspect or replace an outcome.
pub(crate) type PostExecuteHook = Waterfall<ExecutionRecord, PostDecision>;
/// `tools/result`: see every final execution record once.
pub(crate) type ResultHook = Observer<ExecutionRecord>;
/// `tools/code-dispatch-log`: rewrite the logged copy of a nested call's result.
pub(crate) type CodeDispatchLogHook = Waterfall<CodeDispatchEvent, CodeDispatchEvent>;
/// `tools/code-dispatch`: see each sub-call of a `run_code` program start and
/// settle (for session logs and UIs).
pub(crate) type CodeDispatchHook = Observer<CodeDispatchEvent>;

/// The tool hook points of one host (cheap to clone: the clones share the
/// same listeners).
///
/// ```
/// use std::sync::Arc;
/// use tack_core::hooks::ToolHooks;
/// use tack_core::policy::PreDecision;
///
/// let hooks = ToolHooks::new();
/// let _gate = hooks.pre_execute().tap("deny-rm-rf", |exec, next| async move {
///     if exec.name() == "bash" && exec.arg_str("command").is_some_and(|c| c.contains("rm -rf")) {
///         return PreDecision::deny("`rm -rf` is not allowed in this workspace");
///     }
///     next.run(exec).await
/// });
/// assert_eq!(hooks.pre_execute().listener_count(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct ToolHooks {
    pre_execute: PreExecuteHook,
    execute: ExecuteHook,
    post_execute: PostExecuteHook,
    result: ResultHook,
    code_dispatch_log: CodeDispatchLogHook,
    code_dispatch: CodeDispatchHook,
    guards: Guards,
}

impl Default for ToolHooks {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolHooks {
    /// Name of the pre-execute hook point (`tools/pre-execute`): allow, ask
    /// or deny a valid call before it runs.
    pub const PRE_EXECUTE: &str = "tools/pre-execute";
    /// Name of the execute hook point (`tools/execute`): wrappers around the
    /// body (timeouts live here).
    pub const EXECUTE: &str = "tools/execute";
    /// Name of the post-execute hook point (`tools/post-execute`): inspect
    /// or replace an outcome.
    pub const POST_EXECUTE: &str = "tools/post-execute";
    /// Name of the result hook point (`tools/result`): see every final
    /// execution record once.
    pub const RESULT: &str = "tools/result";
    /// Name of the code-dispatch-log hook point
    /// (`tools/code-dispatch-log`): rewrite the logged copy of a nested
    /// call's result.
    pub const CODE_DISPATCH_LOG: &str = "tools/code-dispatch-log";
    /// Name of the code-dispatch observer hook point (`tools/code-dispatch`):
    /// see each sub-call of a `run_code` program start and settle.
    pub const CODE_DISPATCH: &str = "tools/code-dispatch";

    /// Fresh hook points with no listeners.
    pub fn new() -> Self {
        Self {
            pre_execute: Waterfall::new_sync(Self::PRE_EXECUTE, |_| PreDecision::allow())
                .with_provenance(PreDecision::provenance_slot),
            execute: Waterfall::new(Self::EXECUTE, ExecuteRequest::run_body)
                .with_provenance(ExecuteOutput::provenance_slot),
            post_execute: Waterfall::new_sync(Self::POST_EXECUTE, |_| PostDecision::accept())
                .with_provenance(PostDecision::provenance_slot),
            result: Observer::new(Self::RESULT),
            code_dispatch_log: Waterfall::new_sync(Self::CODE_DISPATCH_LOG, |entry| entry)
                .with_provenance(CodeDispatchEvent::provenance_slot),
            code_dispatch: Observer::new(Self::CODE_DISPATCH),
            guards: Guards::new(),
        }
    }

    /// The same hook points, with every registration made through them also
    /// kept in `owner` (a plugin's footprint): it stays installed until
    /// `owner` is disposed, whatever happens to the returned disposer.
    pub(crate) fn owned_by(&self, owner: &Arc<Disposables>) -> Self {
        Self {
            pre_execute: self.pre_execute.owned_by(owner.clone()),
            execute: self.execute.owned_by(owner.clone()),
            post_execute: self.post_execute.owned_by(owner.clone()),
            result: self.result.owned_by(owner.clone()),
            code_dispatch_log: self.code_dispatch_log.owned_by(owner.clone()),
            code_dispatch: self.code_dispatch.owned_by(owner.clone()),
            guards: self.guards.owned_by(owner.clone()),
        }
    }

    /// The same hook points, with every listener registered through them
    /// applying to `agent` only: a call made for `agent` runs it, merged with
    /// the global listeners in one order, and a call made for another agent
    /// never does (see [`Waterfall::for_agent`]). Registrations still join
    /// the footprint these hook points are kept in (a plugin's, through
    /// [`PluginContext::hooks`](crate::plugin::PluginContext::hooks)). Guards
    /// added through it are the agent's too.
    ///
    /// ```
    /// use tack_core::hook::AgentId;
    /// use tack_core::hooks::ToolHooks;
    /// use tack_core::policy::PreDecision;
    ///
    /// let hooks = ToolHooks::new();
    /// let reviewer = AgentId::new("reviewer");
    /// let _read_only = hooks.for_agent(&reviewer).pre_execute().tap(
    ///     "reviewer-read-only",
    ///     |exec, next| async move {
    ///         if exec.name() == "write_file" {
    ///             return PreDecision::deny("the reviewer only reads");
    ///         }
    ///         next.run(exec).await
    ///     },
    /// );
    /// assert!(hooks.pre_execute().has_listeners(Some(&reviewer)));
    /// assert!(!hooks.pre_execute().has_listeners(Some(&AgentId::new("coder"))));
    /// assert!(!hooks.pre_execute().has_listeners(None));
    /// ```
    pub fn for_agent(&self, agent: impl Into<AgentId>) -> Self {
        let agent = agent.into();
        Self {
            pre_execute: self.pre_execute.for_agent(&agent),
            execute: self.execute.for_agent(&agent),
            post_execute: self.post_execute.for_agent(&agent),
            result: self.result.for_agent(&agent),
            code_dispatch_log: self.code_dispatch_log.for_agent(&agent),
            code_dispatch: self.code_dispatch.for_agent(&agent),
            guards: self.guards.for_agent(&agent),
        }
    }

    /// `tools/pre-execute`.
    pub fn pre_execute(&self) -> &Waterfall<Arc<ToolExecution>, PreDecision> {
        &self.pre_execute
    }

    /// `tools/execute`.
    pub fn execute(&self) -> &Waterfall<ExecuteRequest, ExecuteOutput> {
        &self.execute
    }

    /// `tools/post-execute`: listeners get the record of the outcome so far.
    pub fn post_execute(&self) -> &Waterfall<ExecutionRecord, PostDecision> {
        &self.post_execute
    }

    /// `tools/result`: observers get the final record.
    pub fn result(&self) -> &Observer<ExecutionRecord> {
        &self.result
    }

    /// `tools/code-dispatch-log`.
    pub fn code_dispatch_log(&self) -> &Waterfall<CodeDispatchEvent, CodeDispatchEvent> {
        &self.code_dispatch_log
    }

    /// `tools/code-dispatch`.
    pub fn code_dispatch(&self) -> &Observer<CodeDispatchEvent> {
        &self.code_dispatch
    }

    /// Adds a guard: a monotonic check that runs after `tools/pre-execute`
    /// (and approval), just before the body, and answers at once. `Ok(())`
    /// lets the call continue (to the next guard, then to the body);
    /// `Err(reason)` stops it with `DENIED`, `reason` telling the model what
    /// was refused and why (a blank one is replaced by a message naming the
    /// guard). There is no "allow": nothing before or after a guard can
    /// loosen its denial.
    ///
    /// Guards are not reorderable: the global ones run first, then those of
    /// the calling agent (added through [`for_agent`](Self::for_agent)),
    /// each layer in registration order. A guard with state of its own is a
    /// closure that captures it.
    ///
    /// ```
    /// use tack_core::hooks::ToolHooks;
    ///
    /// let hooks = ToolHooks::new();
    /// let _g = hooks.guard("no-rm", |exec| {
    ///     if exec.arg_str("command").is_some_and(|c| c.contains("rm -rf")) {
    ///         Err("`rm -rf` is not allowed".into())
    ///     } else {
    ///         Ok(())
    ///     }
    /// });
    /// ```
    pub fn guard<F>(&self, name: impl Into<Arc<str>>, guard: F) -> Disposer
    where
        F: Fn(&ToolExecution) -> Result<(), String> + Send + Sync + 'static,
    {
        self.guards.add_sync(name, guard)
    }

    /// Adds an asynchronous guard, for a check that awaits: a closure given
    /// the execution (an `Arc`, to move into its future) that returns the
    /// future of its answer. It answers and runs like a
    /// [`guard`](Self::guard); the caller's cancellation is checked again
    /// after the last guard.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tack_core::hooks::ToolHooks;
    /// use tack_core::tool::ToolExecution;
    ///
    /// /// Refuses any call whose arguments mention one of its words.
    /// struct Forbidden(Vec<String>);
    /// impl Forbidden {
    ///     async fn check(&self, execution: &ToolExecution) -> Result<(), String> {
    ///         let arguments = execution.arguments().to_string();
    ///         match self.0.iter().find(|word| arguments.contains(word.as_str())) {
    ///             Some(word) => Err(format!("`{word}` is off limits")),
    ///             None => Ok(()),
    ///         }
    ///     }
    /// }
    ///
    /// let hooks = ToolHooks::new();
    /// // A struct guard: the closure captures the struct.
    /// let forbidden = Arc::new(Forbidden(vec![".env".into()]));
    /// let _g = hooks.guard_async("forbidden", move |execution| {
    ///     let forbidden = forbidden.clone();
    ///     async move { forbidden.check(&execution).await }
    /// });
    /// ```
    pub fn guard_async<F, Fut>(&self, name: impl Into<Arc<str>>, guard: F) -> Disposer
    where
        F: Fn(Arc<ToolExecution>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), String>> + Send + 'static,
    {
        self.guards.add_async(name, guard)
    }

    /// The guards, for the host that runs them. For hosts.
    #[cfg(feature = "host")]
    pub fn guards(&self) -> &Guards {
        &self.guards
    }
}
