//! The constructors of values only the pipeline builds, as sealed extension
//! traits: a host brings one into scope (`use tack_core::host::NewOutcome;`)
//! and calls it as an associated function (`Outcome::failure(..)`); plugin
//! code, which imports from the plugin surface, has no way to build these
//! values.

use std::sync::Arc;

use serde_json::Value;

use super::RunEffects;
use crate::CancellationToken;
use crate::capability::Capabilities;
use crate::context::ToolRunContext;
use crate::hook::{AgentId, Provenance};
use crate::hooks::ExecuteOutput;
use crate::model::Arguments;
use crate::tool::{
    BodyFuture, CallId, Content, ErrorCode, ExecutionToken, Outcome, Tier, ToolCall,
    ToolDefinition, ToolError, ToolExecution, ToolName,
};

/// A thread's own copy of a registered tool, for a host's registry.
///
/// The copy is the same tool in every respect, but its name and handler
/// are allocations of its own, so the reference counts a call clones and
/// drops (the name the execution carries, the handler the execute stage
/// holds) are written by that thread only: calls of one tool on several
/// threads then write no shared cache line. The pipeline keeps one per
/// thread and tool.
///
/// ```
/// use serde_json::json;
/// use tack_core::host::ThreadCopy;
/// use tack_core::tool::{OutputSpec, ToolDefinition};
/// let echo = ToolDefinition::builder("echo")
///     .description("Repeat the text.")
///     .input_schema(json!({"type": "object"}))
///     .output(OutputSpec::new(json!({"type": "string"})))
///     .handler(|args, _cx| async move { Ok(args["text"].clone()) })
///     .build()
///     .unwrap();
/// let copy = echo.thread_copy();
/// assert_eq!(copy.name(), echo.name());
/// assert!(!std::sync::Arc::ptr_eq(copy.handler(), echo.handler()));
/// ```
pub trait ThreadCopy: sealed::Sealed + Sized {
    /// A copy for one thread's calls.
    fn thread_copy(&self) -> Self;
}

/// Keeps the traits of this module implemented by tack-core's own types only.
pub(crate) mod sealed {
    /// Implemented by the types the `New*` traits build.
    pub trait Sealed {}
}

/// Building a [`ToolExecution`]: the pipeline does once the arguments have
/// been parsed and validated.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use tack_core::host::{NewExecutionToken, NewToolExecution};
/// use tack_core::tool::{CallId, ExecutionToken, Tier, ToolExecution, ToolName};
///
/// let exec = ToolExecution::new(
///     CallId::from("c1"),
///     ToolName::new("bash").unwrap(),
///     Arc::new(json!({"command": "ls"})),
///     Tier::Executes,
///     ExecutionToken::issue(CallId::from("c1")),
/// );
/// assert_eq!(exec.arg_str("command"), Some("ls"));
/// // Built from a value, the text is its compact JSON.
/// assert_eq!(exec.arguments_text(), r#"{"command":"ls"}"#);
/// ```
pub trait NewToolExecution: sealed::Sealed + Sized {
    /// An execution of `tool` with the [`Arguments`] the pipeline parsed (text
    /// and value; a value alone gets its compact JSON as text).
    fn new(
        call_id: CallId,
        tool: ToolName,
        arguments: impl Into<Arguments>,
        tier: Tier,
        token: ExecutionToken,
    ) -> Self;

    /// The execution of `call` (its id, agent and parent) as `tool`, built
    /// at once: what [`new`](Self::new) with
    /// [`with_agent`](Self::with_agent) and [`with_parent`](Self::with_parent)
    /// makes.
    #[inline]
    fn of_call(
        call: &ToolCall,
        tool: ToolName,
        arguments: Arguments,
        tier: Tier,
        token: ExecutionToken,
    ) -> Self {
        Self::new(call.call_id.clone(), tool, arguments, tier, token)
            .with_agent(call.agent.clone())
            .with_parent(call.parent.clone())
    }

