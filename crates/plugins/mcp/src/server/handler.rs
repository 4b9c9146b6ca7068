//! The rmcp server handler: `tools/list` and `tools/call` over a dispatcher.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::model::{
    CustomRequest, CustomResult, ServerNotification, SubscriptionFilter,
    ToolListChangedNotification,
};
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tack_core::capability::ToolDispatcher;
use tack_core::tool::{ErrorCode, ToolCall, ToolDefinition};

use super::call_client::{CallClient, CallPeers};
use super::mapping::{object_schema, tool_json, typed_result};
use super::request_state::{RequestStates, StateError};

/// The tools to serve, asked for at every `tools/list` and `tools/call`
/// (the host's visible tools).
pub type ToolSource = Arc<dyn Fn() -> Vec<ToolDefinition> + Send + Sync>;

/// Serves a host's tools over MCP: `tools/list` lists the tools of the
/// [`ToolSource`]; each `tools/call` is dispatched through the host's
/// pipeline (the [`ToolDispatcher`]) — validation, permission, approval,
/// guards, sandbox, timeout, post-execute and the result observers — and
/// `notifications/cancelled` cancels the call's token.
///
/// * **Logging**: after `logging/setLevel`, the session gets a
///   `notifications/message` (logger `tack`) for every served call at or
///   above that level: `info` for a call that succeeded, `warning` for an
///   unknown tool, `error` for a call that failed (with its error code and
///   message). Before `logging/setLevel` nothing is sent.
/// * **A tool body's messages to the client**: with the pipeline's
///   capabilities given [`client_channel`](Self::client_channel), a body's
///   progress (when the request carried a `progressToken`), log messages and
///   questions reach the client of its call; on 2026-07-28 a question makes
///   the call's result `input_required`, and the call sent again with the
///   answers (and the result's `requestState`) runs the body again with them.
/// * **Tool list changes**: with [`with_tools_changed`](Self::with_tools_changed)
///   the server advertises `tools.listChanged` and sends
///   `notifications/tools/list_changed` to every session when the listed
///   tools change.
#[derive(Clone)]
pub struct McpServer {
    dispatcher: Arc<dyn ToolDispatcher>,
    tools: ToolSource,
    name: String,
    next_id: Arc<AtomicU64>,
    peers: CallPeers,
    /// This session's `logging/setLevel` (`NO_LEVEL` until set).
    log_level: Arc<AtomicU8>,
    changes: Option<tokio::sync::watch::Receiver<u64>>,
    /// The largest message read on stdio.
    max_message_bytes: usize,
    /// The answers of 2026-07-28 calls waiting for their next round.
    states: RequestStates,
    /// What the server tells clients about using it.
    instructions: Option<String>,
}

/// No `logging/setLevel` yet: no log messages.
const NO_LEVEL: u8 = u8::MAX;

#[allow(deprecated)]
pub(crate) fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// Whether `context` speaks protocol 2026-07-28 or later (questions go back
/// in `input_required` results, log levels are per request).
fn round_trip(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str())
}

