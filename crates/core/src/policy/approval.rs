//! The approval service: asks someone whether a call may run.

use std::fmt;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::hook::AgentId;
use crate::tool::{CallId, Tier};

/// What an approver is asked. It carries the call id, the tool and the reason,
/// **not the arguments**: a UI shows the call it already displays, found by id,
/// and the approval path never becomes a second channel for argument data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The call awaiting approval.
    pub call_id: CallId,
    /// The tool's name.
    pub tool: String,
    /// The tool's tier.
    pub tier: Tier,
    /// The agent that made the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentId>,
    /// Why approval is needed (from the listener that asked).
    pub reason: String,
}

impl ApprovalRequest {
    /// A request.
    pub fn new(
        call_id: CallId,
        tool: impl Into<String>,
        tier: Tier,
        agent: Option<AgentId>,
        reason: impl Into<String>,
    ) -> Self {
        Self {
            call_id,
            tool: tool.into(),
            tier,
            agent,
            reason: reason.into(),
        }
    }
}

/// The answer to an [`ApprovalRequest`]. Only [`AllowedOnce`](Self::AllowedOnce)
/// lets the call run; every other outcome is a denial.
///
/// ```
/// use tack_core::policy::ApprovalOutcome;
/// assert!(ApprovalOutcome::AllowedOnce.is_allowed());
/// assert!(!ApprovalOutcome::Cancelled.is_allowed());
/// assert_eq!(
///     ApprovalOutcome::Unavailable { reason: None }.denial_message("bash"),
///     "tool `bash` needs approval, but no approver is available to ask"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalOutcome {
    /// This one call may run.
    AllowedOnce,
    /// A person (or a rule acting for them) said no.
    Denied {
        /// What they said, if anything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// No one could be asked (no terminal, no UI attached, the approver failed).
    Unavailable {
        /// Why, if known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// The request was withdrawn before an answer (the call was cancelled).
    Cancelled,
}

impl ApprovalOutcome {
    /// Whether the call may run.
    pub fn is_allowed(&self) -> bool {
        matches!(self, ApprovalOutcome::AllowedOnce)
    }

    /// The wire name (`allowed_once`, `denied`, `unavailable`, `cancelled`).
    pub fn as_str(&self) -> &'static str {
        match self {
            ApprovalOutcome::AllowedOnce => "allowed_once",
            ApprovalOutcome::Denied { .. } => "denied",
            ApprovalOutcome::Unavailable { .. } => "unavailable",
            ApprovalOutcome::Cancelled => "cancelled",
        }
    }

    /// The message a denied call carries, distinct per outcome and worded so an
    /// automatic decision never reads as the user's.
    pub fn denial_message(&self, tool: &str) -> String {
        match self {
            ApprovalOutcome::AllowedOnce => format!("tool `{tool}` was approved"),
            ApprovalOutcome::Denied { reason: Some(r) } => {
                format!("the user declined tool `{tool}`: {r}")
            }
            ApprovalOutcome::Denied { reason: None } => format!("the user declined tool `{tool}`"),
            ApprovalOutcome::Unavailable { reason: Some(r) } => {
                format!("tool `{tool}` needs approval, but no approver is available to ask ({r})")
            }
            ApprovalOutcome::Unavailable { reason: None } => {
                format!("tool `{tool}` needs approval, but no approver is available to ask")
            }
            ApprovalOutcome::Cancelled => {
                format!("the approval request for tool `{tool}` was cancelled")
            }
        }
    }
}

impl fmt::Display for ApprovalOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Answers approval requests: a terminal prompt, a UI channel, a rule engine.
///
/// The pipeline treats anything but [`ApprovalOutcome::AllowedOnce`] — and a
/// panic, and cancellation — as a denial (fail closed).
///
/// ```
/// use async_trait::async_trait;
/// use tokio_util::sync::CancellationToken;
/// use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
///
/// /// Approves read-only tools, declines the rest.
/// struct ReadOnlyApprover;
/// #[async_trait]
/// impl ApprovalService for ReadOnlyApprover {
///     async fn request(&self, req: ApprovalRequest, _cancel: CancellationToken) -> ApprovalOutcome {
///         if req.tier.is_read_only() {
///             ApprovalOutcome::AllowedOnce
///         } else {
///             ApprovalOutcome::Denied { reason: Some("read-only session".into()) }
///         }
///     }
/// }
/// ```
#[async_trait]
pub trait ApprovalService: Send + Sync + 'static {
    /// Asks about one call. Should return [`ApprovalOutcome::Cancelled`] promptly
    /// once `cancel` fires.
    async fn request(&self, request: ApprovalRequest, cancel: CancellationToken)
    -> ApprovalOutcome;
}

impl fmt::Debug for dyn ApprovalService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApprovalService").finish_non_exhaustive()
    }
}
