//! Approvals asked of the MCP client through `elicitation/create`.

use std::sync::Arc;

use serde_json::json;
use tack_core::CancellationToken;
use tack_core::async_trait;
use tack_core::capability::{CapabilityError, ClientRequest, ClientRequestKind};
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use tack_core::tool::Tier;

use super::call_client::CallPeers;

/// The key of the confirmation question in a 2026-07-28 `input_required`
/// result (and of its answer in the call sent again).
pub const APPROVAL_KEY: &str = "tack_approve";

/// Asks the MCP client that made a call to confirm it, through
/// `elicitation/create` (a form with one boolean, `approve`) — for calls of
/// a tier up to the ceiling the server's own user set (the tiers the
/// server's permission mode lets run). The client may confirm or refuse
/// such a call; it is never asked about a call above the ceiling, which
/// gets the `fallback`'s answer, as does a call from a client that does not
/// declare the elicitation capability or one that did not come through MCP.
///
/// So a client (another local user holding the HTTP token, a prompt-injected
/// agent) cannot grant itself more than the server's mode allows: under
/// mode `ask` the ceiling is read-only, and a command that needs approval
/// is refused, not put to the client.
///
/// A client of protocol 2026-07-28 is asked through the `input_required`
/// round trip: the call's result is `resultType: "input_required"` with one
/// elicitation keyed [`APPROVAL_KEY`], and the client sends the call again
/// with its answer under that key in `inputResponses` (and the result's
/// `requestState`); the call then runs, or is refused, by that answer.
pub struct ElicitingApprover {
    peers: CallPeers,
    fallback: Arc<dyn ApprovalService>,
    ceiling: Option<Tier>,
}

impl std::fmt::Debug for ElicitingApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElicitingApprover").finish_non_exhaustive()
    }
}

impl ElicitingApprover {
    /// An approver over the sessions of `peers` that puts calls of tiers up
    /// to `ceiling` to the client (none: no call is put to it), with
    /// `fallback` for every other call.
    pub fn new(
        peers: CallPeers,
        fallback: Arc<dyn ApprovalService>,
        ceiling: Option<Tier>,
    ) -> Self {
        Self {
            peers,
            fallback,
            ceiling,
        }
    }
}

#[async_trait]
impl ApprovalService for ElicitingApprover {
    async fn request(
        &self,
        request: ApprovalRequest,
        cancel: CancellationToken,
    ) -> ApprovalOutcome {
        if self.ceiling.is_none_or(|ceiling| request.tier > ceiling) {
            return self.fallback.request(request, cancel).await;
        }
        let client = self.peers.get(request.call_id.as_str());
        let Some(client) = client.filter(|c| c.can_ask(ClientRequestKind::Elicitation)) else {
            return self.fallback.request(request, cancel).await;
        };
        let message = format!(
            "tack asks: may the tool `{}` ({}) run? {}\n{}",
            request.tool, request.tier, request.reason, request.summary
        );
        let question = ClientRequest::new(
            APPROVAL_KEY,
            ClientRequestKind::Elicitation,
            json!({
                "mode": "form",
                "message": message,
                "requestedSchema": {
                    "type": "object",
                    "properties": {"approve": {"type": "boolean", "title": "Allow this call", "default": false}},
                    "required": ["approve"]
                }
            }),
        );
        let answer = tokio::select! {
            answer = client.ask(vec![question]) => answer,
            () = cancel.cancelled() => return ApprovalOutcome::Cancelled,
        };
        match answer {
            Ok(answers) => {
                let answer = answers.first();
                let action = answer
                    .and_then(|a| a.get("action"))
                    .and_then(serde_json::Value::as_str);
                let approved = answer
                    .and_then(|a| a.get("content"))
                    .and_then(|c| c.get("approve"))
                    .and_then(serde_json::Value::as_bool)
                    == Some(true);
                match action {
                    Some("accept") if approved => ApprovalOutcome::AllowedOnce,
                    Some("cancel") => ApprovalOutcome::Cancelled,
                    _ => ApprovalOutcome::Denied {
                        reason: Some("the MCP client's user did not approve it".to_owned()),
                    },
                }
            }
            // 2026-07-28: the question goes back in an `input_required`
            // result; the call is sent again with the answer.
            Err(CapabilityError::InputRequired) => ApprovalOutcome::Denied {
                reason: Some("waiting for the MCP client's confirmation".to_owned()),
            },
            Err(e) => ApprovalOutcome::Unavailable {
                reason: Some(format!(
                    "the MCP client did not answer the elicitation: {e}"
                )),
            },
        }
    }
}
