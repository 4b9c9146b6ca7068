//! `tack mcp serve`: the workspace's tools served to an MCP client.

use std::process::ExitCode;
use std::sync::Arc;

use futures::future::BoxFuture;
use tack_agent::{
    Event, EventBus, LoggedApprover, PluginSet, SessionLog, UnattendedApprover, state_home_from_env,
};
use tack_core::CancellationToken;
use tack_core::capability::ToolDispatcher;
use tack_core::policy::ApprovalService;
use tack_core::tool::{Outcome, ToolCall};
use tack_mcp::{CallPeers, ElicitingApprover, HttpOptions, McpServer, serve_http};
use tack_permission::Permission;
use tack_pipeline::{Pipeline, ToolRegistry};
use tack_tools::BuiltinTools;

use crate::args::ServeArgs;
use crate::guard_plugins;
use crate::session::workspace;
use crate::settings::Settings;

/// Records every served call in the session log, then dispatches it
/// through the pipeline.
struct Logged {
    pipeline: Pipeline,
    bus: Arc<EventBus>,
}

impl ToolDispatcher for Logged {
    fn dispatch(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Arc<Outcome>> {
        let pipeline = self.pipeline.clone();
        let bus = Arc::clone(&self.bus);
        Box::pin(async move {
            let _ = bus.emit(Event::ToolCall {
                call_id: call.call_id.to_string(),
                tool: call.name.clone(),
                arguments: call.arguments.clone(),
                index: 0,
            });
            let outcome = pipeline.dispatch(call, cancel).await;
            let _ = bus.emit(Event::ToolResult {
                outcome: Arc::clone(&outcome),
                index: 0,
            });
            outcome
        })
    }
}

/// Serves until the client disconnects (stdio) or the process is stopped (HTTP).
pub async fn serve(args: ServeArgs) -> Result<ExitCode, String> {
    // It starts no hooks or MCP servers today, but refuses the workspace's
    // untrusted ones as `run` and `chat` do: one rule, kept when it does.
    if let Some(refused) = crate::trust::gate(&args.session)? {
        return Ok(refused);
    }
    let root = workspace(args.session.workspace.as_deref())?;
    let settings = Settings::load(&root, &args.session)?;
    let mode = settings.mode.value;
    let timeout = guard_plugins::timeout(&settings)?;
    let sandbox = guard_plugins::sandbox(&settings, &root, &args.session)?;
    let log = match &args.session.log {
        Some(path) => SessionLog::create(path),
        None => {
            let state = state_home_from_env().ok_or_else(|| {
                "cannot place the session log: neither XDG_STATE_HOME nor HOME is set; pass --log FILE".to_owned()
            })?;
            SessionLog::create_for_workspace(&state, &root)
        }
    }
    .map_err(|e| format!("{e}; refusing to serve: nothing would be recorded"))?;
    let log_path = log.path().to_owned();
    let bus = Arc::new(EventBus::new(Some(Arc::new(log))));
    let reason = format!(
        "the MCP client cannot be asked (it does not support elicitation) in mode `{}`; restart tack mcp serve with --mode accept-edits (file edits) or --mode allow-all (commands too), or add an allow rule",
        mode.as_str()
    );
    // A client that supports elicitation is asked; for any other the mode
    // decides, with a reason that says how to change it.
    let peers = CallPeers::default();
    let unattended: Arc<dyn ApprovalService> = Arc::new(UnattendedApprover::new(reason));
    let approver: Arc<dyn ApprovalService> =
        Arc::new(ElicitingApprover::new(peers.clone(), unattended));
    let permission = Permission::new(
        guard_plugins::permission(&settings, &root)
            .approver(Arc::new(LoggedApprover::new(approver, bus.clone()))),
    );
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let _plugins = PluginSet::over(pipeline.clone())
        .with(timeout)
        .with(permission)
        .with(sandbox)
        .with(BuiltinTools)
        .build()
        .map_err(|e| format!("cannot install the plugins: {e}"))?;
    let tools = registry.clone();
    let changes = registry.changes();
    let server = McpServer::new(
        Arc::new(Logged { pipeline, bus }),
        Arc::new(move || {
            tools
                .visible(None)
                .iter()
                .map(|t| t.definition().clone())
                .collect()
        }),
    )
    .with_call_peers(peers)
    .with_tools_changed(changes);
    eprintln!("tack: serving MCP; session log {}", log_path.display());
    let token = args.token.or_else(|| {
        std::env::var("TACK_MCP_TOKEN")
            .ok()
            .filter(|t| !t.is_empty())
    });
    match args.http {
        None => server.serve_stdio().await.map_err(|e| e.to_string())?,
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            if !addr.ip().is_loopback() {
                eprintln!(
                    "tack: warning: listening on {addr}, reachable from other machines{}",
                    if token.is_none() {
                        " without a token (set TACK_MCP_TOKEN or --token)"
                    } else {
                        ""
                    }
                );
            }
            let mut options = HttpOptions::default();
            if let Some(token) = token {
                options = options.bearer_token(token);
            }
            if !addr.ip().is_loopback() && !addr.ip().is_unspecified() {
                options.allowed_hosts.push(addr.to_string());
            }
            let shutdown = CancellationToken::new();
            let stop = shutdown.clone();
            tokio::spawn(async move {
                let _ = tokio::signal::ctrl_c().await;
                stop.cancel();
            });
            eprintln!(
                "tack: MCP endpoint http://{}/mcp",
                listener.local_addr().map_err(|e| e.to_string())?
            );
            serve_http(server, listener, options, shutdown)
                .await
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
