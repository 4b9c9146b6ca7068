//! The client each served call came from, while the call runs: where its
//! progress, log messages and questions go.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

#[allow(deprecated)] // logging: still part of the versions clients speak
use rmcp::model::LoggingLevel;
use rmcp::model::{ClientCapabilities, InputRequest, InputRequests, ProgressToken, ServerRequest};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use tack_core::capability::{CapabilityError, ClientLogLevel, ClientRequest, ClientRequestKind};

/// The client session each served call came from, by call id (filled by
/// [`McpServer`](crate::McpServer) while a call runs), for an
/// [`ElicitingApprover`](crate::ElicitingApprover) and for the tools' client
/// channel ([`McpServer::client_channel`](crate::McpServer::client_channel)).
#[derive(Clone, Default)]
pub struct CallPeers(Arc<Mutex<HashMap<String, Arc<CallClient>>>>);

impl std::fmt::Debug for CallPeers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallPeers").finish_non_exhaustive()
    }
}

impl CallPeers {
    pub(crate) fn insert(&self, call_id: &str, client: Arc<CallClient>) {
        if let Ok(mut map) = self.0.lock() {
            map.insert(call_id.to_owned(), client);
        }
    }

    pub(crate) fn remove(&self, call_id: &str) {
        if let Ok(mut map) = self.0.lock() {
            map.remove(call_id);
        }
    }

    pub(crate) fn get(&self, call_id: &str) -> Option<Arc<CallClient>> {
        self.0.lock().ok()?.get(call_id).cloned()
    }
}

/// One served call's client: its session, what its request asked for, and
/// (protocol 2026-07-28) the answers it brought and the questions it is
/// still to be asked.
pub(crate) struct CallClient {
    pub(crate) peer: Peer<RoleServer>,
    pub(crate) progress_token: Option<ProgressToken>,
    /// The lowest severity the client wants log messages of (`u8::MAX`: none).
    pub(crate) log_threshold: u8,
    pub(crate) capabilities: Option<ClientCapabilities>,
    /// Questions are answered by re-sending the call (`input_required`),
    /// not by requests sent to the client mid-call.
    pub(crate) round_trip: bool,
    /// The answers the call brought (`inputResponses`, with those of earlier
    /// rounds from its `requestState`).
    pub(crate) answers: BTreeMap<String, Value>,
    /// The questions to send back in an `input_required` result.
    pub(crate) pending: Mutex<InputRequests>,
    /// A question the client cannot be asked (2026-07-28: the call fails
    /// with `-32021`).
    pub(crate) missing: Mutex<Option<ClientRequestKind>>,
}

/// MCP's log level for a tack one.
#[allow(deprecated)]
pub(crate) fn mcp_level(level: ClientLogLevel) -> LoggingLevel {
    match level {
        ClientLogLevel::Debug => LoggingLevel::Debug,
        ClientLogLevel::Info => LoggingLevel::Info,
        ClientLogLevel::Notice => LoggingLevel::Notice,
        ClientLogLevel::Warning => LoggingLevel::Warning,
        ClientLogLevel::Error => LoggingLevel::Error,
        ClientLogLevel::Critical => LoggingLevel::Critical,
        ClientLogLevel::Alert => LoggingLevel::Alert,
        _ => LoggingLevel::Emergency,
    }
}

/// The MCP method of a question.
fn method(kind: ClientRequestKind) -> &'static str {
    match kind {
        ClientRequestKind::Sampling => "sampling/createMessage",
        ClientRequestKind::Elicitation => "elicitation/create",
        _ => "roots/list",
    }
}

/// The JSON-RPC request (method and params) of a question; an elicitation
/// without a `mode` is a form.
fn request_json(request: &ClientRequest) -> Value {
    let mut params = match &request.params {
        Value::Null => json!({}),
        params => params.clone(),
    };
    if request.kind == ClientRequestKind::Elicitation
        && let Some(object) = params.as_object_mut()
        && !object.contains_key("mode")
    {
        let mode = if object.contains_key("url") {
            "url"
        } else {
            "form"
        };
        object.insert("mode".to_owned(), json!(mode));
    }
    json!({"method": method(request.kind), "params": params})
}

