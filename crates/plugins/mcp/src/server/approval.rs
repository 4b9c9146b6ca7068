//! Approvals asked of the MCP client through `elicitation/create`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::{Peer, RoleServer};
use serde_json::json;
use tack_core::CancellationToken;
use tack_core::async_trait;
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use tack_core::tool::Tier;

/// The client session each served call came from, by call id (filled by
/// [`McpServer`](crate::McpServer) while a call runs).
#[derive(Clone, Default)]
pub struct CallPeers(Arc<Mutex<HashMap<String, Peer<RoleServer>>>>);

impl std::fmt::Debug for CallPeers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallPeers").finish_non_exhaustive()
    }
}

impl CallPeers {
    pub(crate) fn insert(&self, call_id: &str, peer: Peer<RoleServer>) {
        if let Ok(mut map) = self.0.lock() {
            map.insert(call_id.to_owned(), peer);
        }
    }

    pub(crate) fn remove(&self, call_id: &str) {
        if let Ok(mut map) = self.0.lock() {
            map.remove(call_id);
        }
    }

    fn get(&self, call_id: &str) -> Option<Peer<RoleServer>> {
        self.0.lock().ok()?.get(call_id).cloned()
    }
}

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
        let peer = self.peers.get(request.call_id.as_str());
        let can_ask = peer.as_ref().is_some_and(|p| {
            p.peer_info()
                .is_some_and(|info| info.capabilities.elicitation.is_some())
        });
        let (true, Some(peer)) = (can_ask, peer) else {
            return self.fallback.request(request, cancel).await;
        };
        let message = format!(
            "tack asks: may the tool `{}` ({}) run? {}\n{}",
            request.tool, request.tier, request.reason, request.summary
        );
        let params: ElicitRequestParams = match serde_json::from_value(json!({
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {"approve": {"type": "boolean", "title": "Allow this call", "default": false}},
                "required": ["approve"]
            }
        })) {
            Ok(params) => params,
            Err(e) => {
                return ApprovalOutcome::Unavailable {
                    reason: Some(format!("cannot build the elicitation request: {e}")),
                };
            }
        };
        let answer = tokio::select! {
            answer = peer.create_elicitation(params) => answer,
            () = cancel.cancelled() => return ApprovalOutcome::Cancelled,
        };
        match answer {
            Ok(result) => match result.action {
                ElicitationAction::Accept
                    if result
                        .content
                        .as_ref()
                        .and_then(|c| c.get("approve"))
                        .and_then(serde_json::Value::as_bool)
                        == Some(true) =>
                {
                    ApprovalOutcome::AllowedOnce
                }
                ElicitationAction::Cancel => ApprovalOutcome::Cancelled,
                _ => ApprovalOutcome::Denied {
                    reason: Some("the MCP client's user did not approve it".to_owned()),
                },
            },
            Err(e) => ApprovalOutcome::Unavailable {
                reason: Some(format!(
                    "the MCP client did not answer the elicitation: {e}"
                )),
            },
        }
    }
}
