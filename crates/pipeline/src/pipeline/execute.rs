//! Stage 4, execute: the `tools/execute` waterfall around the body, and what
//! it returns turned into an outcome (a success value is checked and rendered
//! by [`output`](super::output)) ([`Executed`]).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use tack_core::context::ToolRunContext;
use tack_core::hook::{Decider, HookError, Provenance, panic_message};
use tack_core::hooks::{EXECUTE, ExecuteRequest};
use tack_core::host::{NewExecuteRequest, NewFailure, NewOutcome, NewRunContext};
use tack_core::host::{RunEffects, cancelled_before_start};
use tack_core::tool::{ErrorCode, Failure, Outcome, ToolCall, ToolExecution};
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
    pub(crate) outcome: Outcome,
}

impl Executed {
    /// A call refused before its body ran.
    pub(crate) fn refused(
        resolved: Resolved,
        failure: Failure,
        provenance: Option<Provenance>,
        execution: Option<Arc<ToolExecution>>,
    ) -> Box<Self> {
        let Resolved { call, tool } = resolved;
        let outcome = Outcome::failure(call.call_id.clone(), call.name.clone(), failure)
            .with_provenance(provenance);
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
    pub(crate) async fn execute_body(
        &self,
        admitted: Admitted,
        cancel: &CancellationToken,
    ) -> Executed {
        let Admitted {
            resolved: Resolved { mut call, tool },
            execution,
        } = admitted;
        self.record(&call.call_id, Stage::Execute);
        // The context and the effects the body asks for, in one allocation.
        let (context, effects) = ToolRunContext::with_fresh_effects(
            execution.clone(),
            self.capabilities().snapshot(),
            cancel.clone(),
        );
        // The outcome names the tool with the call's own string (the name the
        // call resolved by), moved rather than copied.
        let name = std::mem::take(&mut call.name);
        let outcome = self
            .run_body(&call, name, &tool, context, cancel, &effects)
            .await;
        Executed {
            call,
            tool,
            execution: Some(execution),
            effects: Some(effects),
            outcome,
        }
    }

    async fn run_body(
        &self,
        call: &ToolCall,
        tool_name: String,
        tool: &RegisteredTool,
        context: ToolRunContext,
        cancel: &CancellationToken,
        effects: &RunEffects,
    ) -> Outcome {
        let definition = &tool.definition;
        let name = definition.name().as_str();
        let agent = call.agent.as_ref();
        let fail = |failure: Failure| Outcome::failure(call.call_id.clone(), name, failure);
        let succeed =
            |value, content| Outcome::success(call.call_id.clone(), tool_name, value, content);

        let execution = context.execution().clone();
        let request = ExecuteRequest::new(
            execution.clone(),
            context,
            definition.handler().clone(),
            definition.timeout(),
        );
        let hook = self.hooks().execute();
        let output = if hook.has_listeners(agent) {
            hook.dispatch(agent, request)
                .instrument(tracing::debug_span!("execute"))
                .await
        } else {
            // No wrapper: the default alone, its panic still contained.
            AssertUnwindSafe(request.run_body())
                .catch_unwind()
                .await
                .map_err(|payload| HookError::DefaultPanicked {
                    hook: EXECUTE,
                    message: panic_message(&*payload),
                })
        };
        let output = match output {
            Ok(output) => output,
            Err(HookError::DefaultPanicked { message, .. }) => {
                return fail(
                    Failure::new(
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
        let provenance = provenance.filter(|p| matches!(p.decider, Decider::Listener(_)));
        let dispatched = effects.dispatched();
        let value = match result {
            Ok(value) => value,
            Err(error) => {
                let failure = Failure::from(error).with_dispatched(dispatched);
                return fail(failure).with_provenance(provenance);
            }
        };
        if cancel.is_cancelled() && !dispatched {
            // A wrapper answered for a body that never ran, after the caller gave up.
            return fail(cancelled_before_start(name)).with_provenance(provenance);
        }

        self.record(&call.call_id, Stage::Output);
        match super::output::render(tool, execution.arguments(), value) {
            Ok(rendered) => {
                let mut outcome =
                    succeed(rendered.value, rendered.content).with_provenance(provenance);
                outcome.presentation = rendered.presentation;
                if cancel.is_cancelled() {
                    outcome.notes.push(LATE_CANCELLATION_NOTE.to_owned());
                }
                outcome
            }
            Err(failure) => fail(failure.with_dispatched(dispatched)).with_provenance(provenance),
        }
    }
}
