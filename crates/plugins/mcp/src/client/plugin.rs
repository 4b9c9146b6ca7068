//! The plugin: connects the configured servers and registers their tools.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tack_core::hook::Disposer;
use tack_core::plugin::ToolRegistrar;
use tack_core::plugin::{Plugin, PluginContext, PluginError};

use super::progress::{McpProgress, ProgressListener};
use super::server::Server;
use crate::config::{McpConfig, ServerConfig};
use crate::error::McpError;
use crate::oauth::{Authorizer, TokenFile};
use crate::stdio::DEFAULT_MAX_MESSAGE_BYTES;

/// The plugin's name.
pub const PLUGIN_NAME: &str = "mcp";

/// How long an MCP tool call waits for its answer by default: 10 minutes
/// (see [`ClientOptions::call_timeout`]).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(600);

/// How the client treats its servers.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ClientOptions {
    /// How long a server may take to start and answer `initialize` (and
    /// `tools/list`).
    pub startup_timeout: Duration,
    /// The wait after the first failed start; it doubles with every further
    /// failure.
    pub backoff_base: Duration,
    /// The longest wait between restart attempts.
    pub backoff_max: Duration,
    /// The largest message a server may send, in bytes (default
    /// [`DEFAULT_MAX_MESSAGE_BYTES`], 8 MiB): a stdio line, a streamable-HTTP
    /// JSON body or SSE event. A larger answer is discarded as it arrives
    /// (never held whole in memory) and its call fails `EXECUTION_FAILED`
    /// (kind `mcp_message_too_large`) naming the server and the limit; the
    /// server stays connected and serves the next call. On stdio, a message
    /// that goes on past 16 times the limit without ending closes the
    /// connection, and the server is restarted on the next call.
    pub max_message_bytes: usize,
    /// How long one `tools/call` may wait for its answer (default 10
    /// minutes; `None`: as long as it takes). Past it the call fails
    /// `TIMEOUT` and `notifications/cancelled` is sent, so a server that
    /// never answers cannot hang an unattended run.
    pub call_timeout: Option<Duration>,
    /// The most `tools/list` pages read from one server (default 100): a
    /// server that always returns a `nextCursor` is read this far, its tools
    /// so far kept, with a warning.
    pub max_list_pages: usize,
    /// The most bytes of tool definitions read from one server's
    /// `tools/list` pages together (default 16 MiB); past it the listing
    /// stops as at [`max_list_pages`](Self::max_list_pages).
    pub max_list_bytes: usize,
    /// Who hears the servers' progress notifications (besides tracing).
    pub(crate) progress: Option<ProgressListener>,
    /// Asked before every start of a stdio server, restarts included.
    pub(crate) before_start: Option<StartCheck>,
    /// How long a sign-in waits for the user's browser to come back
    /// (default 5 minutes).
    pub authorization_timeout: Duration,
    /// Shows the user an OAuth sign-in (none: servers asking for one fail
    /// to start, saying so).
    pub(crate) authorizer: Option<AuthorizerHandle>,
    /// Where OAuth tokens are kept between sessions (none: in memory).
    pub(crate) token_file: Option<TokenFile>,
}

/// A host's [`Authorizer`] (see [`ClientOptions::authorizer`]).
#[derive(Clone)]
pub(crate) struct AuthorizerHandle(pub(crate) Arc<dyn Authorizer>);

impl std::fmt::Debug for AuthorizerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Authorizer(..)")
    }
}

/// A host's check before a stdio server's program starts (see
/// [`ClientOptions::before_start`]).
#[derive(Clone)]
pub(crate) struct StartCheck(pub(crate) Arc<StartCheckFn>);

/// The function behind a [`StartCheck`].
type StartCheckFn = dyn Fn(&str, &ServerConfig) -> Result<(), String> + Send + Sync;

