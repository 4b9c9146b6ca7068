//! One configured MCP server: its connection, restarts and registered tools.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

#[allow(deprecated)]
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientCapabilities, ClientConfig, ClientRequest, Implementation, InputRequiredResult,
    NumberOrString, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, RequestId, ServerResult,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tack_core::capability::{CapabilityError, ClientRequest as Question, ClientRequestKind};
use tack_core::context::ToolRunContext;
use tack_core::hook::{Disposer, Scope};
use tack_core::plugin::PluginError;
use tack_core::plugin::ToolRegistrar;
use tack_core::tool::{CallId, OutputSpec, ToolDefinition, ToolError};
use tokio::io::AsyncBufReadExt;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::mapping::{
    MAX_SCHEMA_BYTES, PERMISSIVE_OUTPUT, call_result, render_permissive, render_structured,
    tier_from_annotations,
};
use super::plugin::ClientOptions;
use super::progress::McpProgress;
use crate::config::ServerConfig;
use crate::error::McpError;
use crate::names::tack_tool_names;
use crate::oauth::{OAuthContext, OAuthHttpClient, OAuthSession, OAuthSettings};
use crate::stdio::{CloseNote, LineTransport, TOO_LARGE, human_bytes};

/// Lines of a stdio server's stderr kept for error messages.
const STDERR_LINES: usize = 20;

type Service = RunningService<RoleClient, Handler>;

enum Conn {
    Up(Service),
    Down {
        error: String,
        failures: u32,
        retry_at: Instant,
    },
    Stopped,
}

/// The tools of a server that are registered now, by tack name, with the
/// MCP tool they were built from (an unchanged tool keeps its registration
/// across re-registrations).
#[derive(Default)]
struct Registered {
    tools: std::collections::BTreeMap<String, (Value, Disposer)>,
}

impl Registered {
    fn dispose(&mut self) {
        for (_, (_, d)) in std::mem::take(&mut self.tools) {
            d.dispose();
        }
    }
}

/// A tool definition with the MCP tool it was built from.
pub(crate) type Built = (Value, ToolDefinition);

pub(crate) struct Server {
    pub(crate) name: String,
    config: ServerConfig,
    options: ClientOptions,
    conn: tokio::sync::Mutex<Conn>,
    registered: Mutex<Registered>,
    registrar: Mutex<Option<Arc<dyn ToolRegistrar>>>,
    /// The newest tool list seen before the plugin was installed.
    pending: Mutex<Vec<Built>>,
    /// Serializes re-registrations.
    refreshing: tokio::sync::Mutex<()>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Why this side closed the current connection, if it did.
    note: CloseNote,
    stopped: CancellationToken,
    /// The `notifications/cancelled` being sent: a stop waits for them, so
    /// the server hears of an abandoned call before its connection closes.
    cancels: TaskTracker,
    /// An HTTP server's OAuth session and client, made at its first start.
    oauth: tokio::sync::OnceCell<(Arc<OAuthSession>, AuthClient<reqwest::Client>)>,
    me: Weak<Server>,
}

/// Progress tokens that ended calls keep, so that a notification the server
/// sent just before its answer (and that rmcp hands over after the answer)
/// still reaches the host.
const ENDED_KEPT: usize = 64;

/// The calls of one connection by progress token (rmcp numbers them per
/// connection): the tack call and tool, and the call's run context (its
/// progress goes on to the client the call came from, if any).
#[derive(Default)]
pub(crate) struct ProgressCalls {
    calls: HashMap<String, (CallId, String, ToolRunContext)>,
    ended: VecDeque<String>,
}

type SharedCalls = Arc<Mutex<ProgressCalls>>;

/// Marks a call's progress token ended when the call ends (however it
/// ends); the oldest ended tokens are forgotten.
struct ProgressGuard {
    calls: SharedCalls,
    token: String,
}

impl Drop for ProgressGuard {
    fn drop(&mut self) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.ended.push_back(std::mem::take(&mut self.token));
            while calls.ended.len() > ENDED_KEPT {
                if let Some(old) = calls.ended.pop_front() {
                    calls.calls.remove(&old);
                }
            }
        }
    }
}

/// Sends `notifications/cancelled` for a request abandoned before its
/// answer (unless disarmed by taking `peer`).
struct CancelOnDrop {
    peer: Option<Peer<RoleClient>>,
    id: RequestId,
    tracker: TaskTracker,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else {
            return;
        };
        let params = CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("the tack call was cancelled".to_owned()),
        );
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(self.tracker.track_future(async move {
                let _ = peer.notify_cancelled(params).await;
            }));
        }
    }
}

/// An error and its sources, as one text.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

/// How a connection starts: `server/discover` first, for protocol
/// 2026-07-28 (stateless, every request carrying its own `_meta`); a server
/// that does not know it (an error answer, or none within 10 s) gets the
/// `initialize` handshake, offering 2025-11-25 (the server may answer with
/// an older version it speaks).
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

/// The first keyword of `input` or `output`'s schema misplaced for its
/// `type`, as tack-core's builder finds it: a
/// [`PluginError::MisplacedKeyword`].
fn misplaced(name: &str, input: &Value, output: &OutputSpec) -> Option<PluginError> {
    let probe = ToolDefinition::builder(name)
        .description("probe")
        .input_schema(input.clone())
        .output(output.clone())
        .handler(|_args: Arc<Value>, _cx: ToolRunContext| async move { Ok(Value::Null) })
        .build();
    match probe {
        Err(found @ PluginError::MisplacedKeyword { .. }) => Some(found),
        _ => None,
    }
}

