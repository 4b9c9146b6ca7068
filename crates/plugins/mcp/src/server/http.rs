//! Serving over streamable HTTP, with the safety a local server needs.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::{Request, Response, StatusCode};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::handler::McpServer;
use crate::error::McpError;

/// How the HTTP transport is served.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpOptions {
    /// A token clients must send as `Authorization: Bearer TOKEN`; `None`
    /// lets any local client in.
    pub bearer_token: Option<String>,
    /// The largest request body, in bytes (larger ones get 413).
    pub max_body_bytes: usize,
    /// The most connections served at once (more wait).
    pub max_connections: usize,
    /// The most MCP sessions open at once; a new session past it gets 503.
    pub max_sessions: usize,
    /// Extra `Host` names accepted besides the loopback ones
    /// (DNS-rebinding protection refuses every other `Host`).
    pub allowed_hosts: Vec<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            bearer_token: None,
            max_body_bytes: 4 * 1024 * 1024,
            max_connections: 32,
            max_sessions: 64,
            allowed_hosts: Vec::new(),
        }
    }
}

impl HttpOptions {
    /// Requires `Authorization: Bearer token`.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }
}

fn text(status: StatusCode, message: &str) -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from(message.to_owned())).boxed());
    *response.status_mut() = status;
    response
}

/// Serves `server` over streamable HTTP at `/mcp` on `listener` until
/// `shutdown` fires. `Host` must be a loopback name (or one of
/// [`HttpOptions::allowed_hosts`]); a browser `Origin` must be a loopback
/// origin; bodies over the limit are refused with 413.
///
/// # Errors
///
/// [`McpError::Serve`] if accepting connections fails.
pub async fn serve_http(
    server: McpServer,
    listener: TcpListener,
    options: HttpOptions,
    shutdown: CancellationToken,
) -> Result<(), McpError> {
    let local: SocketAddr = listener.local_addr().map_err(|e| McpError::Serve {
        message: e.to_string(),
    })?;
    let mut hosts: Vec<String> = vec![
        "localhost".into(),
        "127.0.0.1".into(),
        "[::1]".into(),
        "::1".into(),
    ];
    hosts.push(local.to_string());
    hosts.extend(options.allowed_hosts.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(vec![
            "http://localhost:*".to_owned(),
            "http://127.0.0.1:*".to_owned(),
            "http://[::1]:*".to_owned(),
        ])
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(shutdown.child_token());
    let sessions = Arc::new(LocalSessionManager::default());
    let service = StreamableHttpService::new(
        move || Ok(server.for_session()),
        Arc::clone(&sessions),
        config,
    );
    let max_sessions = options.max_sessions.max(1);
    let token = options
        .bearer_token
        .map(|t| Arc::<str>::from(format!("Bearer {t}")));
    let slots = Arc::new(tokio::sync::Semaphore::new(options.max_connections.max(1)));
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => accepted.map_err(|e| McpError::Serve { message: e.to_string() })?,
            () = shutdown.cancelled() => return Ok(()),
        };
        let Ok(permit) = Arc::clone(&slots).acquire_owned().await else {
            return Ok(());
        };
        let service = service.clone();
        let token = token.clone();
        let shutdown = shutdown.clone();
        let sessions = Arc::clone(&sessions);
        tokio::spawn(async move {
            let _permit = permit;
            let handler = hyper::service::service_fn(
                move |request: Request<hyper::body::Incoming>| {
                    let service = service.clone();
                    let token = token.clone();
                    let sessions = Arc::clone(&sessions);
                    async move {
                        if request.uri().path() != "/mcp" {
                            return Ok::<_, Infallible>(text(
                                StatusCode::NOT_FOUND,
                                "the MCP endpoint is /mcp",
                            ));
                        }
                        if let Some(token) = token {
                            let given = request
                                .headers()
                                .get(hyper::header::AUTHORIZATION)
                                .and_then(|v| v.to_str().ok());
                            if given != Some(&*token) {
                                let mut response = text(
                                    StatusCode::UNAUTHORIZED,
                                    "this tack MCP server needs `Authorization: Bearer TOKEN`",
                                );
                                response.headers_mut().insert(
                                    hyper::header::WWW_AUTHENTICATE,
                                    hyper::header::HeaderValue::from_static("Bearer"),
                                );
                                return Ok(response);
                            }
                        }
                        let opens_session = request.method() == hyper::Method::POST
                            && !request.headers().contains_key("mcp-session-id");
                        if opens_session && sessions.sessions.read().await.len() >= max_sessions {
                            return Ok(text(
                                StatusCode::SERVICE_UNAVAILABLE,
                                &format!(
                                    "this tack MCP server has {max_sessions} sessions open, its limit: close one (DELETE /mcp with its Mcp-Session-Id) and retry"
                                ),
                            ));
                        }
                        Ok(service.handle(request).await)
                    }
                },
            );
            let io = hyper_util::rt::TokioIo::new(stream);
            let connection =
                hyper::server::conn::http1::Builder::new().serve_connection(io, handler);
            tokio::select! {
                result = connection => {
                    if let Err(e) = result {
                        tracing::debug!("MCP HTTP connection: {e}");
                    }
                }
                () = shutdown.cancelled() => {}
            }
        });
    }
}
