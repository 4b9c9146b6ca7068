//! Step 7 (and 8): run the `tools/execute` waterfall around the body and turn
//! what it returns into an outcome.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use tack_core::context::ToolRunContext;
use tack_core::hook::{Decider, HookError, panic_message};
use tack_core::hooks::{EXECUTE, ExecuteRequest};
use tack_core::host::{NewExecuteRequest, NewFailure, NewOutcome, NewRunContext, RunEffects};
use tack_core::tool::{ErrorCode, Failure, Outcome, ToolCall, ToolExecution};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::Stage;
use super::admit::listener_failure;
use crate::ToolRegistry;
use crate::registry::RegisteredTool;

/// The note a success carries when cancellation arrived after the body finished.
pub const LATE_CANCELLATION_NOTE: &str = "cancellation was requested after the tool had completed: its work happened, and its result is kept";

impl ToolRegistry {
    pub(crate) async fn run_body(
        &self,
        call: &ToolCall,
        tool: &RegisteredTool,
        execution: &Arc<ToolExecution>,
        cancel: &CancellationToken,
        effects: &RunEffects,
    ) -> Outcome {
        let definition = &tool.definition;
        let name = definition.name().as_str();
        let agent = call.agent.as_ref();
        let fail = |failure: Failure| Outcome::failure(call.call_id.clone(), name, failure);

        self.record(&call.call_id, Stage::Execute);
        let context = ToolRunContext::new(
            execution.clone(),
            self.inner.capabilities.snapshot(),
            cancel.clone(),
            effects.clone(),
        );
        let request = ExecuteRequest::new(
            execution.clone(),
            context,
            definition.handler().clone(),
            definition.timeout(),
        );
        let hook = self.inner.hooks.execute();
        let span = tracing::debug_span!("execute");
        let output = if hook.has_listeners(agent) {
            hook.dispatch(agent, request).instrument(span).await
        } else {
            // No wrapper: the default alone, its panic still contained.
            AssertUnwindSafe(request.run_body())
                .catch_unwind()
                .instrument(span)
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
            return fail(tack_core::host::cancelled_before_start(name)).with_provenance(provenance);
        }

        self.record(&call.call_id, Stage::Output);
        match self.normalize_output(tool, execution.arguments(), value) {
            Ok(rendered) => {
                let mut outcome =
                    Outcome::success(call.call_id.clone(), name, rendered.value, rendered.content)
                        .with_provenance(provenance);
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
