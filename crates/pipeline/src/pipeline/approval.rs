//! Approval, inside admission: when `tools/pre-execute` asks, the approval
//! service decides.

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use tack_core::hook::Provenance;
use tack_core::host::NewToolError;
use tack_core::host::cancelled_before_start;
use tack_core::host::panic_message;
use tack_core::host::summarize_execution;
use tack_core::policy::{ApprovalOutcome, ApprovalRequest};
use tack_core::tool::{ErrorCode, ToolError, ToolExecution};
use tokio_util::sync::CancellationToken;

use super::{APPROVAL_STAGE, Pipeline};

impl Pipeline {
    /// Asks the approval service, showing it the frozen arguments and their
    /// summary. Only the allowed outcomes let the call through (with the
    /// approver's rewritten arguments and who rewrote, for
    /// [`ApprovalOutcome::AllowedRewritten`]); no service, any other
    /// outcome, a panic, or the caller's cancellation ends it.
    pub(crate) async fn ask_approval(
        &self,
        execution: &ToolExecution,
        reason: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<(serde_json::Value, String)>, (ToolError, Option<Provenance>)> {
        let name = execution.name();
        let denied = |outcome: &ApprovalOutcome, by: &str| {
            (
                ToolError::from_code(ErrorCode::Denied, outcome.denial_message(name)),
                Some(Provenance::listener(APPROVAL_STAGE, by.to_owned())),
            )
        };
        let capabilities = self.capabilities().snapshot();
        let Some(approver) = capabilities.approval.clone() else {
            let outcome = ApprovalOutcome::Unavailable {
                reason: Some("no approval service is installed".to_owned()),
            };
            return Err(denied(&outcome, "no approver"));
        };
        let mut request = ApprovalRequest::new(
            execution.call_id().clone(),
            name,
            execution.tier(),
            execution.agent().cloned(),
            execution.arguments().clone(),
            reason,
        );
        // The gist in the order the model wrote the arguments.
        request.summary = summarize_execution(execution);
        // The call itself inside the future: a service that panics before
        // returning its future is contained like one that panics while polled.
        let asked = AssertUnwindSafe(async { approver.request(request, cancel.clone()).await })
            .catch_unwind();
        let answer = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            answer = asked => Some(answer),
        };
        match answer {
            None => Err((
                cancelled_before_start(name),
                Some(Provenance::listener(APPROVAL_STAGE, "cancelled")),
            )),
            Some(Err(payload)) => {
                let message = panic_message(&*payload);
                tracing::error!(tool = name, %message, "the approval service panicked; denying");
                let outcome = ApprovalOutcome::Unavailable {
                    reason: Some(format!("the approval service failed: {message}")),
                };
                Err(denied(&outcome, "panicked"))
            }
            Some(Ok(ApprovalOutcome::AllowedRewritten { arguments, by })) => {
                Ok(Some((arguments, by)))
            }
            Some(Ok(outcome)) if outcome.is_allowed() => Ok(None),
            Some(Ok(_)) if cancel.is_cancelled() => Err((
                cancelled_before_start(name),
                Some(Provenance::listener(APPROVAL_STAGE, "cancelled")),
            )),
            Some(Ok(outcome)) => {
                let by = outcome.as_str();
                Err(denied(&outcome, by))
            }
        }
    }
}
