//! Approvals asked of the MCP client through `elicitation/create`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::{Peer, RoleServer};
use serde_json::json;
use tack_core::CancellationToken;
use tack_core::async_trait;
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};

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

/// Asks the MCP client that made a call whether it may run, through
/// `elicitation/create` (a form with one boolean, `approve`). A client that
/// does not declare the elicitation capability — or a call that did not come
/// through MCP — gets the `fallback`'s answer (the mode decides).
pub struct ElicitingApprover {
    peers: CallPeers,
    fallback: Arc<dyn ApprovalService>,
}

impl std::fmt::Debug for ElicitingApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElicitingApprover").finish_non_exhaustive()
    }
}

impl ElicitingApprover {
    /// An approver over the sessions of `peers`, with `fallback` for clients
    /// that cannot be asked.
    pub fn new(peers: CallPeers, fallback: Arc<dyn ApprovalService>) -> Self {
        Self { peers, fallback }
    }
}

#[async_trait]
impl ApprovalService for ElicitingApprover {
    async fn request(
        &self,
        request: ApprovalRequest,
        cancel: CancellationToken,
    ) -> ApprovalOutcome {
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