/// Why a start failed: in time (worth one more try with the `initialize`
/// handshake only) or not.
enum SpawnError {
    Failed(McpError),
    TimedOut(McpError),
}

impl SpawnError {
    fn into_error(self) -> McpError {
        match self {
            SpawnError::Failed(e) | SpawnError::TimedOut(e) => e,
        }
    }
}

/// The answer to one `tools/call`.
enum Answer {
    Complete(CallToolResult),
    /// Protocol 2026-07-28: the server asks for input first.
    InputRequired(InputRequiredResult),
}

/// How many `input_required` rounds one call may take.
const MAX_INPUT_ROUNDS: usize = 10;

/// The questions of an `input_required` result, as tack's, with their keys.
fn input_requests(asked: &InputRequiredResult) -> (Vec<String>, Vec<Question>) {
    let mut keys = Vec::new();
    let mut requests = Vec::new();
    for (key, request) in asked.input_requests.iter().flatten() {
        let json = serde_json::to_value(request).unwrap_or_default();
        let kind = match json.get("method").and_then(Value::as_str) {
            Some("sampling/createMessage") => ClientRequestKind::Sampling,
            Some("elicitation/create") => ClientRequestKind::Elicitation,
            _ => ClientRequestKind::Roots,
        };
        let params = json.get("params").cloned().unwrap_or(Value::Null);
        keys.push(key.clone());
        requests.push(Question::new(key.clone(), kind, params));
    }
    (keys, requests)
}

fn token_key(token: &ProgressToken) -> String {
    match &token.0 {
        NumberOrString::String(s) => s.to_string(),
        NumberOrString::Number(n) => n.to_string(),
    }
}

/// The rmcp client handler of one server: notifications.
#[derive(Clone)]
pub(crate) struct Handler {
    server: Weak<Server>,
    name: String,
    /// This connection's calls by progress token.
    calls: SharedCalls,
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        tracing::info!(
            target: "tack_mcp::progress",
            server = %self.name,
            token = ?params.progress_token,
            progress = params.progress,
            total = ?params.total,
            message = params.message.as_deref().unwrap_or(""),
            "MCP progress"
        );
        let target = self
            .calls
            .lock()
            .ok()
            .and_then(|calls| calls.calls.get(&token_key(&params.progress_token)).cloned());
        // Progress for a token this client never sent (or for a call that
        // ended long ago) is not delivered.
        let Some((call_id, tool, cx)) = target else {
            return;
        };
        // The tack call's own client (a call served by `tack mcp serve`)
        // hears it too.
        cx.report_progress(params.progress, params.total, params.message.clone())
            .await;
        let Some(server) = self.server.upgrade() else {
            return;
        };
        if let Some(listener) = &server.options.progress {
            (listener.0)(McpProgress {
                server: self.name.clone(),
                tool,
                call_id,
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }

    #[allow(deprecated)] // logging still works on the protocol versions servers speak
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        tracing::info!(
            target: "tack_mcp::server_log",
            server = %self.name,
            level = ?params.level,
            logger = params.logger.as_deref().unwrap_or(""),
            data = %params.data,
            "MCP server log"
        );
    }

    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        if let Some(server) = self.server.upgrade() {
            tokio::spawn(async move {
                if let Err(e) = server.refresh_tools().await {
                    tracing::warn!(server = %server.name, "cannot re-register the tools after tools/list_changed: {e}");
                }
            });
        }
    }

    fn get_info(&self) -> ClientConfig {
        let implementation: Implementation = serde_json::from_value(json!({
            "name": "tack",
            "version": env!("CARGO_PKG_VERSION")
        }))
        .unwrap_or_default();
        let mut config = ClientConfig::new(ClientCapabilities::default(), implementation);
        // The newest released protocol the reference servers and the
        // conformance suite speak; a server may answer with an older one.
        config.protocol_version = ProtocolVersion::V_2025_11_25;
        config
    }
}

impl Server {
    pub(crate) fn new(name: String, config: ServerConfig, options: ClientOptions) -> Arc<Self> {
        Arc::new_cyclic(|me| Server {
            name,
            config,
            options,
            conn: tokio::sync::Mutex::new(Conn::Down {
                error: "not started".to_owned(),
                failures: 0,
                retry_at: Instant::now(),
            }),
            registered: Mutex::new(Registered::default()),
            registrar: Mutex::new(None),
            pending: Mutex::new(Vec::new()),
            refreshing: tokio::sync::Mutex::new(()),
            stderr: Arc::new(Mutex::new(VecDeque::new())),
            note: CloseNote::default(),
            stopped: CancellationToken::new(),
            cancels: TaskTracker::new(),
            oauth: tokio::sync::OnceCell::new(),
            me: me.clone(),
        })
    }

    fn handler(&self) -> Handler {
        Handler {
            server: self.me.clone(),
            name: self.name.clone(),
            calls: SharedCalls::default(),
        }
    }

    fn start_error(&self, message: impl Into<String>) -> McpError {
        let mut message = message.into();
        let lines = self.stderr.lock().map(|l| l.clone()).unwrap_or_default();
        if !lines.is_empty() {
            message.push_str("; its stderr ended with:\n");
            message.push_str(&Vec::from(lines).join("\n"));
        }
        McpError::Start {
            server: self.name.clone(),
            message,
        }
    }