impl std::fmt::Debug for StartCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StartCheck(..)")
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            startup_timeout: Duration::from_secs(30),
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            call_timeout: Some(DEFAULT_CALL_TIMEOUT),
            max_list_pages: 100,
            max_list_bytes: 16 * 1024 * 1024,
            progress: None,
            before_start: None,
            authorization_timeout: Duration::from_secs(300),
            authorizer: None,
            token_file: None,
        }
    }
}

impl ClientOptions {
    /// Sets the startup timeout.
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// Sets the first and the longest restart backoff.
    pub fn backoff(mut self, base: Duration, max: Duration) -> Self {
        self.backoff_base = base;
        self.backoff_max = max;
        self
    }

    /// Sets how long one `tools/call` may wait for its answer (see
    /// [`call_timeout`](Self::call_timeout); `None`: no limit).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tack_mcp::ClientOptions;
    /// let options = ClientOptions::default().call_timeout(Some(Duration::from_secs(60)));
    /// assert_eq!(options.call_timeout, Some(Duration::from_secs(60)));
    /// assert_eq!(ClientOptions::default().call_timeout, Some(tack_mcp::DEFAULT_CALL_TIMEOUT));
    /// ```
    pub fn call_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Sets the bounds of one server's `tools/list` (pages, and bytes of
    /// tool definitions over all pages); at least one page and 64 KiB.
    pub fn list_limits(mut self, pages: usize, bytes: usize) -> Self {
        self.max_list_pages = pages.max(1);
        self.max_list_bytes = bytes.max(64 * 1024);
        self
    }

    /// Sets the largest message a server may send (see
    /// [`max_message_bytes`](Self::max_message_bytes)); at least 1 KiB.
    ///
    /// ```
    /// use tack_mcp::ClientOptions;
    /// // Servers whose answers carry large images:
    /// let options = ClientOptions::default().max_message_bytes(64 * 1024 * 1024);
    /// assert_eq!(options.max_message_bytes, 64 * 1024 * 1024);
    /// ```
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes.max(1024);
        self
    }

    /// Delivers the servers' progress notifications to `listener`, as
    /// [`McpProgress`] host events naming the server, the tool and the tack
    /// call (they are also `tracing` events of target `tack_mcp::progress`,
    /// with or without a listener). The listener runs on the connection's
    /// task: keep it short, e.g. forward into a channel the host reads.
    ///
    /// ```
    /// use tack_mcp::{ClientOptions, McpProgress};
    ///
    /// let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<McpProgress>();
    /// let options = ClientOptions::default().on_progress(move |event| {
    ///     let _ = tx.send(event);
    /// });
    /// # drop(options);
    /// // ... connect `McpClient` with `options`, then:
    /// // while let Some(p) = rx.recv().await { println!("{} {}/{:?}", p.tool, p.progress, p.total) }
    /// # assert!(rx.try_recv().is_err());
    /// ```
    pub fn on_progress(mut self, listener: impl Fn(McpProgress) + Send + Sync + 'static) -> Self {
        self.progress = Some(ProgressListener(Arc::new(listener)));
        self
    }

    /// Asks `check` before every start of a stdio server, the restarts after
    /// a crash included, with the server's name and configuration; an
    /// `Err(reason)` keeps the program from starting, and the start fails
    /// with the reason (the server's tools are missing until a later start
    /// is allowed). A host that vouched for what a server runs when the
    /// session began checks here that it has not changed since.
    ///
    /// ```
    /// use tack_mcp::{ClientOptions, ServerConfig};
    /// let options = ClientOptions::default().before_start(|name, config| match config {
    ///     ServerConfig::Stdio { command, .. } if command.starts_with("./") => {
    ///         Err(format!("{name}: programs inside the workspace are not started"))
    ///     }
    ///     _ => Ok(()),
    /// });
    /// # drop(options);
    /// ```
    pub fn before_start(
        mut self,
        check: impl Fn(&str, &ServerConfig) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.before_start = Some(StartCheck(Arc::new(check)));
        self
    }

    /// Has `authorizer` show the user the OAuth sign-in of an HTTP server
    /// that asks for one (its browser comes back to a loopback listener of
    /// tack-mcp's). Without an authorizer such a server fails to start,
    /// saying so; servers that need no sign-in are not affected.
    pub fn authorizer(mut self, authorizer: impl Authorizer) -> Self {
        self.authorizer = Some(AuthorizerHandle(Arc::new(authorizer)));
        self
    }

    /// Keeps OAuth tokens in `path` between sessions (one JSON file, mode
    /// 0600, each server's tokens under its URL; created with its
    /// directory, mode 0700). Choose a place outside the workspace the
    /// tools can read, e.g. the user's state directory. Without a file,
    /// tokens live as long as the process.
    pub fn token_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.token_file = Some(TokenFile::new(path.into()));
        self
    }

    /// Sets how long a sign-in waits for the user's browser to come back.
    pub fn authorization_timeout(mut self, timeout: Duration) -> Self {
        self.authorization_timeout = timeout;
        self
    }

    /// The wait after `failures` failed starts in a row (at least 1).
    pub(crate) fn backoff_after(&self, failures: u32) -> Duration {
        let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(16));
        self.backoff_base
            .saturating_mul(factor)
            .min(self.backoff_max)
    }
}

