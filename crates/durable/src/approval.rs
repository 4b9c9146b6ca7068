//! Approvals in a durable session: the pipeline's approval service, which
//! never waits inside a journaled step, and the request a session shows
//! while it waits.

use std::collections::VecDeque;
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// The approval a session waits for, as its state shows it (the
/// `pending_approval` handler): answer it with the session's `answer`
/// handler, or resolve [`awakeable`](Self::awakeable) through Restate's
/// ingress with an [`ApprovalAnswer`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// The Restate awakeable the session is suspended on.
    pub awakeable: String,
    /// What the pipeline asked: the call, its tool, the reason, a summary.
    pub request: ApprovalRequest,
}

/// The answer to a [`PendingApproval`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalAnswer {
    /// Whether the call may run.
    pub allow: bool,
    /// Why (shown to the model when the call is refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl ApprovalAnswer {
    /// The outcome the pipeline gets.
    pub fn to_outcome(&self) -> ApprovalOutcome {
        if self.allow {
            ApprovalOutcome::AllowedOnce
        } else {
            ApprovalOutcome::Denied {
                reason: self.reason.clone(),
            }
        }
    }
}

/// What one journaled run of a call knows about approval: the answers
/// already given (in the order they were asked) and where to report a
/// question that has no answer yet.
pub(crate) struct ApprovalScope {
    answers: Mutex<VecDeque<ApprovalOutcome>>,
    asked: Mutex<Option<oneshot::Sender<ApprovalRequest>>>,
}

impl ApprovalScope {
    pub(crate) fn new(
        answers: Vec<ApprovalOutcome>,
    ) -> (Arc<Self>, oneshot::Receiver<ApprovalRequest>) {
        let (tx, rx) = oneshot::channel();
        let scope = Arc::new(Self {
            answers: Mutex::new(answers.into()),
            asked: Mutex::new(Some(tx)),
        });
        (scope, rx)
    }
}

tokio::task_local! {
    pub(crate) static SCOPE: Arc<ApprovalScope>;
}

/// The approval service a durable host installs in its pipeline (the
/// session object installs it). Inside a session's journaled call it
/// answers with the answer the session already has, or reports the
/// question and never answers: the session then drops the call before its
/// body ran, suspends on an awakeable, and runs the call again with the
/// answer. Outside a session it answers `unavailable`.
#[derive(Clone, Copy, Debug, Default)]
pub struct DurableApprover;

#[async_trait]
impl ApprovalService for DurableApprover {
    async fn request(
        &self,
        request: ApprovalRequest,
        cancel: CancellationToken,
    ) -> ApprovalOutcome {
        let Ok(scope) = SCOPE.try_with(Arc::clone) else {
            return ApprovalOutcome::Unavailable {
                reason: Some("the call was asked for approval outside a durable session".into()),
            };
        };
        if let Some(answer) = scope.answers.lock().pop_front() {
            return answer;
        }
        if let Some(asked) = scope.asked.lock().take() {
            let _ = asked.send(request);
        }
        cancel.cancelled().await;
        ApprovalOutcome::Cancelled
    }
}
