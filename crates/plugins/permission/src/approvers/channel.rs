//! An approver for UIs: requests go out on a channel, answers come back on a
//! one-shot reply.

use async_trait::async_trait;
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use tack_core::tool::CallId;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::{Answer, settle};
use crate::SessionRules;

/// Sends each approval request to a UI and waits for its answer.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
/// use tack_core::tool::{CallId, Tier};
/// use tack_permission::{Answer, ChannelApprover, SessionRules};
///
/// let (approver, mut inbox) = ChannelApprover::new(SessionRules::new(), 8);
/// // The UI: answer whatever call is pending, by id.
/// tokio::spawn(async move {
///     while let Some(pending) = inbox.recv().await {
///         assert_eq!(pending.call_id().as_str(), "c1");
///         // What the person decides on: a one-line summary, and the arguments.
///         assert_eq!(pending.summary(), "bash: cargo test");
///         assert_eq!(pending.request().arguments["command"], "cargo test");
///         pending.respond(Answer::Once);
///     }
/// });
/// let req = ApprovalRequest::new(
///     CallId::from("c1"), "bash", Tier::Executes, None,
///     serde_json::json!({"command": "cargo test"}), "runs a command",
/// );
/// assert_eq!(approver.request(req, Default::default()).await, ApprovalOutcome::AllowedOnce);
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct ChannelApprover {
    sender: mpsc::Sender<PendingApproval>,
    session: SessionRules,
}

/// The UI's end: pending requests, in the order they were asked.
#[derive(Debug)]
pub struct ApprovalInbox {
    receiver: mpsc::Receiver<PendingApproval>,
}

impl ApprovalInbox {
    /// The next pending request; `None` once every approver is gone.
    pub async fn recv(&mut self) -> Option<PendingApproval> {
        self.receiver.recv().await
    }

    /// A pending request if one is waiting now.
    pub fn try_recv(&mut self) -> Option<PendingApproval> {
        self.receiver.try_recv().ok()
    }
}

/// One request awaiting an answer. Dropping it unanswered makes the outcome
/// `unavailable` (fail closed).
#[derive(Debug)]
pub struct PendingApproval {
    request: ApprovalRequest,
    reply: oneshot::Sender<Answer>,
}

impl PendingApproval {
    /// The call awaiting approval.
    pub fn call_id(&self) -> &CallId {
        &self.request.call_id
    }

    /// The one-line summary of the call (`bash: ls -la`), control characters
    /// escaped: what a UI shows first.
    pub fn summary(&self) -> &str {
        &self.request.summary
    }

    /// The whole request: tool, tier, agent, reason, summary, and the call's
    /// arguments (a UI must escape control characters when it renders them,
    /// see [`ApprovalRequest::escape_control`]).
    pub fn request(&self) -> &ApprovalRequest {
        &self.request
    }

    /// Answers. Returns `false` if the request was already withdrawn
    /// (cancelled): the answer is discarded.
    pub fn respond(self, answer: Answer) -> bool {
        self.reply.send(answer).is_ok()
    }
}

impl ChannelApprover {
    /// An approver and the inbox a UI reads; `capacity` pending requests may
    /// wait before askers wait too.
    pub fn new(session: SessionRules, capacity: usize) -> (Self, ApprovalInbox) {
        let (sender, receiver) = mpsc::channel(capacity.max(1));
        (Self { sender, session }, ApprovalInbox { receiver })
    }
}

#[async_trait]
impl ApprovalService for ChannelApprover {
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
            "handing an approval request to the UI"
        );
        let (reply, answer) = oneshot::channel();
        let pending = PendingApproval {
            request: request.clone(),
            reply,
        };
        let sent = tokio::select! {
            biased;
            () = cancel.cancelled() => return ApprovalOutcome::Cancelled,
            sent = self.sender.send(pending) => sent,
        };
        if sent.is_err() {
            return ApprovalOutcome::Unavailable {
                reason: Some("no UI is listening for approval requests".to_owned()),
            };
        }
        tokio::select! {
            biased;
            () = cancel.cancelled() => ApprovalOutcome::Cancelled,
            answer = answer => match answer {
                Ok(answer) => settle(answer, &request, &self.session),
                Err(_) => ApprovalOutcome::Unavailable {
                    reason: Some("the UI dropped the request without answering".to_owned()),
                },
            },
        }
    }
}
