//! Stage 4, execute: the `tools/execute` waterfall around the body, and what
//! it returns turned into an outcome (a success value is checked and rendered
//! by [`output`](super::output)) ([`Executed`]).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use futures::FutureExt;
use tack_core::context::ToolRunContext;
use tack_core::hook::{AgentId, Provenance};
use tack_core::hooks::{ExecuteOutput, ExecuteRequest, ToolHooks};
use tack_core::host::HookError;
use tack_core::host::panic_message;
use tack_core::host::{
    NewExecuteRequest, NewOutcome, NewRunContext, NewToolError, NewToolExecution,
};
use tack_core::host::{RunEffects, cancelled_before_start};
use tack_core::tool::{ErrorCode, Outcome, ToolCall, ToolError, ToolExecution};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::admit::Admitted;
use super::fault::listener_failure;
use super::resolve::Resolved;
use super::{Pipeline, Stage};
use crate::registry::RegisteredTool;

/// The note a success carries when cancellation arrived after the body finished.
pub const LATE_CANCELLATION_NOTE: &str = "cancellation was requested after the tool had completed: its work happened, and its result is kept";

/// A call of a known tool with its outcome: the body's, or the refusal that
/// ended it before the body ran.
pub(crate) struct Executed {
    /// The call (after the body ran, its `name` was moved into `outcome.tool`).
    pub(crate) call: ToolCall,
    pub(crate) tool: Arc<RegisteredTool>,
    /// The frozen execution, when the call got that far.
    pub(crate) execution: Option<Arc<ToolExecution>>,
    /// What the body left behind (deferred context, a concluded turn), when it ran.
    pub(crate) effects: Option<RunEffects>,
    /// The outcome, in the allocation the caller gets back (finalization
    /// changes it in place).
    pub(crate) outcome: Arc<Outcome>,
}

impl Executed {
    /// A call refused before its body ran.
    pub(crate) fn refused(
        resolved: Resolved,
        failure: ToolError,
        provenance: Option<Provenance>,
        execution: Option<Arc<ToolExecution>>,
    ) -> Box<Self> {
        let Resolved { call, tool } = resolved;
        let outcome = Arc::new(
            Outcome::failure(call.call_id.clone(), call.name.clone(), failure)
                .with_provenance(provenance),
        );
        Box::new(Self {
            call,
            tool,
            execution,
            effects: None,
            outcome,
        })
    }
}

impl Pipeline {
    /// Runs the admitted call's body inside the `tools/execute` waterfall.
    ///
    /// `cancel` is moved into the execution with the body's context (a
    /// token's clone takes a lock); the rest of the call reads it there
    /// ([`NewToolExecution::run_cancellation`]). Returned when it could not
    /// be kept there (an execution whose run slot was already taken).
    ///
    /// Only the body's own future (or the waterfall's) is held across the
    /// await; what the call needs before and after is built and read outside
    /// it, so a call's future stays small (it is moved whole, every time).
    pub(crate) async fn execute_body(
        &self,
        admitted: Admitted,
        cancel: CancellationToken,
    ) -> (Executed, Option<CancellationToken>) {
        let Admitted {
            resolved: Resolved { mut call, tool },
            execution,
        } = admitted;
        self.record(&call.call_id, Stage::Execute);
        let kept = execution
            .run_cancellation()
            .is_some()
            .then(|| cancel.clone());
        // The context and the effects the body asks for, in the execution's
        // own allocation (no allocation of their own).
        let (context, effects) = ToolRunContext::with_fresh_effects(
            execution.clone(),
            self.capabilities().snapshot(),
            cancel,
        );
        let output = self.run_body(call.agent.as_ref(), &tool, context).await;
        // The outcome names the tool with the call's own string (the name the
        // call resolved by), moved rather than copied.
        let name = std::mem::take(&mut call.name);
        let cancel = kept.as_ref().or_else(|| execution.run_cancellation());
        let outcome =
            Arc::new(self.outcome_of(&call, name, &tool, &execution, cancel, &effects, output));
        let executed = Executed {
            call,
            tool,
            execution: Some(execution),
            effects: Some(effects),
            outcome,
        };
        (executed, kept)
    }

