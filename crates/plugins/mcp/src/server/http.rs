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
    /// lets any client that reaches the address in (for a host to allow
    /// only on a loopback address, when the user asked for it).
    pub bearer_token: Option<String>,
    /// The largest request body, in bytes (larger ones get 413).
    pub max_body_bytes: usize,
    /// The most connections open at once; one more is answered 503 and
    /// closed at once (it does not wait for a slot).
    pub max_connections: usize,
    /// The most MCP sessions open at once; a new session past it gets 503.
    pub max_sessions: usize,
    /// How long a connection may take to send a request's headers, and
    /// then its body: a connection idle or slower than that is closed, so
    /// idle or slow connections cannot hold the server's slots.
    pub read_timeout: std::time::Duration,
    /// Extra `Host` names accepted besides the loopback ones
    /// (DNS-rebinding protection refuses every other `Host`).
    pub allowed_hosts: Vec<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            bearer_token: None,
            max_body_bytes: 4 * 1024 * 1024,
            max_connections: 256,
            max_sessions: 64,
            read_timeout: std::time::Duration::from_secs(10),
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

/// A JSON-RPC error as an HTTP answer (`id` null: the request was not read).
fn rpc_error(status: StatusCode, code: i32, message: &str) -> Response<BoxBody<Bytes, Infallible>> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

/// Whether two byte strings are equal, in a time that does not depend on
/// where they differ (a token compared so leaks nothing by its timing).
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Reads a POST body within the size limit and the read deadline. `Err` is
/// the answer: 413 over the limit, 408 too slow, 400 not JSON.
async fn read_body(
    request: Request<hyper::body::Incoming>,
    limit: usize,
    deadline: std::time::Duration,
) -> Result<(http::request::Parts, Bytes), Response<BoxBody<Bytes, Infallible>>> {
    let (parts, body) = request.into_parts();
    let limited = http_body_util::Limited::new(body, limit);
    let bytes = match tokio::time::timeout(deadline, limited.collect()).await {
        Err(_) => {
            return Err(text(
                StatusCode::REQUEST_TIMEOUT,
                &format!(
                    "the request body did not arrive within {} s",
                    deadline.as_secs()
                ),
            ));
        }
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return Err(rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                -32600,
                &format!("the request body is larger than this server's limit of {limit} bytes"),
            ));
        }
        Ok(Err(e)) => {
            return Err(text(
                StatusCode::BAD_REQUEST,
                &format!("cannot read the request body: {e}"),
            ));
        }
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            -32700,
            &format!("parse error: the request body is not JSON ({e})"),
        ));
    }
    Ok((parts, bytes))
}

fn text(status: StatusCode, message: &str) -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from(message.to_owned())).boxed());
    *response.status_mut() = status;
    response
}

/// Whether a body read by [`read_body`] is a JSON array (a batch).
fn is_batch(body: &[u8]) -> bool {
    body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
}

type Service = StreamableHttpService<McpServer, LocalSessionManager>;

