//! The rmcp server handler: `tools/list` and `tools/call` over a dispatcher.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tack_core::capability::ToolDispatcher;
use tack_core::tool::{ErrorCode, ToolCall, ToolDefinition};

use super::approval::CallPeers;
use super::mapping::{outcome_result, tool_json};

/// The tools to serve, asked for at every `tools/list` and `tools/call`
/// (the host's visible tools).
pub type ToolSource = Arc<dyn Fn() -> Vec<ToolDefinition> + Send + Sync>;

/// Serves a host's tools over MCP: `tools/list` lists the tools of the
/// [`ToolSource`]; each `tools/call` is dispatched through the host's
/// pipeline (the [`ToolDispatcher`]) — validation, permission, approval,
/// guards, sandbox, timeout, post-execute and the result observers — and
/// `notifications/cancelled` cancels the call's token.
#[derive(Clone)]
pub struct McpServer {
    dispatcher: Arc<dyn ToolDispatcher>,
    tools: ToolSource,
    name: String,
    next_id: Arc<AtomicU64>,
    peers: CallPeers,
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
        use rmcp::ServiceExt;
        let running =
            self.serve(rmcp::transport::stdio())
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
        let capabilities: ServerCapabilities =
            serde_json::from_value(json!({"tools": {"listChanged": false}, "logging": {}}))
                .unwrap_or_default();
        let mut info = ServerConfig::default();
        info.capabilities = capabilities;
        info.server_info = implementation;
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools: Vec<Tool> = (self.tools)()
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
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`: tools/list names the tools this server has"),
                None,
            ));
        };
        let structured = tool_json(&definition).get("outputSchema").is_some();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let call_id = format!("mcp-{id}");
        let call = ToolCall::new(call_id.as_str(), name, arguments.to_string());
        self.peers.insert(&call_id, context.peer.clone());
        let outcome = self.dispatcher.dispatch(call, context.ct.clone()).await;
        self.peers.remove(&call_id);
        if outcome.error_code() == Some(ErrorCode::UnknownTool) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", outcome.tool),
                None,
            ));
        }
        let result: CallToolResult =
            serde_json::from_value(outcome_result(&outcome, structured))
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
        Ok(())
    }
}
