//! The approver that never approves.

use async_trait::async_trait;
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use tokio_util::sync::CancellationToken;

/// Answers every request `unavailable`: with it, every `ask` is a denial that
/// says no approver could be asked. Installing it is the explicit form of
/// installing none. Each refused request is logged (at `info`) with its
/// summary and arguments, so a denied call can still be traced.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
/// use tack_core::tool::{CallId, Tier};
/// use tack_permission::NoApprover;
/// let out = NoApprover
///     .request(
///         ApprovalRequest::new(CallId::from("c"), "bash", Tier::Executes, None, serde_json::json!({}), "why"),
///         Default::default(),
///     )
///     .await;
/// assert_eq!(out.as_str(), "unavailable");
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct NoApprover;

#[async_trait]
impl ApprovalService for NoApprover {
    async fn request(
        &self,
        request: ApprovalRequest,
        cancel: CancellationToken,
    ) -> ApprovalOutcome {
        if cancel.is_cancelled() {
            return ApprovalOutcome::Cancelled;
        }
        tracing::info!(
            call_id = %ApprovalRequest::escape_control(request.call_id.as_str()),
            tool = %request.tool,
            summary = %request.summary,
            arguments = %super::shown_arguments(&request),
            "approval requested, but approvals are turned off; the call is denied"
        );
        ApprovalOutcome::Unavailable {
            reason: Some("approvals are turned off (approver `none`)".to_owned()),
        }
    }
}