    /// The `tools/execute` waterfall around the body; without a wrapper, the
    /// hook's default (the body) alone, its panic still contained.
    async fn run_body(
        &self,
        agent: Option<&AgentId>,
        tool: &RegisteredTool,
        context: ToolRunContext,
    ) -> Result<ExecuteOutput, HookError> {
        let definition = &tool.definition;
        let request = ExecuteRequest::new(context, definition);
        match self.hooks().execute().try_dispatch(agent, request) {
            Ok(dispatch) => dispatch.instrument(tracing::debug_span!("execute")).await,
            Err(request) => {
                let body = match catch_unwind(AssertUnwindSafe(|| request.start_body())) {
                    Ok(Ok(body)) => body,
                    Ok(Err(output)) => return Ok(output),
                    Err(payload) => return Err(default_panicked(&*payload)),
                };
                AssertUnwindSafe(body)
                    .catch_unwind()
                    .await
                    .map(ExecuteOutput::from)
                    .map_err(|payload| default_panicked(&*payload))
            }
        }
    }

    /// The outcome of what the body (or a wrapper) returned: a failure as
    /// it is, a success checked and rendered.
    #[allow(clippy::too_many_arguments)]
    fn outcome_of(
        &self,
        call: &ToolCall,
        tool_name: String,
        tool: &RegisteredTool,
        execution: &ToolExecution,
        cancel: Option<&CancellationToken>,
        effects: &RunEffects,
        output: Result<ExecuteOutput, HookError>,
    ) -> Outcome {
        let definition = &tool.definition;
        let name = definition.name().as_str();
        let fail = |failure: ToolError| Outcome::failure(call.call_id.clone(), name, failure);
        let output = match output {
            Ok(output) => output,
            Err(HookError::DefaultPanicked { message, .. }) => {
                return fail(
                    ToolError::from_code(
                        ErrorCode::ExecutionFailed,
                        format!("tool `{name}` panicked: {message}"),
                    )
                    .with_dispatched(true),
                );
            }
            Err(error) => {
                let (failure, provenance) =
                    listener_failure(&error, "the tool's result is unknown");
                return fail(failure.with_dispatched(effects.dispatched()))
                    .with_provenance(provenance);
            }
        };
        let (result, provenance) = output.into_parts();
        // The body's own result carries no provenance; a wrapper's does.
        let provenance = provenance.filter(|p| p.listener.is_some());
        let dispatched = effects.dispatched();
        let value = match result {
            Ok(value) => value,
            Err(error) => {
                let failure = handed_on(error).with_dispatched(dispatched);
                return fail(failure).with_provenance(provenance);
            }
        };
        let cancelled = || cancel.is_some_and(CancellationToken::is_cancelled);
        if !dispatched && cancelled() {
            // A wrapper answered for a body that never ran, after the caller gave up.
            return fail(cancelled_before_start(name)).with_provenance(provenance);
        }

        self.record(&call.call_id, Stage::Output);
        match super::output::render(tool, execution.arguments(), value) {
            Ok(rendered) => {
                let mut outcome = Outcome::success(
                    call.call_id.clone(),
                    tool_name,
                    rendered.value,
                    rendered.content,
                );
                outcome.provenance = provenance;
                outcome.presentation = rendered.presentation;
                if cancelled() {
                    outcome.notes.push(LATE_CANCELLATION_NOTE.to_owned());
                }
                outcome
            }
            Err(failure) => fail(failure.with_dispatched(dispatched)).with_provenance(provenance),
        }
    }
}

/// The error of a body (the hook's default) that panicked.
fn default_panicked(payload: &(dyn std::any::Any + Send)) -> HookError {
    HookError::DefaultPanicked {
        hook: ToolHooks::EXECUTE,
        message: panic_message(payload),
    }
}

/// What a body (or a `tools/execute` wrapper) returned, as this call's
/// failure. `DENIED`, `UNKNOWN_TOOL` and `INTERNAL` are verdicts the
/// pipeline gives a call; no constructor lets a body make one, but a body
/// can hand on one it read from another call's outcome (a nested call that
/// was denied). That is not this call's verdict, so it becomes
/// `EXECUTION_FAILED`, with its message, kind and details kept.
fn handed_on(error: ToolError) -> ToolError {
    match error.code() {
        ErrorCode::Denied | ErrorCode::UnknownTool | ErrorCode::Internal => {
            error.with_code(ErrorCode::ExecutionFailed)
        }
        _ => error,
    }
}