    /// Records that a `tools/pre-execute` decision (or the approval) by `by`
    /// rewrote `original` into `rewritten` (what
    /// [`original_arguments`](ToolExecution::original_arguments) and the
    /// outcome's record then tell). The pipeline sets it on the execution
    /// that runs the rewrite, and on the one a denial or an invalid
    /// rewrite kept the model's arguments in.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use serde_json::json;
    /// use tack_core::hook::Provenance;
    /// use tack_core::host::{NewExecutionToken, NewToolExecution};
    /// use tack_core::tool::{CallId, ExecutionToken, Tier, ToolExecution, ToolName};
    ///
    /// let original = Arc::new(json!({"command": "ls"}));
    /// let rewritten = Arc::new(json!({"command": "ls -la"}));
    /// let exec = ToolExecution::new(
    ///     CallId::from("c1"), ToolName::new("bash").unwrap(), rewritten.clone(),
    ///     Tier::Executes, ExecutionToken::issue(CallId::from("c1")),
    /// )
    /// .with_rewrite(original, rewritten, Some(Provenance::listener("tools/pre-execute", "hooks")));
    /// assert_eq!(exec.original_arguments().unwrap()["command"], "ls");
    /// assert_eq!(exec.rewritten_by().unwrap().to_string(), "tools/pre-execute › listener `hooks`");
    /// ```
    fn with_rewrite(
        self,
        original: Arc<Value>,
        rewritten: Arc<Value>,
        by: Option<Provenance>,
    ) -> Self;

    /// Sets the agent the call was made for.
    fn with_agent(self, agent: Option<AgentId>) -> Self;

    /// Sets the token of the execution that made this (nested) call.
    fn with_parent(self, parent: Option<ExecutionToken>) -> Self;

    /// The cancellation signal this execution's first run context was made
    /// with: [`NewRunContext::with_fresh_effects`] moves it into the
    /// execution (no clone), where the host reads it after the body. `None`
    /// before such a context is made.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tack_core::host::Capabilities;
    /// use tack_core::context::ToolRunContext;
    /// use tack_core::host::{NewExecutionToken, NewRunContext, NewToolExecution};
    /// use tack_core::serde_json::json;
    /// use tack_core::tool::{CallId, ExecutionToken, Tier, ToolExecution, ToolName};
    /// use tokio_util::sync::CancellationToken;
    ///
    /// let execution = Arc::new(ToolExecution::new(
    ///     CallId::from("c1"),
    ///     ToolName::new("demo").unwrap(),
    ///     json!({}),
    ///     Tier::ReadOnly,
    ///     ExecutionToken::issue(CallId::from("c1")),
    /// ));
    /// assert!(execution.run_cancellation().is_none());
    /// let cancel = CancellationToken::new();
    /// let (cx, _effects) = ToolRunContext::with_fresh_effects(
    ///     execution.clone(),
    ///     Arc::new(Capabilities::default()),
    ///     cancel.clone(),
    /// );
    /// cancel.cancel();
    /// assert!(cx.is_cancelled());
    /// assert!(execution.run_cancellation().is_some_and(CancellationToken::is_cancelled));
    /// ```
    fn run_cancellation(&self) -> Option<&CancellationToken>;
}

/// Issuing an [`ExecutionToken`]: every execution gets a fresh one.
pub trait NewExecutionToken: sealed::Sealed + Sized {
    /// A new token, unequal to every other token issued in this process.
    /// `root` is the call id of the outermost (model-direct) call of the tree.
    fn issue(root: CallId) -> Self;
}

/// Building the [`ToolRunContext`] of one execution.
pub trait NewRunContext: sealed::Sealed + Sized {
    /// The context of `execution`: its capabilities, cancellation signal and
    /// the effects the host reads after the body.
    fn new(
        execution: Arc<ToolExecution>,
        capabilities: Arc<Capabilities>,
        cancel: CancellationToken,
        effects: RunEffects,
    ) -> Self;