/// Whether `answer` has the shape of an answer to a question of `kind`.
fn answers_kind(answer: &Value, kind: ClientRequestKind) -> bool {
    let Some(object) = answer.as_object() else {
        return false;
    };
    match kind {
        ClientRequestKind::Sampling => object.contains_key("content"),
        ClientRequestKind::Elicitation => object.get("action").is_some_and(Value::is_string),
        _ => object.get("roots").is_some_and(Value::is_array),
    }
}

impl CallClient {
    /// Whether the client declared the capability `kind` needs.
    pub(crate) fn can_ask(&self, kind: ClientRequestKind) -> bool {
        self.capabilities.as_ref().is_some_and(|c| match kind {
            ClientRequestKind::Sampling => c.sampling.is_some(),
            ClientRequestKind::Elicitation => c.elicitation.is_some(),
            _ => c.roots.is_some(),
        })
    }

    pub(crate) async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) {
        let Some(token) = &self.progress_token else {
            return;
        };
        let param = serde_json::from_value(json!({
            "progressToken": token,
            "progress": progress,
            "total": total,
            "message": message,
        }));
        match param {
            Ok(param) => {
                if let Err(e) = self.peer.notify_progress(param).await {
                    tracing::debug!("cannot send an MCP progress notification: {e}");
                }
            }
            Err(e) => tracing::debug!("cannot build an MCP progress notification: {e}"),
        }
    }

    #[allow(deprecated)] // logging: still part of the versions clients speak
    pub(crate) async fn log(&self, level: ClientLogLevel, data: Value) {
        let level = mcp_level(level);
        if self.log_threshold == u8::MAX || super::handler::severity(level) < self.log_threshold {
            return;
        }
        let mut message = rmcp::model::LoggingMessageNotificationParam::new(level, data);
        message.logger = Some("tack".to_owned());
        if let Err(e) = self.peer.notify_logging_message(message).await {
            tracing::debug!("cannot send an MCP log message: {e}");
        }
    }

    /// Asks every one of `requests`: of a 2026-07-28 client, from the answers
    /// the call brought, recording the rest to send back; of an earlier one,
    /// by sending each request now.
    pub(crate) async fn ask(
        &self,
        requests: Vec<ClientRequest>,
    ) -> Result<Vec<Value>, CapabilityError> {
        if let Some(refused) = requests.iter().find(|r| !self.can_ask(r.kind)) {
            if self.round_trip
                && let Ok(mut missing) = self.missing.lock()
            {
                *missing = Some(refused.kind);
            }
            return Err(CapabilityError::Unsupported { kind: refused.kind });
        }
        if self.round_trip {
            return self.answered(&requests);
        }
        let mut answers = Vec::with_capacity(requests.len());
        for request in &requests {
            let request: ServerRequest =
                serde_json::from_value(request_json(request)).map_err(|e| {
                    CapabilityError::ClientFailed {
                        message: format!("the request for the client is not valid MCP: {e}"),
                    }
                })?;
            let answer = self.peer.send_request(request).await.map_err(|e| {
                CapabilityError::ClientFailed {
                    message: e.to_string(),
                }
            })?;
            answers.push(serde_json::to_value(answer).map_err(|e| {
                CapabilityError::ClientFailed {
                    message: e.to_string(),
                }
            })?);
        }
        Ok(answers)
    }

    fn answered(&self, requests: &[ClientRequest]) -> Result<Vec<Value>, CapabilityError> {
        let mut found = Vec::with_capacity(requests.len());
        let mut unanswered = InputRequests::new();
        for request in requests {
            match self.answers.get(&request.key) {
                Some(answer) if answers_kind(answer, request.kind) => found.push(answer.clone()),
                // Not answered, or not an answer to this question: asked again.
                _ => {
                    let question: InputRequest = serde_json::from_value(request_json(request))
                        .map_err(|e| CapabilityError::ClientFailed {
                            message: format!("the request for the client is not valid MCP: {e}"),
                        })?;
                    unanswered.insert(request.key.clone(), question);
                }
            }
        }
        if unanswered.is_empty() {
            return Ok(found);
        }
        if let Ok(mut pending) = self.pending.lock() {
            pending.extend(unanswered);
        }
        Err(CapabilityError::InputRequired)
    }
}
