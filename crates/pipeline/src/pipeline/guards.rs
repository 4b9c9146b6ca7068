//! The guards, the last step of admission: every guard of the caller's scope
//! passes the call, or the first that denies ends it.

use tack_core::host::NewFailure;
use tack_core::policy::GuardOutcome;
use tack_core::tool::{ErrorCode, Failure};
use tokio_util::sync::CancellationToken;

use super::admit::Admitted;
use super::fault::listener_failure;
use super::{Executed, Pipeline, Stage};

impl Pipeline {
    /// Runs the guards over `admitted`'s execution; then checks the caller's
    /// cancellation once more (the last check before the body).
    pub(crate) async fn run_guards(
        &self,
        admitted: Admitted,
        cancel: &CancellationToken,
    ) -> Result<Admitted, Box<Executed>> {
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
                let failure = Failure::new(ErrorCode::Denied, reason);
                return Err(admitted.refuse(failure, Some(provenance)));
            }
            Err(error) => {
                let (failure, provenance) = listener_failure(&error, "the call was not run");
                return Err(admitted.refuse(failure, provenance));
            }
        }
        if cancel.is_cancelled() {
            let failure = tack_core::host::cancelled_before_start(admitted.execution.name());
            return Err(admitted.refuse(failure, None));
        }
        Ok(admitted)
    }
}
