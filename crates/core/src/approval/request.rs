//! The approval service: asks someone whether a call may run.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::hook::AgentId;
use crate::model::{CallId, Tier};

/// What an approver is asked: the call id, the tool, its tier and agent, the
/// reason, the call's **arguments** — the frozen JSON already validated
/// against the tool's input schema, exactly what runs if the call is allowed —
/// and a one-line [`summary`](Self::summary) for prompts.
///
/// A person approving a call must see what they approve: show the summary,
/// and the arguments (escaped, see
/// [`ApprovalRequest::escape_control`]) when they may matter. In code
/// mode the call is one of a program's sub-calls, which no UI displayed
/// before; the request is the only place its arguments appear.
///
/// ```
/// use serde_json::json;
/// use tack_core::policy::ApprovalRequest;
/// use tack_core::tool::{CallId, Tier};
///
/// let req = ApprovalRequest::new(
///     CallId::from("c1"),
///     "bash",
///     Tier::Executes,
///     None,
///     json!({"command": "ls -la"}),
///     "commands ask",
/// );
/// assert_eq!(req.summary, "bash: ls -la");
/// assert_eq!(req.arguments["command"], "ls -la");
/// ```
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
    /// The call's arguments: the frozen, validated JSON the tool runs with.
    #[serde(default)]
    pub arguments: Arc<Value>,
    /// A short single-line description of the call, control characters
    /// escaped: [`summarize_call`](Self::summarize_call) of the tool and
    /// arguments, e.g. `bash: ls -la` (the pipeline sets it from the
    /// argument text with `tack_core::host::summarize_execution`,
    /// so the gist is the first string the model wrote).
    #[serde(default)]
    pub summary: String,
}

impl ApprovalRequest {
    /// A request about the call `call_id` of `tool` with `arguments`; the
    /// summary is derived from the tool and arguments.
    pub fn new(
        call_id: CallId,
        tool: impl Into<String>,
        tier: Tier,
        agent: Option<AgentId>,
        arguments: impl Into<Arc<Value>>,
        reason: impl Into<String>,
    ) -> Self {
        let tool = tool.into();
        let arguments = arguments.into();
        Self {
            call_id,
            summary: Self::summarize_call(&tool, &arguments),
            tool,
            tier,
            agent,
            reason: reason.into(),
            arguments,
        }
    }
}

/// The answer to an [`ApprovalRequest`]. [`AllowedOnce`](Self::AllowedOnce)
/// and [`AllowedAlways`](Self::AllowedAlways) let the call run; every other
/// outcome is a denial.
///
/// ```
/// use tack_core::policy::ApprovalOutcome;
/// assert!(ApprovalOutcome::AllowedOnce.is_allowed());
/// assert!(ApprovalOutcome::AllowedAlways.is_allowed());
/// assert_eq!(ApprovalOutcome::AllowedAlways.as_str(), "allowed_always");
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
    /// This call may run, and the person said the same answer holds for the
    /// rest of the session (the approver records that, e.g. as a session
    /// rule; for the pipeline it is a grant like
    /// [`AllowedOnce`](Self::AllowedOnce)).
    AllowedAlways,
    /// This call may run, with other arguments the approver gave (a Claude
    /// Code `PermissionRequest` hook's `updatedInput`). The pipeline checks
    /// them like a `tools/pre-execute` rewrite (the tool's schema; an
    /// invalid one ends the call `INTERNAL`), records the rewrite in the
    /// outcome, and runs `tools/pre-execute` again on them: a deny there
    /// still refuses the call, so a rewrite at approval never gets past the
    /// rules the model's own arguments would meet.
    AllowedRewritten {
        /// The arguments to run the call with.
        arguments: serde_json::Value,
        /// Who rewrote them (shown in the outcome's rewrite record).
        by: String,
    },
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
        matches!(
            self,
            ApprovalOutcome::AllowedOnce
                | ApprovalOutcome::AllowedAlways
                | ApprovalOutcome::AllowedRewritten { .. }
        )
    }

    /// The wire name (`allowed_once`, `allowed_always`, `allowed_rewritten`, `denied`,
    /// `unavailable`, `cancelled`).
    pub fn as_str(&self) -> &'static str {
        match self {
            ApprovalOutcome::AllowedOnce => "allowed_once",
            ApprovalOutcome::AllowedAlways => "allowed_always",
            ApprovalOutcome::AllowedRewritten { .. } => "allowed_rewritten",
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
            ApprovalOutcome::AllowedAlways => {
                format!("tool `{tool}` was approved for the rest of the session")
            }
            ApprovalOutcome::AllowedRewritten { by, .. } => {
                format!("tool `{tool}` was approved with arguments rewritten by {by}")
            }
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
/// The pipeline treats anything but [`ApprovalOutcome::AllowedOnce`] and
/// [`ApprovalOutcome::AllowedAlways`] — and a panic, and cancellation — as a
/// denial (fail closed).
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