    /// The context of `execution` with fresh effects, and the handle the
    /// host reads them through after the body: the same as
    /// [`new`](Self::new) with [`RunEffects::new`], without an allocation
    /// of their own: the first context of an execution keeps its
    /// capabilities and effects in the execution's own allocation (a later
    /// one allocates once for both).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use serde_json::json;
    /// use tack_core::host::Capabilities;
    /// use tack_core::context::ToolRunContext;
    /// use tack_core::host::{NewExecutionToken, NewRunContext, NewToolExecution};
    /// use tack_core::tool::{CallId, ExecutionToken, Tier, ToolExecution, ToolName};
    /// use tack_core::CancellationToken;
    ///
    /// let execution = Arc::new(ToolExecution::new(
    ///     CallId::from("c1"), ToolName::new("demo").unwrap(), Arc::new(json!({})),
    ///     Tier::ReadOnly, ExecutionToken::issue(CallId::from("c1")),
    /// ));
    /// let (cx, effects) = ToolRunContext::with_fresh_effects(
    ///     execution, Arc::new(Capabilities::default()), CancellationToken::new(),
    /// );
    /// cx.conclude_turn();
    /// assert!(effects.concluded());
    /// ```
    fn with_fresh_effects(
        execution: Arc<ToolExecution>,
        capabilities: Arc<Capabilities>,
        cancel: CancellationToken,
    ) -> (Self, RunEffects);
}

/// Building an [`Outcome`]: the one normalized result of a call.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use tack_core::host::{NewOutcome, NewToolError};
/// use tack_core::tool::{CallId, ContentBlock, ErrorCode, Outcome, ToolError};
///
/// let ok = Outcome::success(CallId::from("c1"), "echo", json!("hi"), vec![ContentBlock::text("hi")]);
/// assert!(ok.is_success());
///
/// let err = Outcome::failure(CallId::from("c2"), "nope", ToolError::from_code(ErrorCode::UnknownTool, "unknown tool `nope`"));
/// assert_eq!(err.error_code(), Some(ErrorCode::UnknownTool));
/// assert_eq!(err.content[0].as_text(), Some("UNKNOWN_TOOL: unknown tool `nope`"));
/// ```
pub trait NewOutcome: sealed::Sealed + Sized {
    /// A success.
    fn success(
        call_id: CallId,
        tool: impl Into<String>,
        value: Value,
        content: impl Into<Content>,
    ) -> Self;

    /// A failure, with the model content `"<CODE>: <message>"`.
    fn failure(call_id: CallId, tool: impl Into<String>, error: ToolError) -> Self;

    /// Sets who decided.
    fn with_provenance(self, provenance: Option<Provenance>) -> Self;

    /// Replaces the value of a success (what the pipeline does with a
    /// `tools/post-execute` listener's replacement, once it is checked and
    /// rendered) and gives back the value it replaced; the rest of the
    /// outcome (its content included) is left to the caller. A failure
    /// cannot become a success: on a failure this does nothing and returns
    /// `None`.
    ///
    /// ```
    /// use serde_json::json;
    /// use tack_core::host::{NewOutcome, NewToolError};
    /// use tack_core::tool::{CallId, ErrorCode, Outcome, ToolError};
    ///
    /// let mut ok = Outcome::success(CallId::from("c1"), "read", json!("SECRET=1"), vec![]);
    /// assert_eq!(ok.replace_value(json!("[redacted]")), Some(json!("SECRET=1")));
    /// assert_eq!(ok.value(), Some(&json!("[redacted]")));
    ///
    /// let mut failed = Outcome::failure(CallId::from("c2"), "read", ToolError::from_code(ErrorCode::Denied, "no"));
    /// assert_eq!(failed.replace_value(json!("all good")), None);
    /// assert!(!failed.is_success());
    /// ```
    fn replace_value(&mut self, value: Value) -> Option<Value>;

