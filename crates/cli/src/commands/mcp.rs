//! `tack mcp serve`: the workspace's tools served to an MCP client.

use std::process::ExitCode;
use std::sync::Arc;

use futures::future::BoxFuture;
use tack_agent::{
    Event, EventBus, LoggedApprover, PluginSet, SessionLog, UnattendedApprover, state_home_from_env,
};
use tack_code_mode::prompt_section;
use tack_core::CancellationToken;
use tack_core::capability::ToolDispatcher;
use tack_core::policy::ApprovalService;
use tack_core::tool::Tier;
use tack_core::tool::ToolDefinition;
use tack_core::tool::{Outcome, ToolCall};
use tack_hooks::{HookSession, ToolNames};
use tack_mcp::{CallPeers, ElicitingApprover, HttpOptions, McpServer, serve_http};
use tack_permission::{Mode, Permission};
use tack_pipeline::{Pipeline, Presentation, ToolRegistry};
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

/// The highest tier the MCP client may confirm under `mode`: the tiers the
/// mode lets run (a client confirms, it never grants more).
fn ceiling(mode: Mode) -> Option<Tier> {
    match mode {
        Mode::ReadOnly | Mode::Ask => Some(Tier::ReadOnly),
        Mode::AcceptEdits => Some(Tier::Writes),
        Mode::AllowAll => Some(Tier::Network),
        _ => None,
    }
}

/// Serves until the client disconnects (stdio) or the process is stopped (HTTP).
pub async fn serve(args: ServeArgs) -> Result<ExitCode, String> {
    // The workspace's untrusted hooks and MCP servers are refused as `run`
    // and `chat` refuse them.
    if let Some(refused) = crate::trust_gate::gate(&args.session)? {
        return Ok(refused);
    }
    // Before anything starts: a token that cannot be had stops it here.
    let auth = match args.http {
        Some(addr) => Some(crate::mcp_token::auth(
            addr,
            args.token_file.as_deref(),
            args.no_auth,
        )?),
        None => {
            if args.token_file.is_some() || args.no_auth {
                return Err("--token-file and --no-auth are for --http".to_owned());
            }
            None
        }
    };
    let root = workspace(args.session.workspace.as_deref())?;
    let settings = Settings::load(&root, &args.session)?;
    let mode = settings.mode.value;
    let sandbox_mode = settings.sandbox.value;
    let timeout = guard_plugins::timeout(&settings)?;
    let sandbox = guard_plugins::sandbox(&settings, &root, &args.session)?;
    crate::trust::Judge::new(&root).enforce(&settings.defining)?;
    let (hook_config, hook_warnings) = crate::hooks::checked(&settings.hooks, &root, sandbox_mode)?;
    for warning in &hook_warnings {
        eprintln!("tack: {}", tack_agent::escape_block(warning, "  "));
    }
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
        "tack mcp serve runs in mode `{}`, and its MCP client can confirm only calls that mode allows; restart tack mcp serve with --mode accept-edits (file edits) or --mode allow-all (commands too), or add an allow rule",
        mode.as_str()
    );
    // The client confirms calls within what the mode allows (an `ask` rule
    // under allow-all); for any other the mode decides, with a reason that
    // says how to change it.
    let peers = CallPeers::default();
    let unattended: Arc<dyn ApprovalService> = Arc::new(UnattendedApprover::new(reason));
    let approver: Arc<dyn ApprovalService> = Arc::new(ElicitingApprover::new(
        peers.clone(),
        unattended,
        ceiling(mode),
    ));
    let permission = Permission::new(
        guard_plugins::permission(&settings, &root)
            .approver(Arc::new(LoggedApprover::new(approver, bus.clone()))),
    );
    let hooks = (!hook_config.is_empty()).then(|| {
        let session_id = log_path
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        let session = HookSession::new(session_id, &root)
            .with_transcript(&log_path)
            .with_permission_mode(crate::session::hook_permission_mode(mode))
            .with_names(if settings.hook_names.value == "tack" {
                ToolNames::Tack
            } else {
                ToolNames::ClaudeCode
            });
        crate::hooks::session_hooks(hook_config, session, bus.clone())
    });
    let registry = ToolRegistry::new();
    // Code mode as in `tack run`: `run_code` served (alone under `code`),
    // its sub-calls through the same pipeline.
    let crate::presentation::Offered {
        presentation,
        pipeline,
        code_mode,
    } = crate::presentation::offer(&settings, &registry);
    let mcp = crate::mcp::client(&root, &args.session, &settings, &registry).await?;
    let mut plugins = PluginSet::over(pipeline.clone())
        .with(timeout)
        .with(permission)
        .with(sandbox)
        .with(BuiltinTools)
        .with(code_mode);
    // The session's own hooks fire as in `tack run`: SessionStart before the
    // first request is read, SessionEnd when serving ends.
    let session_hooks = hooks.clone();
    if let Some(hooks) = hooks {
        plugins = plugins.with(hooks);
    }
    if let Some(mcp) = mcp {
        plugins = plugins.with(mcp);
    }
    let _plugins = plugins
        .build()
        .map_err(|e| format!("cannot install the plugins: {e}"))?;
    let tools = registry.clone();
    let changes = registry.changes();
    let capabilities = pipeline.capabilities().clone();
    // The sub-calls `run_code` programs make are in the session log, as in
    // `tack run`.
    let sink = Arc::clone(&bus);
    let _code_dispatch = pipeline.hooks().code_dispatch().tap(
        "tack-cli/mcp-serve-log",
        move |event: &Arc<tack_core::hooks::CodeDispatchEvent>| {
            let _ = sink.emit(Event::from(&**event));
        },
    );
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
    // A served tool's progress, log messages and questions reach its client.
    let _client = capabilities.provide_client(server.client_channel());
    // Under code presentation the client learns the tools `run_code`
    // programs call from the server's instructions (in `tack run`, the
    // system prompt).
    let server = if presentation == Presentation::Native {
        server
    } else {
        let natives: Vec<ToolDefinition> = registry
            .native_tools(None)
            .iter()
            .map(|t| t.definition().clone())
            .collect();
        server.with_instructions(prompt_section(&natives, presentation == Presentation::Code))
    };
    eprintln!("tack: serving MCP; session log {}", log_path.display());
    if let Some(hooks) = &session_hooks {
        // No model reads a hook's additionalContext here.
        let _ = hooks.session_start("startup").await;
    }
    let served = serve_until_done(server, args.http, auth).await;
    if let Some(hooks) = &session_hooks {
        hooks.session_end("exit").await;
    }
    // A serve that was given no call leaves no empty log.
    crate::sessions::remove_if_empty(&log_path);
    served?;
    Ok(ExitCode::SUCCESS)
}

/// Serves on HTTP (until the process is stopped) or stdio (until the client
/// disconnects).
async fn serve_until_done(
    server: McpServer,
    http: Option<std::net::SocketAddr>,
    auth: Option<crate::mcp_token::Auth>,
) -> Result<(), String> {
    match (http, auth) {
        (Some(addr), Some(auth)) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            let local = listener.local_addr().map_err(|e| e.to_string())?;
            if !addr.ip().is_loopback() {
                eprintln!("tack: warning: listening on {addr}, reachable from other machines");
            }
            let mut options = HttpOptions::default();
            if let Some(token) = auth.token {
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
            eprintln!("tack: MCP endpoint http://{local}/mcp");
            eprintln!("tack: {}", auth.how);
            serve_http(server, listener, options, shutdown)
                .await
                .map_err(|e| e.to_string())?;
        }
        _ => server.serve_stdio().await.map_err(|e| e.to_string())?,
    }
    Ok(())
}