    /// Starts the transport and runs the MCP initialization.
    async fn spawn(&self) -> Result<Service, McpError> {
        if let Some((session, _)) = self.oauth.get() {
            session.forget_failure();
        }
        match self.spawn_with(lifecycle()).await {
            // A server that answered `server/discover` with something other
            // than a discover result or an error (a lenient server answering
            // every unknown method with `{}`) is started again with the
            // `initialize` handshake only; one that did not answer in time
            // is not waited for twice, nor one whose sign-in failed (the
            // user is not asked twice).
            Err(SpawnError::Failed(e)) if !self.sign_in_failed() => {
                tracing::debug!(server = %self.name, "starting again with initialize only: {e}");
                self.spawn_with(ClientLifecycleMode::Initialize)
                    .await
                    .map_err(SpawnError::into_error)
            }
            other => other.map_err(SpawnError::into_error),
        }
    }

    async fn spawn_with(&self, lifecycle: ClientLifecycleMode) -> Result<Service, SpawnError> {
        let handler = self.handler();
        if let Ok(mut note) = self.note.lock() {
            *note = None;
        }
        let started = async {
            match &self.config {
                ServerConfig::Stdio {
                    command,
                    args,
                    env,
                    cwd,
                } => {
                    if let Some(check) = &self.options.before_start {
                        (check.0)(&self.name, &self.config).map_err(|why| {
                            self.start_error(format!("`{command}` was not started: {why}"))
                        })?;
                    }
                    let mut cmd = tokio::process::Command::new(command);
                    cmd.args(args).envs(env);
                    if let Some(cwd) = cwd {
                        cmd.current_dir(cwd);
                    }
                    let (transport, stderr) = LineTransport::spawn(
                        &self.name,
                        cmd,
                        self.options.max_message_bytes,
                        Arc::clone(&self.note),
                    )
                    .map_err(|e| {
                        self.start_error(format!(
                            "cannot run `{command}`: {e}; check `command` in the MCP configuration and that the program is on PATH"
                        ))
                    })?;
                    if let Some(stderr) = stderr {
                        let lines = Arc::clone(&self.stderr);
                        let name = self.name.clone();
                        tokio::spawn(async move {
                            let mut reader = tokio::io::BufReader::new(stderr).lines();
                            while let Ok(Some(line)) = reader.next_line().await {
                                tracing::debug!(target: "tack_mcp::stderr", server = %name, "{line}");
                                if let Ok(mut kept) = lines.lock() {
                                    if kept.len() == STDERR_LINES {
                                        kept.pop_front();
                                    }
                                    kept.push_back(line);
                                }
                            }
                        });
                    }
                    handler
                        .serve_with_lifecycle(transport, lifecycle)
                        .await
                        .map_err(|e| self.start_error(format!("initialization failed: {e}")))
                }
                ServerConfig::InProcess { server } => {
                    // Typed JSON-RPC messages over two channels: no JSON
                    // text to write, frame, limit and parse in one process.
                    let (to_server, from_client) = futures::channel::mpsc::unbounded();
                    let (to_client, from_server) = futures::channel::mpsc::unbounded();
                    let server = server.clone();
                    tokio::spawn(async move {
                        if let Ok(running) = server.serve((to_client, from_client)).await {
                            let _ = running.waiting().await;
                        }
                    });
                    handler
                        .serve_with_lifecycle((to_server, from_server), lifecycle)
                        .await
                        .map_err(|e| self.start_error(format!("initialization failed: {e}")))
                }
                ServerConfig::Http {
                    url,
                    headers,
                    oauth,
                } => {
                    let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
                    let mut custom = std::collections::HashMap::new();
                    let mut static_token = false;
                    for (key, value) in headers {
                        if key.eq_ignore_ascii_case("authorization") {
                            let token = value.strip_prefix("Bearer ").unwrap_or(value);
                            config = config.auth_header(token.to_owned());
                            static_token = true;
                            continue;
                        }
                        let name = http::HeaderName::try_from(key.as_str())
                            .map_err(|e| self.start_error(format!("header name {key:?}: {e}")))?;
                        let value = http::HeaderValue::try_from(value.as_str()).map_err(|e| {
                            self.start_error(format!("value of header {key:?}: {e}"))
                        })?;
                        custom.insert(name, value);
                    }
                    let limit = self.options.max_message_bytes;
                    config = config
                        .custom_headers(custom)
                        .max_sse_event_size(limit)
                        .max_json_response_size(limit);
                    // rmcp's HTTPS client (reqwest with rustls) needs a
                    // process-wide crypto provider: rustls's `ring` one, unless
                    // the host installed another first. rmcp panics when it
                    // cannot build its client (say, `SSL_CERT_FILE` names no
                    // certificates): one built here first reports that.
                    let _ = rustls::crypto::ring::default_provider().install_default();
                    reqwest::Client::builder().build().map_err(|e| {
                        self.start_error(format!(
                            "cannot make an HTTPS client for {url}: {}; check SSL_CERT_FILE and SSL_CERT_DIR",
                            error_chain(&e)
                        ))
                    })?;
                    let initialized = if static_token {
                        let transport = StreamableHttpClientTransport::from_config(config);
                        handler.serve_with_lifecycle(transport, lifecycle).await
                    } else {
                        // A server that asks for OAuth is signed in to.
                        let client = self.oauth_client(url, oauth).await?;
                        let transport = StreamableHttpClientTransport::with_client(client, config);
                        handler.serve_with_lifecycle(transport, lifecycle).await
                    };
                    initialized.map_err(|e| {
                        // A failed sign-in is said as itself, not inside
                        // rmcp's transport error.
                        let why = self
                            .oauth
                            .get()
                            .and_then(|(session, _)| session.failure())
                            .map(|failure| format!("the OAuth sign-in failed: {failure}"))
                            .unwrap_or_else(|| e.to_string());
                        self.start_error(format!("cannot initialize a session at {url}: {why}"))
                    })
                }
            }
        };
        // The start deadline does not run out while the user signs in (the
        // sign-in has a deadline of its own).
        tokio::pin!(started);
        let mut deadline = Instant::now() + self.options.startup_timeout;
        loop {
            tokio::select! {
                result = &mut started => break result.map_err(SpawnError::Failed),
                () = tokio::time::sleep_until(deadline) => {
                    if self.authorizing() {
                        deadline = Instant::now() + self.options.startup_timeout;
                        continue;
                    }
                    break Err(SpawnError::TimedOut(self.start_error(format!(
                        "no answer to `initialize` within {:?}",
                        self.options.startup_timeout
                    ))));
                }
            }
        }
    }