/// What `tools/list` shows, to tell a real change from a spurious signal.
fn listing(tools: &ToolSource) -> Vec<Value> {
    tools().iter().map(tool_json).collect()
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server named `tack` for `dispatcher` and `tools`.
    pub fn new(dispatcher: Arc<dyn ToolDispatcher>, tools: ToolSource) -> Self {
        Self {
            dispatcher,
            tools,
            name: "tack".to_owned(),
            next_id: Arc::new(AtomicU64::new(1)),
            peers: CallPeers::default(),
            log_level: Arc::new(AtomicU8::new(NO_LEVEL)),
            changes: None,
            max_message_bytes: crate::stdio::DEFAULT_MAX_MESSAGE_BYTES,
            states: RequestStates::default(),
            instructions: None,
        }
    }

    /// Sets the instructions the server gives clients (`instructions` of
    /// `initialize` and `server/discover`): how to use its tools — for code
    /// mode, the SDK `run_code` programs call.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The channel through which the tools' bodies reach the client of the
    /// call they run for (progress, log messages, sampling, elicitation,
    /// roots): provide it to the pipeline's capabilities
    /// (`CapabilitySlots::provide_client`) so a tool's
    /// [`ToolRunContext::report_progress`](tack_core::context::ToolRunContext::report_progress)
    /// and the rest reach the client. It serves the calls of this server and
    /// its copies ([`with_call_peers`](Self::with_call_peers) before taking it).
    pub fn client_channel(&self) -> Arc<dyn tack_core::capability::ClientChannel> {
        Arc::new(super::client_channel::McpClientChannel {
            peers: self.peers.clone(),
        })
    }

    /// Sets the largest message a client may send on stdio
    /// ([`serve_stdio`](Self::serve_stdio), [`serve_stream`](Self::serve_stream));
    /// default 8 MiB, at least 1 KiB. A larger request is discarded as it
    /// arrives and answered with a JSON-RPC error (`-32600`) naming the
    /// limit; the session goes on. (Over HTTP, [`HttpOptions`](crate::HttpOptions)
    /// limits the request body.)
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes.max(1024);
        self
    }

    /// Sends `notifications/tools/list_changed` to every session when
    /// `changes` is marked changed and the listed tools differ from what
    /// the session was last told (and advertises `tools.listChanged`).
    /// tack-pipeline's `ToolRegistry::changes` is such a signal.
    pub fn with_tools_changed(mut self, changes: tokio::sync::watch::Receiver<u64>) -> Self {
        self.changes = Some(changes);
        self
    }

    /// A copy for a new session: the tools, dispatcher and call peers are
    /// shared, the log level is the session's own.
    pub(crate) fn for_session(&self) -> Self {
        let mut copy = self.clone();
        copy.log_level = Arc::new(AtomicU8::new(NO_LEVEL));
        copy
    }

    /// The lowest severity `context`'s client wants log messages of
    /// (`NO_LEVEL`: none). From protocol 2026-07-28 on, the level is the
    /// request's own (`io.modelcontextprotocol/logLevel` in its `_meta`), and
    /// a request without one gets no log messages.
    fn threshold(&self, context: &RequestContext<RoleServer>) -> u8 {
        match context.meta.log_level() {
            Some(level) => severity(level),
            None if round_trip(context) => NO_LEVEL,
            None => self.log_level.load(Ordering::Relaxed),
        }
    }

    /// Sends a `notifications/message` when `level` is at or above the
    /// session's `logging/setLevel`.
    #[allow(deprecated)]
    async fn log(&self, context: &RequestContext<RoleServer>, level: LoggingLevel, data: Value) {
        let threshold = self.threshold(context);
        if threshold == NO_LEVEL || severity(level) < threshold {
            return;
        }
        let mut message = LoggingMessageNotificationParam::new(level, data);
        message.logger = Some("tack".to_owned());
        if let Err(e) = context.peer.notify_logging_message(message).await {
            tracing::debug!("cannot send an MCP log message: {e}");
        }
    }

    /// Records, while each call runs, the client session it came from, for
    /// an [`ElicitingApprover`](crate::ElicitingApprover) over `peers`.
    pub fn with_call_peers(mut self, peers: CallPeers) -> Self {
        self.peers = peers;
        self
    }

    /// Sets the name the server gives in `initialize`.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    fn find(&self, name: &str) -> Option<ToolDefinition> {
        (self.tools)()
            .into_iter()
            .find(|t| t.name().as_str() == name)
    }

    /// Serves one client on stdin and stdout until it disconnects.
    ///
    /// # Errors
    ///
    /// [`McpError::Serve`](crate::McpError::Serve) if the session cannot start.
    pub async fn serve_stdio(self) -> Result<(), crate::McpError> {
        self.serve_stream(tokio::io::stdin(), tokio::io::stdout())
            .await
    }

    /// Serves one client speaking newline-delimited JSON-RPC (MCP's stdio
    /// framing) on `read` and `write` — a pipe, a socket — until it
    /// disconnects. A message over the limit
    /// ([`with_max_message_bytes`](Self::with_max_message_bytes)) is
    /// discarded without being held in memory, and a request gets an error
    /// answer saying so.
    ///
    /// # Errors
    ///
    /// [`McpError::Serve`](crate::McpError::Serve) if the session cannot start.
    pub async fn serve_stream<R, W>(self, read: R, write: W) -> Result<(), crate::McpError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        use rmcp::ServiceExt;
        let transport = crate::stdio::LineTransport::<RoleServer, _, _>::new(
            "the MCP client".to_owned(),
            "McpServer::with_max_message_bytes",
            read,
            write,
            self.max_message_bytes,
            crate::stdio::CloseNote::default(),
        )
        .serving();
        let running = self
            .serve(transport)
            .await
            .map_err(|e| crate::McpError::Serve {
                message: format!("the MCP session on stdio did not start: {e}"),
            })?;
        running
            .waiting()
            .await
            .map_err(|e| crate::McpError::Serve {
                message: e.to_string(),
            })?;
        Ok(())
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let implementation: Implementation = serde_json::from_value(json!({
            "name": self.name,
            "version": env!("CARGO_PKG_VERSION")
        }))
        .unwrap_or_default();
        let capabilities: ServerCapabilities = serde_json::from_value(json!({
            "tools": {"listChanged": self.changes.is_some()},
            "logging": {}
        }))
        .unwrap_or_default();
        let mut info = ServerConfig::default();
        info.capabilities = capabilities;
        info.server_info = implementation;
        info.instructions = self.instructions.clone();
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut definitions = (self.tools)();
        // In a stable order: clients cache the list, models their prompts.
        definitions.sort_by(|a, b| a.name().as_str().cmp(b.name().as_str()));
        let tools: Vec<Tool> = definitions
            .iter()
            .filter_map(|t| serde_json::from_value(tool_json(t)).ok())
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.find(name)
            .and_then(|t| serde_json::from_value(tool_json(&t)).ok())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let Some(definition) = self.find(&name) else {
            #[allow(deprecated)]
            self.log(
                &context,
                LoggingLevel::Warning,
                json!({"event": "unknown tool", "tool": name}),
            )
            .await;
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`: tools/list names the tools this server has"),
                None,
            ));
        };
        let structured = object_schema(definition.output().schema());
        let round_trip = round_trip(&context);
        // The answers of earlier rounds (2026-07-28), by the handle this
        // server gave; any other `requestState` is refused.
        let mut answers = match request.request_state.as_deref() {
            Some(handle) if round_trip => match self.states.take(handle, &name) {
                Ok(answers) => answers,
                Err(StateError::Unknown) => {
                    return Err(ErrorData::invalid_params(
                        "requestState is not one this server gave, or it was used already: send the call again without requestState and inputResponses to start over",
                        None,
                    ));
                }
                Err(StateError::OtherTool(tool)) => {
                    return Err(ErrorData::invalid_params(
                        format!("requestState was given for the tool `{tool}`, not `{name}`"),
                        None,
                    ));
                }
            },
            _ => Default::default(),
        };
        if round_trip {
            answers.extend(request.input_responses.clone().unwrap_or_default());
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let call_id = format!("mcp-{id}");
        let call = ToolCall::new(call_id.as_str(), name.as_str(), arguments.to_string());
        let client = Arc::new(CallClient {
            peer: context.peer.clone(),
            progress_token: context.meta.get_progress_token(),
            log_threshold: self.threshold(&context),
            capabilities: context.client_capabilities(),
            round_trip,
            answers,
            pending: Default::default(),
            missing: Default::default(),
        });
        self.peers.insert(&call_id, Arc::clone(&client));
        let outcome = self.dispatcher.dispatch(call, context.ct.clone()).await;
        self.peers.remove(&call_id);
        if round_trip {
            let missing = client.missing.lock().ok().and_then(|m| *m);
            if let Some(kind) = missing {
                let required: rmcp::model::ClientCapabilities =
                    serde_json::from_value(json!({ kind.capability(): {} })).unwrap_or_default();
                return Err(ErrorData::missing_required_client_capability(required));
            }
            let pending = client
                .pending
                .lock()
                .map(|mut p| std::mem::take(&mut *p))
                .unwrap_or_default();
            if !pending.is_empty() {
                let handle = self.states.keep(&name, client.answers.clone());
                return Ok(CallToolResponse::InputRequired(
                    rmcp::model::InputRequiredResult::new(Some(pending), Some(handle)),
                ));
            }
        }
        #[allow(deprecated)]
        match outcome.failure_info() {
            None => {
                self.log(
                    &context,
                    LoggingLevel::Info,
                    json!({"event": "tool call", "tool": outcome.tool, "callId": call_id, "ok": true}),
                )
                .await;
            }
            Some(failure) => {
                self.log(
                    &context,
                    LoggingLevel::Error,
                    json!({
                        "event": "tool call",
                        "tool": outcome.tool,
                        "callId": call_id,
                        "ok": false,
                        "code": failure.code().as_str(),
                        "message": failure.message(),
                    }),
                )
                .await;
            }
        }
        if outcome.error_code() == Some(ErrorCode::UnknownTool) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", outcome.tool),
                None,
            ));
        }
        let result = typed_result(&outcome, structured)
            .map_err(|e| ErrorData::internal_error(format!("result: {e}"), None))?;
        Ok(CallToolResponse::Complete(result))
    }

    #[allow(deprecated)] // logging/setLevel: still part of the versions clients speak
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tracing::info!(level = ?request.level, "MCP client set the log level");
        self.log_level
            .store(severity(request.level), Ordering::Relaxed);
        Ok(())
    }

    /// A request rmcp could not read as the method it names: a method this
    /// server has, with params that do not fit it (invalid params, `-32602`,
    /// saying what was wrong), else an unknown method (`-32601`).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str());
        let hint = match request.method.as_str() {
            "logging/setLevel" if !modern => {
                "`level` must be one of debug, info, notice, warning, error, critical, alert, emergency"
            }
            "tools/call" => "give `name` (a string) and `arguments` (an object)",
            "tools/list" => "`cursor`, if given, is a string from the last page's `nextCursor`",
            _ => {
                return Err(ErrorData::new(
                    rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                    request.method,
                    None,
                ));
            }
        };
        Err(ErrorData::invalid_params(
            format!("invalid params for `{}`: {hint}", request.method),
            request.params,
        ))
    }

    /// `subscriptions/listen` (protocol 2026-07-28): tool list changes,
    /// when the server watches for them.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.changes.as_ref()?;
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        Some(accepted)
    }

    /// Sends `notifications/tools/list_changed` on the listen stream when the
    /// listed tools change, until the client ends the subscription.
    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let Some(mut changes) = self.changes.clone() else {
            subscription.cancelled().await;
            return Ok(());
        };
        if subscription.accepted().tools_list_changed != Some(true) {
            subscription.cancelled().await;
            return Ok(());
        }
        changes.mark_unchanged();
        let mut told = listing(&self.tools);
        loop {
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        // The registry is gone: nothing more will change.
                        subscription.cancelled().await;
                        return Ok(());
                    }
                }
                () = subscription.cancelled() => return Ok(()),
            }
            changes.mark_unchanged();
            let now = listing(&self.tools);
            if now == told {
                continue;
            }
            told = now;
            let notification = ServerNotification::ToolListChangedNotification(
                ToolListChangedNotification::default(),
            );
            if subscription.sink().send(notification).await.is_err() {
                return Ok(());
            }
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let Some(mut changes) = self.changes.clone() else {
            return;
        };
        let tools = Arc::clone(&self.tools);
        let peer = context.peer;
        changes.mark_unchanged();
        let mut told = listing(&tools);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    changed = changes.changed() => {
                        if changed.is_err() {
                            return; // the registry is gone
                        }
                    }
                    // Ends the watch of a session that went away without a change.
                    () = tokio::time::sleep(Duration::from_secs(30)) => {
                        if peer.is_transport_closed() {
                            return;
                        }
                        continue;
                    }
                }
                changes.mark_unchanged();
                let now = listing(&tools);
                if now == told {
                    continue;
                }
                told = now;
                if peer.notify_tool_list_changed().await.is_err() {
                    return;
                }
            }
        });
    }
}