    /// Records in the outcome the argument rewrite `execution` carries, if
    /// any (what the pipeline does as it publishes the outcome, so the
    /// record reaches the result observers and the session log). The record
    /// is shared, not copied.
    fn record_rewrite(&mut self, execution: &ToolExecution);
}

/// Building a [`ToolError`] as the pipeline does: with any [`ErrorCode`],
/// the pipeline's own (`DENIED`, `UNKNOWN_TOOL`, `INTERNAL`,
/// `OUTPUT_INVALID`) included, the JSON pointer of a failing argument, and
/// whether the body had been dispatched.
///
/// ```
/// use tack_core::host::NewToolError;
/// use tack_core::tool::{ErrorCode, ToolError};
///
/// let denied = ToolError::from_code(ErrorCode::Denied, "writes are not allowed here");
/// assert_eq!(denied.code(), ErrorCode::Denied);
/// assert!(!denied.dispatched());
///
/// let invalid = ToolError::from_code(ErrorCode::InvalidArguments, "`/path` must be a string")
///     .with_pointer("/path");
/// assert_eq!(invalid.pointer(), Some("/path"));
///
/// // What a body returned is marked with what happened.
/// let body = ToolError::new("boom").with_dispatched(false);
/// assert!(!body.dispatched());
/// ```
pub trait NewToolError: sealed::Sealed + Sized {
    /// An error with any code and a message; not dispatched (set it with
    /// [`with_dispatched`](Self::with_dispatched) for a verdict after the
    /// body ran).
    fn from_code(code: ErrorCode, message: impl Into<String>) -> Self;

    /// Sets the JSON pointer of the failing argument.
    fn with_pointer(self, pointer: impl Into<Box<str>>) -> Self;

    /// Records whether the body had been dispatched.
    fn with_dispatched(self, dispatched: bool) -> Self;

    /// The same error with another code (message, kind and details kept).
    fn with_code(self, code: ErrorCode) -> Self;
}

/// Building the input of `tools/execute`.
pub trait NewExecuteRequest: sealed::Sealed + Sized {
    /// The request to run the body of `definition` with `context` (for the
    /// context's execution), within the tool's declared timeout.
    fn new(context: ToolRunContext, definition: &ToolDefinition) -> Self;

    /// Starts the body as the hook's default
    /// ([`run_body`](crate::hooks::ExecuteRequest::run_body)) does, without
    /// awaiting it: the body's future, or (when the signal is already
    /// cancelled) the `CANCELLED` output at once. What a pipeline runs when
    /// no `tools/execute` wrapper reaches a call, so the call's future holds
    /// the body's future alone; the caller contains panics of both the start
    /// and the future.
    ///
    /// # Errors
    ///
    /// The output, when the body was not started.
    fn start_body(self) -> Result<BodyFuture, ExecuteOutput>;
}

/// Building the record `tools/post-execute` listeners (with the outcome so
/// far) and `tools/result` observers (with the final one) see.
pub trait NewExecutionRecord: sealed::Sealed + Sized {
    /// The record of one call: its agent, the execution when arguments were
    /// valid, and the outcome.
    fn new(
        agent: Option<AgentId>,
        execution: Option<Arc<ToolExecution>>,
        outcome: Arc<Outcome>,
    ) -> Self;
}

/// The error of a call that was cancelled before its tool started:
/// `CANCELLED`, not dispatched, and a message saying nothing was done. The
/// one place it is built, for every stage that can find a call cancelled
/// before the body runs.
///
/// ```
/// use tack_core::host::cancelled_before_start;
/// use tack_core::tool::ErrorCode;
/// let error = cancelled_before_start("bash");
/// assert_eq!(error.code(), ErrorCode::Cancelled);
/// assert!(!error.dispatched());
/// assert_eq!(
///     error.message(),
///     "the call of tool `bash` was cancelled before the tool started; nothing was done"
/// );
/// ```
pub fn cancelled_before_start(tool: &str) -> ToolError {
    ToolError::cancelled_before_start(tool)
}