/// The MCP client plugin: each configured server's tools as
/// `mcp__<server>__<tool>` tack tools, every call through the host's
/// pipeline.
///
/// Connecting is asynchronous, installing is not, so a host first
/// [`connect`](Self::connect)s — servers start concurrently, one that fails
/// is reported in [`failures`](Self::failures) and the others go on — and
/// then installs the plugin, which registers the tools through `registrar`
/// (the host's tool registry; it also serves the re-registrations after
/// `notifications/tools/list_changed` and restarts). Uninstalling stops
/// every server and disposes its tools.
pub struct McpClient {
    servers: Vec<Arc<Server>>,
    failures: Vec<McpError>,
    registrar: Arc<dyn ToolRegistrar>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("servers", &self.server_names())
            .field("failures", &self.failures)
            .finish_non_exhaustive()
    }
}

impl McpClient {
    /// Starts every server of `config` and lists its tools.
    pub async fn connect(
        config: &McpConfig,
        options: ClientOptions,
        registrar: Arc<dyn ToolRegistrar>,
    ) -> Self {
        let servers: Vec<Arc<Server>> = config
            .servers()
            .map(|(name, server)| Server::new(name.to_owned(), server.clone(), options.clone()))
            .collect();
        let started = futures::future::join_all(servers.iter().map(|server| async move {
            server.start().await?;
            server.list_definitions().await
        }))
        .await;
        let mut failures = Vec::new();
        for (server, result) in servers.iter().zip(started) {
            match result {
                // Kept for install (unless a tools/list_changed brought a newer list).
                Ok(definitions) => server.replace_tools(definitions),
                // Still installed: a call restarts it (with backoff).
                Err(e) => {
                    tracing::warn!(server = %server.name, "{e}");
                    failures.push(e);
                    0
                }
            };
        }
        Self {
            servers,
            failures,
            registrar,
        }
    }

    /// The servers that failed to start (each error names its server).
    pub fn failures(&self) -> &[McpError] {
        &self.failures
    }

    /// The configured server names.
    pub fn server_names(&self) -> Vec<&str> {
        self.servers.iter().map(|s| s.name.as_str()).collect()
    }

    /// The tack names of the tools registered now, over all servers.
    pub fn tool_names(&self) -> Vec<String> {
        self.servers.iter().flat_map(|s| s.tool_names()).collect()
    }

    /// Stops every server and disposes its tools (what uninstalling does,
    /// waiting for the servers to close).
    pub async fn shutdown(&self) {
        for server in &self.servers {
            server.stop().await;
        }
    }
}

impl Plugin for McpClient {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        for server in &self.servers {
            server.install(Arc::clone(&self.registrar));
        }
        let servers = self.servers.clone();
        cx.keep(Disposer::new(move || {
            for server in &servers {
                server.stop_now();
            }
        }));
        Ok(())
    }
}
