//! The guards, the last step of admission: every guard of the caller's scope
//! passes the call, or the first that denies ends it.

use tack_core::hook::Provenance;
use tack_core::host::GuardOutcome;
use tack_core::host::NewToolError;
use tack_core::tool::{ErrorCode, ToolError};
use tokio_util::sync::CancellationToken;

use super::admit::Admitted;
use super::fault::listener_failure;
use super::{Pipeline, Stage};

impl Pipeline {
    /// Runs the guards over `admitted`'s execution; then checks the caller's
    /// cancellation once more (the last check before the body). A refusal
    /// is returned for the caller to end the call with (the call is
    /// borrowed, so the guards' future does not hold it).
    pub(crate) async fn run_guards(
        &self,
        admitted: &Admitted,
        cancel: &CancellationToken,
    ) -> Result<(), Refusal> {
        let call = &admitted.resolved.call;
        self.record(&call.call_id, Stage::Guard);
        match self
            .hooks()
            .guards()
            .run(call.agent.as_ref(), &admitted.execution)
            .await
        {
            Ok(GuardOutcome::Passed) => {}
            Ok(GuardOutcome::Denied { reason, provenance }) => {
                let reason = if reason.trim().is_empty() {
                    format!(
                        "{provenance} denied tool `{}` without giving a reason",
                        admitted.execution.name()
                    )
                } else {
                    reason
                };
                let failure = ToolError::from_code(ErrorCode::Denied, reason);
                return Err((failure, Some(provenance)));
            }
            Err(error) => {
                return Err(listener_failure(&error, "the call was not run"));
            }
        }
        if cancel.is_cancelled() {
            let failure = tack_core::host::cancelled_before_start(admitted.execution.name());
            return Err((failure, None));
        }
        Ok(())
    }
}

/// Why admission refused a call, and who decided.
pub(crate) type Refusal = (ToolError, Option<Provenance>);

impl Pipeline {}
