//! Approval services the host installs: a logging wrapper, and the answer
//! when no one can be asked.

use std::sync::Arc;

use async_trait::async_trait;
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use tokio_util::sync::CancellationToken;

use crate::agent_hooks::AgentHooks;
use crate::bus::EventBus;
use crate::event::Event;

/// Wraps the approval service a host installs so every request and its
/// outcome become `approval/request` and `approval/outcome` events.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use std::sync::Arc;
/// use tack_agent::{EventBus, LoggedApprover, UnattendedApprover};
/// use tack_core::policy::{ApprovalRequest, ApprovalService};
/// use tack_core::tool::{CallId, Tier};
/// let bus = Arc::new(EventBus::new(None));
/// let approver = LoggedApprover::new(Arc::new(UnattendedApprover::new("no terminal")), bus);
/// let args = serde_json::json!({"command": "ls"});
/// let req = ApprovalRequest::new(CallId::from("c1"), "bash", Tier::Executes, None, args, "commands ask");
/// let outcome = approver.request(req, Default::default()).await;
/// assert!(!outcome.is_allowed());
/// # }
/// ```
pub struct LoggedApprover {
    inner: Arc<dyn ApprovalService>,
    bus: Arc<EventBus>,
    notify: Option<AgentHooks>,
}

impl std::fmt::Debug for LoggedApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoggedApprover").finish_non_exhaustive()
    }
}

impl LoggedApprover {
    /// Logs the requests to `inner` and its answers on `bus`.
    pub fn new(inner: Arc<dyn ApprovalService>, bus: Arc<EventBus>) -> Self {
        Self {
            inner,
            bus,
            notify: None,
        }
    }

    /// Also tells `hooks`' `agent/notification` listeners (kind
    /// `permission_prompt`) about each request, while it is asked.
    pub fn with_notifications(mut self, hooks: AgentHooks) -> Self {
        self.notify = Some(hooks);
        self
    }
}

#[async_trait]
impl ApprovalService for LoggedApprover {
    async fn request(
        &self,
        request: ApprovalRequest,
        cancel: CancellationToken,
    ) -> ApprovalOutcome {
        let (call_id, tool) = (request.call_id.to_string(), request.tool.clone());
        // A log failure is kept by the bus and reported by the loop.
        let _ = self.bus.emit(Event::ApprovalRequest {
            request: request.clone(),
        });
        let message = format!(
            "tack needs your approval to run {}: {}",
            request.tool, request.summary
        );
        let notify = async {
            if let Some(hooks) = &self.notify {
                hooks.notify("permission_prompt", message).await;
            }
        };
        let ((), outcome) = tokio::join!(notify, self.inner.request(request, cancel));
        let _ = self.bus.emit(Event::ApprovalOutcome {
            call_id,
            tool,
            outcome: outcome.clone(),
        });
        outcome
    }
}

/// The approver of a session no one attends (stdin is not a terminal):
/// every request is `unavailable`, with the reason given, so the call is
/// denied as "no approver available".
#[derive(Clone, Debug)]
pub struct UnattendedApprover {
    reason: String,
}

impl UnattendedApprover {
    /// Answers every request `unavailable` because of `reason`.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }
}

#[async_trait]
impl ApprovalService for UnattendedApprover {
    async fn request(
        &self,
        request: ApprovalRequest,
        cancel: CancellationToken,
    ) -> ApprovalOutcome {
        if cancel.is_cancelled() {
            return ApprovalOutcome::Cancelled;
        }
        // Why it needed asking (the rule, the part that cannot be read)
        // tells the model what to change.
        let reason = if request.reason.is_empty() {
            self.reason.clone()
        } else {
            format!(
                "{}; it needed asking because {}",
                self.reason, request.reason
            )
        };
        ApprovalOutcome::Unavailable {
            reason: Some(reason),
        }
    }
}