/// A JSON-RPC batch. Protocol `2025-03-26` has them (its clients send no
/// `MCP-Protocol-Version` header): each message is handled in turn and the
/// answers come back as one JSON array (`202` when there are none). Later
/// versions have none: `400` with `-32600`.
async fn batch(
    service: &Service,
    parts: http::request::Parts,
    body: Bytes,
) -> Response<BoxBody<Bytes, Infallible>> {
    let version = parts
        .headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if !parts.headers.contains_key("mcp-session-id")
        || version.as_deref().is_some_and(|v| v != "2025-03-26")
    {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            -32600,
            &format!(
                "JSON-RPC batches are part of MCP protocol version 2025-03-26 only (this request is of {}): send each message in its own request",
                version
                    .as_deref()
                    .unwrap_or("a session not yet initialized")
            ),
        );
    }
    let items: Vec<serde_json::Value> = match serde_json::from_slice(&body) {
        Ok(items) => items,
        Err(_) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                -32700,
                "parse error: the batch is not a JSON array",
            );
        }
    };
    if items.is_empty() {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            -32600,
            "an empty JSON-RPC batch is not a request",
        );
    }
    let mut answers = Vec::new();
    for item in items {
        if item.get("method").and_then(serde_json::Value::as_str) == Some("initialize") {
            answers.push(serde_json::json!({"jsonrpc": "2.0", "id": item.get("id").cloned().unwrap_or_default(),
                "error": {"code": -32600, "message": "initialize must not be part of a JSON-RPC batch"}}));
            continue;
        }
        let mut one = Request::new(Full::new(Bytes::from(item.to_string())));
        *one.method_mut() = parts.method.clone();
        *one.uri_mut() = parts.uri.clone();
        *one.headers_mut() = parts.headers.clone();
        let response = service.handle(one).await;
        let is_json = response
            .headers()
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("application/json"));
        let Ok(collected) = response.into_body().collect().await;
        let bytes = collected.to_bytes();
        if is_json {
            if let Ok(message) = serde_json::from_slice::<serde_json::Value>(&bytes) {
                answers.push(message);
            }
            continue;
        }
        // An event stream: the messages are its `data:` lines.
        for line in String::from_utf8_lossy(&bytes).lines() {
            if let Some(data) = line.strip_prefix("data:")
                && let Ok(message) = serde_json::from_str::<serde_json::Value>(data.trim())
                && (message.get("result").is_some() || message.get("error").is_some())
            {
                answers.push(message);
            }
        }
    }
    if answers.is_empty() {
        let mut response = Response::new(Full::new(Bytes::new()).boxed());
        *response.status_mut() = StatusCode::ACCEPTED;
        return response;
    }
    let mut response = Response::new(
        Full::new(Bytes::from(serde_json::Value::Array(answers).to_string())).boxed(),
    );
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
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
    let max_body = options.max_body_bytes;
    let read_timeout = options
        .read_timeout
        .max(std::time::Duration::from_millis(100));
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // Out of file descriptors and the like: a moment, then on.
                Err(e) => {
                    tracing::warn!("MCP HTTP accept: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => return Ok(()),
        };
        let Ok(permit) = Arc::clone(&slots).try_acquire_owned() else {
            // Full: this one is told so and closed, never queued behind the others.
            tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                let mut stream = stream;
                let _ = tokio::time::timeout(
                    std::time::Duration::from_secs(1),
                    stream.write_all(b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"),
                )
                .await;
            });
            continue;
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
                                .map(hyper::header::HeaderValue::as_bytes);
                            if !given.is_some_and(|given| same_secret(given, token.as_bytes())) {
                                let mut response = text(
                                    StatusCode::UNAUTHORIZED,
                                    "this tack MCP server needs `Authorization: Bearer TOKEN` (the token `tack mcp serve` printed where to find)",
                                );
                                response.headers_mut().insert(
                                    hyper::header::WWW_AUTHENTICATE,
                                    hyper::header::HeaderValue::from_static("Bearer"),
                                );
                                return Ok(response);
                            }
                        }
                        let method = request.method().clone();
                        let opens_session = method == hyper::Method::POST
                            && !request.headers().contains_key("mcp-session-id");
                        if opens_session && sessions.sessions.read().await.len() >= max_sessions {
                            return Ok(text(
                                StatusCode::SERVICE_UNAVAILABLE,
                                &format!(
                                    "this tack MCP server has {max_sessions} sessions open, its limit: close one (DELETE /mcp with its Mcp-Session-Id) and retry"
                                ),
                            ));
                        }
                        if method == hyper::Method::POST {
                            let (parts, body) =
                                match read_body(request, max_body, read_timeout).await {
                                    Ok(read) => read,
                                    Err(response) => return Ok(response),
                                };
                            if is_batch(&body) {
                                return Ok(batch(&service, parts, body).await);
                            }
                            let request = Request::from_parts(parts, Full::new(body));
                            return Ok(service.handle(request).await);
                        }
                        let mut response = service.handle(request).await;
                        // A session closed: 200 (clients take 202 for a failure).
                        if method == hyper::Method::DELETE
                            && response.status() == StatusCode::ACCEPTED
                        {
                            *response.status_mut() = StatusCode::OK;
                        }
                        Ok(response)
                    }
                },
            );
            let io = hyper_util::rt::TokioIo::new(stream);
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(read_timeout)
                .serve_connection(io, handler);
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