    /// Whether the last sign-in of this server failed.
    fn sign_in_failed(&self) -> bool {
        self.oauth
            .get()
            .is_some_and(|(session, _)| session.failure().is_some())
    }

    /// Whether a sign-in of this server is waiting for the user.
    fn authorizing(&self) -> bool {
        self.oauth.get().is_some_and(|(session, _)| {
            session
                .authorizing
                .load(std::sync::atomic::Ordering::SeqCst)
        })
    }

    /// The HTTP client of an HTTP server that may ask for OAuth: one per
    /// server, kept across restarts (with its tokens).
    async fn oauth_client(
        &self,
        url: &str,
        settings: &OAuthSettings,
    ) -> Result<OAuthHttpClient, McpError> {
        let (session, client) = self
            .oauth
            .get_or_try_init(|| async {
                let context = OAuthContext {
                    authorizer: self.options.authorizer.as_ref().map(|a| Arc::clone(&a.0)),
                    token_file: self.options.token_file.clone(),
                    timeout: self.options.authorization_timeout,
                };
                OAuthSession::connect(&self.name, url, settings.clone(), context)
                    .await
                    .map(|(session, client)| (Arc::new(session), client))
                    .map_err(|e| self.start_error(e))
            })
            .await?;
        Ok(OAuthHttpClient::new(client.clone(), Arc::clone(session)))
    }

    /// Starts the server (the first time, at connect).
    pub(crate) async fn start(&self) -> Result<(), McpError> {
        let service = self.spawn().await;
        let mut conn = self.conn.lock().await;
        match service {
            Ok(service) => {
                *conn = Conn::Up(service);
                Ok(())
            }
            Err(e) => {
                *conn = Conn::Down {
                    error: e.to_string(),
                    failures: 1,
                    retry_at: Instant::now() + self.options.backoff_after(1),
                };
                Err(e)
            }
        }
    }

    /// The peer to send to: the running connection, or a restart when the
    /// server is down and its backoff has passed.
    async fn peer(&self) -> Result<(Peer<RoleClient>, SharedCalls), ToolError> {
        let unavailable =
            |message: String| ToolError::new(message).with_kind("mcp_server_unavailable");
        let mut conn = self.conn.lock().await;
        let failures = match &*conn {
            Conn::Up(service) if !service.is_closed() && !service.peer().is_transport_closed() => {
                return Ok((service.peer().clone(), service.service().calls.clone()));
            }
            Conn::Up(_) => {
                tracing::warn!(server = %self.name, "MCP server exited; restarting it");
                0
            }
            Conn::Stopped => {
                return Err(unavailable(format!(
                    "MCP server `{}` was stopped (its plugin was uninstalled)",
                    self.name
                )));
            }
            Conn::Down {
                error,
                failures,
                retry_at,
            } => {
                let now = Instant::now();
                if now < *retry_at {
                    return Err(unavailable(format!(
                        "MCP server `{}` is not running ({error}); the next restart attempt is in {:.1}s",
                        self.name,
                        (*retry_at - now).as_secs_f64()
                    )));
                }
                *failures
            }
        };
        match self.spawn().await {
            Ok(service) => {
                let peer = (service.peer().clone(), service.service().calls.clone());
                *conn = Conn::Up(service);
                drop(conn);
                // The tools may have changed while it was down.
                if let Some(me) = self.me.upgrade() {
                    tokio::spawn(async move {
                        if let Err(e) = me.refresh_tools().await {
                            tracing::warn!(server = %me.name, "after a restart: {e}");
                        }
                    });
                }
                Ok(peer)
            }
            Err(e) => {
                let failures = failures + 1;
                let wait = self.options.backoff_after(failures);
                *conn = Conn::Down {
                    error: e.to_string(),
                    failures,
                    retry_at: Instant::now() + wait,
                };
                Err(unavailable(format!(
                    "{e}; restart attempt {failures} failed, the next is in {:.1}s",
                    wait.as_secs_f64()
                )))
            }
        }
    }

    /// Stops the server (closes the transport, ends a child process) and
    /// disposes its tools.
    pub(crate) async fn stop(&self) {
        self.stopped.cancel();
        self.cancels_sent().await;
        let old = std::mem::replace(&mut *self.conn.lock().await, Conn::Stopped);
        if let Conn::Up(mut service) = old {
            let _ = service.close_with_timeout(Duration::from_secs(2)).await;
        }
        if let Ok(mut registered) = self.registered.lock() {
            registered.dispose();
        }
    }

    /// Waits (2 s at most) for the `notifications/cancelled` being sent.
    async fn cancels_sent(&self) {
        // Calls cancelled by the stop itself send theirs as they end.
        tokio::task::yield_now().await;
        self.cancels.close();
        let _ = tokio::time::timeout(Duration::from_secs(2), self.cancels.wait()).await;
        self.cancels.reopen();
    }

    /// Stops without waiting (from a disposer, maybe outside a runtime). A
    /// `notifications/cancelled` still being sent is sent first, when a
    /// runtime is there to send it.
    pub(crate) fn stop_now(&self) {
        if !self.cancels.is_empty()
            && let Some(me) = self.me.upgrade()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move { me.stop().await });
            if let Ok(mut registered) = self.registered.lock() {
                registered.dispose();
            }
            return;
        }
        self.stopped.cancel();
        if let Ok(mut conn) = self.conn.try_lock() {
            if let Conn::Up(service) = std::mem::replace(&mut *conn, Conn::Stopped) {
                // Dropping the service cancels it; the child process is killed
                // when its transport is dropped.
                service.cancellation_token().cancel();
            }
        } else if let Some(me) = self.me.upgrade()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move { me.stop().await });
        }
        if let Ok(mut registered) = self.registered.lock() {
            registered.dispose();
        }
    }

    /// Installs: registers the newest tool list through `registrar` (which
    /// serves every later re-registration too).
    pub(crate) fn install(&self, registrar: Arc<dyn ToolRegistrar>) {
        if let Ok(mut slot) = self.registrar.lock() {
            *slot = Some(registrar);
        }
        let pending = self
            .pending
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default();
        self.replace_tools(pending);
    }

    /// The tools the server lists, as JSON.
    async fn list_tools(&self) -> Result<Vec<Value>, McpError> {
        let peer = {
            let conn = self.conn.lock().await;
            match &*conn {
                Conn::Up(service) => service.peer().clone(),
                _ => {
                    return Err(McpError::Start {
                        server: self.name.clone(),
                        message: "not running".to_owned(),
                    });
                }
            }
        };
        tokio::time::timeout(self.options.startup_timeout, self.list_pages(&peer))
            .await
            .map_err(|_| McpError::Start {
                server: self.name.clone(),
                message: format!(
                    "no complete answer to tools/list within {:?}",
                    self.options.startup_timeout
                ),
            })?
    }

    /// Reads `tools/list` page by page, within the page and byte bounds of
    /// the options: a server that keeps returning a cursor (or returns one
    /// it returned before) is read no further, and the tools so far are kept.
    async fn list_pages(&self, peer: &Peer<RoleClient>) -> Result<Vec<Value>, McpError> {
        let mut tools = Vec::new();
        let mut bytes = 0usize;
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for page in 1.. {
            let mut params = PaginatedRequestParams::default();
            params.cursor = cursor.clone();
            let result = peer
                .list_tools(Some(params))
                .await
                .map_err(|e| McpError::Start {
                    server: self.name.clone(),
                    message: format!("tools/list failed: {e}"),
                })?;
            for tool in &result.tools {
                let value = serde_json::to_value(tool).unwrap_or(Value::Null);
                bytes += serde_json::to_vec(&value).map_or(0, |v| v.len());
                tools.push(value);
            }
            let stop = if bytes > self.options.max_list_bytes {
                Some(format!(
                    "its tool definitions passed {} over {page} pages",
                    human_bytes(self.options.max_list_bytes)
                ))
            } else if result.next_cursor.is_some() && page >= self.options.max_list_pages {
                Some(format!(
                    "it still had a next page after {page} pages (the limit)"
                ))
            } else if result
                .next_cursor
                .as_ref()
                .is_some_and(|next| !seen.insert(next.clone()))
            {
                Some(format!(
                    "it returned a cursor it had returned before, on page {page}"
                ))
            } else {
                None
            };
            if let Some(why) = stop {
                tracing::warn!(
                    server = %self.name,
                    "tools/list of MCP server `{}` read no further: {why}; {} tools kept",
                    self.name,
                    tools.len()
                );
                if bytes > self.options.max_list_bytes {
                    // The page that went over is not kept whole: drop past the limit.
                    let mut kept = 0usize;
                    tools.retain(|t| {
                        kept += serde_json::to_vec(t).map_or(0, |v| v.len());
                        kept <= self.options.max_list_bytes
                    });
                }
                break;
            }
            match result.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        Ok(tools)
    }

    /// Builds the definitions of the listed tools. A tool that cannot be
    /// used (schema bomb, bad schema) is skipped with a warning naming it.
    fn definitions(&self, tools: &[Value]) -> Vec<Built> {
        let originals: Vec<&str> = tools
            .iter()
            .map(|t| t.get("name").and_then(Value::as_str).unwrap_or(""))
            .collect();
        let names = tack_tool_names(&self.name, originals.iter().copied());
        let mut out = Vec::new();
        for ((tool, original), tack_name) in tools.iter().zip(&originals).zip(names) {
            match self.definition(&tack_name, original, tool) {
                Ok(def) => out.push((tool.clone(), def)),
                Err(reason) => tracing::warn!(
                    server = %self.name,
                    tool = %original,
                    "MCP tool refused at registration: {reason}"
                ),
            }
        }
        out
    }

    fn definition(
        &self,
        tack_name: &str,
        original: &str,
        tool: &Value,
    ) -> Result<ToolDefinition, String> {
        if original.is_empty() {
            return Err("the tool has no name".to_owned());
        }
        let input = tool
            .get("inputSchema")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"}));
        let output = tool.get("outputSchema").cloned();
        for (which, schema) in [
            ("inputSchema", Some(&input)),
            ("outputSchema", output.as_ref()),
        ] {
            if let Some(schema) = schema {
                let size = serde_json::to_vec(schema)
                    .map(|v| v.len())
                    .unwrap_or(usize::MAX);
                if size > MAX_SCHEMA_BYTES {
                    return Err(format!(
                        "its {which} is {size} bytes, over the limit of {MAX_SCHEMA_BYTES}"
                    ));
                }
            }
        }
        let description = tool
            .get("description")
            .and_then(Value::as_str)
            .filter(|d| !d.trim().is_empty())
            .map(str::to_owned)
            .or_else(|| tool.get("title").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_else(|| format!("The tool `{original}` of the MCP server `{}`.", self.name));
        let annotations = tool.get("annotations");
        let tier = tier_from_annotations(annotations);
        // `idempotentHint: true`: a durable host may run an interrupted call again.
        let idempotent = annotations
            .and_then(|a| a.get("idempotentHint"))
            .and_then(Value::as_bool)
            == Some(true);
        let has_output_schema = output.is_some();
        let spec = match output {
            Some(schema) => OutputSpec::new(schema).render(|_args, value| render_structured(value)),
            None => {
                let schema: Value =
                    serde_json::from_str(PERMISSIVE_OUTPUT).map_err(|e| e.to_string())?;
                OutputSpec::new(schema).render(|_args, value| render_permissive(value))
            }
        };
        let server = self.me.clone();
        let server_name = self.name.clone();
        let original = original.to_owned();
        let tack = tack_name.to_owned();
        let mut builder = ToolDefinition::builder(tack_name)
            .description(description)
            .input_schema(input.clone())
            .output(spec.clone())
            .tier(tier)
            .idempotent(idempotent)
            .handler(move |args: Arc<Value>, cx: ToolRunContext| {
                let server = server.clone();
                let server_name = server_name.clone();
                let original = original.clone();
                let tack = tack.clone();
                async move {
                    let Some(server) = server.upgrade() else {
                        return Err(ToolError::new(format!(
                            "MCP server `{server_name}` was stopped"
                        )));
                    };
                    server
                        .call(&original, &tack, has_output_schema, &args, &cx)
                        .await
                }
            });
        if tier.is_read_only() {
            builder = builder.concurrency_safe(|_| true);
        }
        // The schema is the server's, taken as written: a keyword misplaced
        // for its `type` (which constrains nothing) is kept, with a warning.
        if let Some(PluginError::MisplacedKeyword {
            keyword,
            pointer,
            which,
            ..
        }) = misplaced(tack_name, &input, &spec)
        {
            tracing::warn!(
                server = %self.name,
                tool = %tack_name,
                "MCP tool `{tack_name}`: `{keyword}` at `{pointer}` of its {which} schema constrains nothing there (the server's schema is kept as written)",
            );
            builder = builder.allow_misplaced_keywords();
        }
        builder.build().map_err(|e| e.to_string())
    }

    /// One `tools/call` of the MCP tool `tool` (tack name `tack`), with a
    /// progress token of its own. Cancelling `cx` drops the request, which
    /// sends `notifications/cancelled` to the server.
    async fn call(
        &self,
        tool: &str,
        tack: &str,
        has_output_schema: bool,
        args: &Value,
        cx: &ToolRunContext,
    ) -> Result<Value, ToolError> {
        let (peer, calls) = self.peer().await?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = args.as_object().cloned();
        let mut round = 0;
        let mut result = loop {
            let asked = match self
                .send_bounded(&peer, &calls, params.clone(), cx, tool, tack)
                .await?
            {
                Answer::Complete(result) => break result,
                Answer::InputRequired(asked) => asked,
            };
            round += 1;
            if round > MAX_INPUT_ROUNDS {
                return Err(ToolError::new(format!(
                    "MCP server `{}`, tool `{tool}`: still asked for input after {MAX_INPUT_ROUNDS} rounds; the call was given up",
                    self.name
                ))
                .with_kind("mcp_input_rounds"));
            }
            // The server's questions go to the client of the tack call (a
            // call served by `tack mcp serve`); the call is sent again with
            // the answers and the server's state.
            let (keys, requests) = input_requests(&asked);
            let answers = cx.ask_client(requests).await.map_err(|e| {
                let kind = match e {
                    CapabilityError::InputRequired => "input_required",
                    _ => "mcp_input_required",
                };
                ToolError::new(format!(
                    "MCP server `{}`, tool `{tool}`, asked for input (input_required) that only the client of a served call can give: {e}",
                    self.name
                ))
                .with_kind(kind)
            })?;
            params.input_responses = Some(keys.into_iter().zip(answers).collect());
            params.request_state = asked.request_state;
        };
        // The usual case, a structured success, without turning the whole
        // result into JSON first (`call_result` decides the same way).
        if has_output_schema
            && result.is_error != Some(true)
            && let Some(value) = result.structured_content.take()
        {
            return Ok(value);
        }
        let result = serde_json::to_value(&result)
            .map_err(|e| ToolError::new(format!("MCP result: {e}")))?;
        call_result(&self.name, tool, has_output_schema, result)
    }

    /// [`send_call`](Self::send_call) within the host's call timeout, the
    /// call's cancellation and the server's stop.
    async fn send_bounded(
        &self,
        peer: &Peer<RoleClient>,
        calls: &SharedCalls,
        params: CallToolRequestParams,
        cx: &ToolRunContext,
        tool: &str,
        tack: &str,
    ) -> Result<Answer, ToolError> {
        let deadline = async {
            match self.options.call_timeout {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        let result = tokio::select! {
            result = self.send_call(peer, calls, params, cx, tack) => result,
            () = deadline => {
                return Err(ToolError::timeout(format!(
                        "MCP server `{}` did not answer the call to `{tool}` within {:?} (notifications/cancelled sent); the host sets this limit (ClientOptions::call_timeout)",
                        self.name,
                        self.options.call_timeout.unwrap_or_default()
                    ),
                ).with_kind("mcp_timeout"));
            }
            () = cx.cancellation().cancelled() => {
                return Err(ToolError::cancelled(format!("the call to `{tool}` on MCP server `{}` was cancelled (notifications/cancelled sent)", self.name),
                ));
            }
            () = self.stopped.cancelled() => {
                return Err(ToolError::new(format!("MCP server `{}` was stopped during the call", self.name),
                ));
            }
        };
        result.map_err(|e| self.call_error(peer, tool, e))
    }

    /// The tool error for a `tools/call` that got no result: an answer over
    /// the size limit (kind `mcp_message_too_large`), a connection that
    /// ended, or any other protocol error (kind `mcp_transport`).
    fn call_error(&self, peer: &Peer<RoleClient>, tool: &str, e: ServiceError) -> ToolError {
        let limit = self.options.max_message_bytes;
        if let ServiceError::McpError(data) = &e
            && let Some(extra) = &data.data
            && extra.get("reason").and_then(Value::as_str) == Some(TOO_LARGE)
        {
            // The stdio transport's stand-in for an answer it discarded.
            return self.too_large(tool, limit);
        }
        let http = matches!(self.config, ServerConfig::Http { .. });
        // rmcp's HTTP client refuses a JSON body or an SSE event over the
        // limit with "… exceeded the maximum size of N bytes".
        if http
            && error_chain(&e as &(dyn std::error::Error + 'static))
                .contains("exceeded the maximum size")
        {
            return self.too_large(tool, limit);
        }
        let closed = peer.is_transport_closed();
        let message = if http && !closed && matches!(e, ServiceError::TransportClosed) {
            // rmcp ends the request this way when its SSE response stream
            // stops early — which an event over the limit does.
            format!(
                "MCP server `{}`, tool `{tool}`: the HTTP response stream ended before the answer; the server is still connected. An answer larger than the client's limit of {} ends it this way (raise the limit with `ClientOptions::max_message_bytes`)",
                self.name,
                human_bytes(limit)
            )
        } else if closed || matches!(e, ServiceError::TransportClosed) {
            let note = self.note.lock().ok().and_then(|n| n.clone());
            match note {
                Some(why) => format!(
                    "MCP server `{}` failed during the call to `{tool}`: {why}; it is restarted on the next call",
                    self.name
                ),
                None => format!(
                    "MCP server `{}` exited or closed the connection during the call to `{tool}` ({e}); it is restarted on the next call",
                    self.name
                ),
            }
        } else {
            format!("MCP server `{}`, tool `{tool}`: {e}", self.name)
        };
        ToolError::new(message).with_kind("mcp_transport")
    }

    /// The tool error for an answer over the size limit.
    fn too_large(&self, tool: &str, limit: usize) -> ToolError {
        ToolError::new(format!(
                "MCP server `{}`, tool `{tool}`: the answer is larger than the client's limit of {} ({limit} bytes) and was discarded; raise the limit with `ClientOptions::max_message_bytes` if its answers are this large",
                self.name,
                human_bytes(limit)
            ),
        )
        .with_kind("mcp_message_too_large")
    }

    /// Sends one `tools/call` and waits for its result. rmcp gives every
    /// request a progress token of its own; it is recorded with the tack
    /// call and tool until the call ends, so the server's progress reaches
    /// the host's listener. Dropping the future (a cancelled call) sends
    /// `notifications/cancelled` for the request.
    async fn send_call(
        &self,
        peer: &Peer<RoleClient>,
        calls: &SharedCalls,
        params: CallToolRequestParams,
        cx: &ToolRunContext,
        tack: &str,
    ) -> Result<Answer, ServiceError> {
        let handle = peer
            .send_request_with_option(
                ClientRequest::CallToolRequest(CallToolRequest::new(params)),
                PeerRequestOptions::no_options(),
            )
            .await?;
        let token = token_key(&handle.progress_token);
        if let Ok(mut calls) = calls.lock() {
            calls.calls.insert(
                token.clone(),
                (cx.call_id().clone(), tack.to_owned(), cx.clone()),
            );
        }
        let _ended = ProgressGuard {
            calls: Arc::clone(calls),
            token,
        };
        let mut abandoned = CancelOnDrop {
            peer: Some(peer.clone()),
            id: handle.id.clone(),
            tracker: self.cancels.clone(),
        };
        let result = handle.await_response().await;
        abandoned.peer = None;
        match result? {
            ServerResult::CallToolResult(result) => Ok(Answer::Complete(result)),
            ServerResult::InputRequiredResult(asked) => Ok(Answer::InputRequired(asked)),
            ServerResult::EmptyResult(_) => {
                Ok(Answer::Complete(CallToolResult::success(Vec::new())))
            }
            _ => Err(ServiceError::UnexpectedResponse),
        }
    }

    /// Lists the tools and builds their definitions.
    pub(crate) async fn list_definitions(&self) -> Result<Vec<Built>, McpError> {
        let tools = self.list_tools().await?;
        Ok(self.definitions(&tools))
    }

    /// Lists the tools and registers them (replacing what was registered),
    /// after `tools/list_changed` or a restart.
    pub(crate) async fn refresh_tools(&self) -> Result<usize, McpError> {
        let _one_at_a_time = self.refreshing.lock().await;
        let definitions = self.list_definitions().await?;
        Ok(self.replace_tools(definitions))
    }

    /// Replaces the registered tools by `definitions`, under one lock (no
    /// other re-registration interleaves) and in one atomic step of the
    /// registry ([`ToolRegistrar::replace_tools`]): a tool whose MCP
    /// definition is unchanged keeps its registration (calls in flight are
    /// untouched), a removed one is unregistered, a changed one swapped for
    /// its new definition (a concurrent call finds the old or the new one,
    /// never neither) and a new one registered. A tool the registry refuses
    /// is skipped with a warning naming it, and the rest go through.
    pub(crate) fn replace_tools(&self, definitions: Vec<Built>) -> usize {
        let Some(registrar) = self.registrar.lock().ok().and_then(|r| r.clone()) else {
            // Not installed yet: installing registers the newest list.
            if let Ok(mut pending) = self.pending.lock() {
                *pending = definitions;
            }
            return 0;
        };
        if self.stopped.is_cancelled() {
            return 0;
        }
        let Ok(mut registered) = self.registered.lock() else {
            return 0;
        };
        let mut old = std::mem::take(&mut registered.tools);
        let mut next = std::collections::BTreeMap::new();
        let mut fresh = Vec::new();
        for (source, def) in definitions {
            let name = def.name().as_str().to_owned();
            match old.remove(&name) {
                Some((was, disposer)) if was == source => {
                    next.insert(name, (was, disposer));
                }
                // Changed: its old registration is removed by the replace.
                Some((_, disposer)) => {
                    old.insert(name, (Value::Null, disposer));
                    fresh.push((source, def));
                }
                None => fresh.push((source, def)),
            }
        }
        for (name, entry) in self.replace_atomically(&*registrar, old, fresh) {
            next.insert(name, entry);
        }
        let count = next.len();
        registered.tools = next;
        count
    }

    /// One atomic replace; a definition the registry refuses is dropped
    /// (with a warning) and the replace tried again without it. A registry
    /// without atomic replacement gets the removals disposed and the
    /// additions registered one by one.
    fn replace_atomically(
        &self,
        registrar: &dyn ToolRegistrar,
        old: BTreeMap<String, (Value, Disposer)>,
        mut fresh: Vec<Built>,
    ) -> Vec<(String, (Value, Disposer))> {
        let remove: Vec<String> = old.keys().cloned().collect();
        // The old disposers only remove their own registrations: after the
        // replace they are no-ops, and dropping them (at return) changes
        // nothing (dropping a disposer never does).
        let remove = &remove;
        loop {
            let sources: Vec<(String, Value)> = fresh
                .iter()
                .map(|(source, def)| (def.name().as_str().to_owned(), source.clone()))
                .collect();
            let defs = fresh.iter().map(|(_, def)| def.clone()).collect();
            match registrar.replace_tools(Scope::Global, remove, defs) {
                Ok(disposers) => {
                    return sources
                        .into_iter()
                        .zip(disposers)
                        .map(|((name, source), d)| (name, (source, d)))
                        .collect();
                }
                Err(PluginError::Unsupported { .. }) => {
                    return self.replace_one_by_one(registrar, old, fresh);
                }
                Err(e) => {
                    let refused = match &e {
                        PluginError::DuplicateTool { name, .. }
                        | PluginError::ReservedTool { name, .. }
                        | PluginError::InvalidSchema { name, .. } => Some(name.clone()),
                        _ => None,
                    };
                    let before = fresh.len();
                    if let Some(refused) = &refused {
                        fresh.retain(|(_, def)| def.name().as_str() != refused);
                    }
                    if refused.is_none() || fresh.len() == before {
                        tracing::warn!(server = %self.name, "MCP tools not re-registered: {e}");
                        // None of the server's tools stays registered.
                        for (_, (_, disposer)) in old {
                            disposer.dispose();
                        }
                        return Vec::new();
                    }
                    tracing::warn!(server = %self.name, tool = ?refused, "MCP tool not registered: {e}");
                }
            }
        }
    }

    /// The fallback for a registry without atomic replacement.
    fn replace_one_by_one(
        &self,
        registrar: &dyn ToolRegistrar,
        old: BTreeMap<String, (Value, Disposer)>,
        fresh: Vec<Built>,
    ) -> Vec<(String, (Value, Disposer))> {
        for (_, (_, disposer)) in old {
            disposer.dispose();
        }
        let mut out = Vec::new();
        for (source, def) in fresh {
            let name = def.name().as_str().to_owned();
            match registrar.register_tool(Scope::Global, def) {
                Ok(disposer) => out.push((name, (source, disposer))),
                Err(e) => {
                    tracing::warn!(server = %self.name, tool = %name, "MCP tool not registered: {e}");
                }
            }
        }
        out
    }

    /// The tack names registered now.
    pub(crate) fn tool_names(&self) -> Vec<String> {
        self.registered
            .lock()
            .map(|r| r.tools.keys().cloned().collect())
            .unwrap_or_default()
    }
}
