//! The page's HTTP server: the page, its assets, the events stream and
//! the approval answers, behind the session's token and Host and Origin
//! checks.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State as AxumState};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tack_agent::Record;
use tack_permission::{Answer, ApprovalInbox, PendingApproval};
use tack_pipeline::ToolRegistry;
use tokio::sync::{broadcast, watch};

use crate::page::Page;
use crate::token::{new_token, same_token};

const PAGE: &str = include_str!("../assets/page.html");
const SCRIPT: &str = include_str!("../assets/app.js");
const STYLE: &str = include_str!("../assets/style.css");
const ICON: &str = include_str!("../assets/icon.svg");

/// Every response's Content-Security-Policy: the page's own script, style
/// and events, nothing else (no inline script or style, no other origin).
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// How long an approval waits for the page's answer before it is denied.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(300);

/// How long the page may be gone (a reload, a reconnection) before its
/// pending approvals are denied and a finished session's server stops.
const CLOSED_GRACE: Duration = Duration::from_secs(2);

/// How often, at most, a live page is sent the timeline again.
const TIMELINE_EVERY: Duration = Duration::from_millis(250);

/// The server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UiError {
    /// The address could not be bound.
    #[error("cannot serve the page on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// No random token could be made.
    #[error("cannot make the page's token (reading /dev/urandom): {0}")]
    Token(std::io::Error),
}

/// What the page is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// A running session: approvals are answered on the page.
    Live,
    /// A verified session log, shown again.
    Replay,
}

/// A session's page, served on a local address: open [`url`](Self::url).
///
/// Live, it is fed the session's records ([`record`](Self::record), an
/// [`EventBus`](tack_agent::EventBus) observer) and answers the approval
/// requests of a [`ChannelApprover`](tack_permission::ChannelApprover)'s
/// inbox; replayed, it is given the log's records at the start.
///
/// Every request must carry the session's token (the URL's first path
/// segment), name the server in its `Host` header (no DNS rebinding) and,
/// when it has an `Origin` (every answer must), come from the page's own.
#[derive(Clone, Debug)]
pub struct UiServer {
    shared: Arc<Shared>,
    url: String,
}

#[derive(Debug)]
struct Shared {
    token: String,
    /// The `Host` values accepted (`None`: any with the right port, for an
    /// unspecified address such as 0.0.0.0).
    hosts: Option<Vec<String>>,
    port: u16,
    state: Mutex<State>,
    frames: broadcast::Sender<Arc<str>>,
    /// The pages open now, and whether one ever was. (Never changed while
    /// `state` is locked, so neither lock waits for the other.)
    presence: watch::Sender<Presence>,
    approval_timeout: Duration,
    mode: Mode,
}

#[derive(Clone, Copy, Debug, Default)]
struct Presence {
    open: usize,
    ever: bool,
}

impl Presence {
    /// A page was open and none is now.
    fn closed(self) -> bool {
        self.ever && self.open == 0
    }
}

#[derive(Debug)]
struct State {
    page: Page,
    /// Every item frame and prompt so far, in order: what a new page is sent.
    history: Vec<Arc<str>>,
    /// The latest timeline frame.
    timeline: Option<Arc<str>>,
    /// Whether records came since it was made.
    timeline_stale: bool,
    /// Whether a task will send it soon.
    timeline_due: bool,
    /// The latest status frame.
    status: Arc<str>,
    pending: HashMap<u64, PendingApproval>,
    next_pending: u64,
}

impl UiServer {
    /// Serves a live session's page on `addr` (port 0: any free port).
    /// Approval requests are read from `inbox`; each waits at most
    /// `approval_timeout` for an answer.
    ///
    /// # Errors
    ///
    /// The address cannot be bound, or no token can be made.
    pub async fn live(
        addr: SocketAddr,
        registry: ToolRegistry,
        inbox: ApprovalInbox,
        approval_timeout: Duration,
    ) -> Result<Self, UiError> {
        let server = Self::start(addr, registry, Mode::Live, approval_timeout).await?;
        let shared = Arc::clone(&server.shared);
        tokio::spawn(async move {
            let mut inbox = inbox;
            while let Some(pending) = inbox.recv().await {
                shared.offer(pending);
            }
        });
        server.set_status("live", "live session");
        Ok(server)
    }

    /// Serves the page of a verified session log's `records` on `addr`.
    ///
    /// # Errors
    ///
    /// The address cannot be bound, or no token can be made.
    pub async fn replay(
        addr: SocketAddr,
        registry: ToolRegistry,
        records: &[Record],
        title: &str,
    ) -> Result<Self, UiError> {
        let server = Self::start(addr, registry, Mode::Replay, DEFAULT_APPROVAL_TIMEOUT).await?;
        for record in records {
            server.record(record);
        }
        server.shared.send_timeline();
        server.set_status(
            "replay",
            &format!("replay of {title} (hash chain verified)"),
        );
        Ok(server)
    }

    async fn start(
        addr: SocketAddr,
        registry: ToolRegistry,
        mode: Mode,
        approval_timeout: Duration,
    ) -> Result<Self, UiError> {
        let token = new_token().map_err(UiError::Token)?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| UiError::Bind { addr, source })?;
        let bound = listener
            .local_addr()
            .map_err(|source| UiError::Bind { addr, source })?;
        let port = bound.port();
        let hosts = if bound.ip().is_unspecified() {
            None
        } else {
            let mut hosts = vec![bound.to_string()];
            if bound.ip().is_loopback() {
                hosts.push(format!("localhost:{port}"));
            }
            Some(hosts)
        };
        let shown = if bound.ip().is_unspecified() {
            SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), port)
        } else {
            bound
        };
        let shared = Arc::new(Shared {
            token: token.clone(),
            hosts,
            port,
            state: Mutex::new(State {
                page: Page::new(registry),
                history: Vec::new(),
                timeline: None,
                timeline_stale: false,
                timeline_due: false,
                status: frame(&json!({"op": "status", "state": "starting", "text": "starting"})),
                pending: HashMap::new(),
                next_pending: 0,
            }),
            frames: broadcast::channel(4096).0,
            presence: watch::channel(Presence::default()).0,
            approval_timeout,
            mode,
        });
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&shared));
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!(error = %e, "the page's server stopped");
            }
        });
        Ok(Self {
            shared,
            url: format!("http://{shown}/{token}/"),
        })
    }

    /// The page's address, with its token: what the user opens.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Shows one record (an [`EventBus`](tack_agent::EventBus) observer).
    pub fn record(&self, record: &Record) {
        let mut state = self.shared.state.lock();
        for item in state.page.apply(record) {
            let f = frame(&json!({"op": "item", "id": item.id, "html": item.html}));
            state.history.push(Arc::clone(&f));
            let _ = self.shared.frames.send(f);
        }
        // The timeline is sent again a moment later, once for all the
        // records of that moment.
        state.timeline_stale = true;
        if !state.timeline_due
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            state.timeline_due = true;
            let shared = Arc::clone(&self.shared);
            runtime.spawn(async move {
                tokio::time::sleep(TIMELINE_EVERY).await;
                shared.send_timeline();
            });
        }
    }

    /// Says on the page that the session ended (after its last timeline).
    pub fn finish(&self) {
        self.shared.send_timeline();
        self.set_status("ended", "session ended");
    }

    fn set_status(&self, state_name: &str, text: &str) {
        let f = frame(&json!({"op": "status", "state": state_name, "text": text}));
        let mut state = self.shared.state.lock();
        state.status = Arc::clone(&f);
        let _ = self.shared.frames.send(f);
    }

    /// Waits until no page is open (for a moment: a reload is not a
    /// close). Returns at once when no page was ever opened and
    /// `wait_for_first` is false.
    pub async fn until_closed(&self, wait_for_first: bool) {
        let mut presence = self.shared.presence.subscribe();
        loop {
            if !wait_for_first && !presence.borrow_and_update().ever {
                return;
            }
            let _ = presence.wait_for(|p| p.closed()).await;
            tokio::time::sleep(CLOSED_GRACE).await;
            if presence.borrow_and_update().closed() {
                return;
            }
        }
    }

    /// Whether a page was ever opened.
    pub fn opened(&self) -> bool {
        self.shared.presence.borrow().ever
    }

    /// What the page is for.
    pub fn mode(&self) -> Mode {
        self.shared.mode
    }
}

fn frame(value: &Value) -> Arc<str> {
    Arc::from(value.to_string())
}

impl Shared {
    /// Sends the timeline if records came since it was last sent.
    fn send_timeline(&self) {
        let mut state = self.state.lock();
        state.timeline_due = false;
        if !state.timeline_stale {
            return;
        }
        state.timeline_stale = false;
        let f = frame(&json!({"op": "timeline", "html": state.page.timeline()}));
        state.timeline = Some(Arc::clone(&f));
        let _ = self.frames.send(f);
    }

    /// A new approval request from the inbox: shown on its call's card, or
    /// denied when no page can answer it.
    fn offer(self: &Arc<Self>, pending: PendingApproval) {
        let mut state = self.state.lock();
        let refuse = |pending: PendingApproval, reason: &str| {
            pending.respond(Answer::Deny {
                reason: Some(reason.to_owned()),
            });
        };
        if self.presence.borrow().closed() {
            drop(state);
            return refuse(
                pending,
                "no answer: the session's page was closed (tack denies what it cannot ask)",
            );
        }
        let Some(card) = state.page.awaiting_approval(pending.call_id().as_str()) else {
            drop(state);
            return refuse(pending, "no answer: the page shows no such call");
        };
        let n = state.next_pending;
        state.next_pending += 1;
        let f = frame(&json!({
            "op": "prompt",
            "card": card,
            "pending": n,
            "summary": pending.summary(),
        }));
        state.pending.insert(n, pending);
        state.history.push(Arc::clone(&f));
        let _ = self.frames.send(f);
        drop(state);
        let shared = Arc::clone(self);
        tokio::spawn(async move {
            tokio::time::sleep(shared.approval_timeout).await;
            let pending = shared.state.lock().pending.remove(&n);
            if let Some(pending) = pending {
                refuse(
                    pending,
                    &format!(
                        "no answer from the session's page within {} s (tack denies what it cannot ask)",
                        shared.approval_timeout.as_secs()
                    ),
                );
            }
        });
    }

    /// A page connected.
    fn connect(&self) -> (Vec<Arc<str>>, broadcast::Receiver<Arc<str>>) {
        self.presence.send_modify(|p| {
            p.open += 1;
            p.ever = true;
        });
        let state = self.state.lock();
        let mut initial = vec![frame(&json!({"op": "reset"}))];
        initial.extend(state.history.iter().cloned());
        initial.extend(state.timeline.iter().cloned());
        initial.push(Arc::clone(&state.status));
        (initial, self.frames.subscribe())
    }

    /// A page went away: once none is left for a moment, its pending
    /// approvals are denied.
    fn disconnect(self: &Arc<Self>) {
        self.presence
            .send_modify(|p| p.open = p.open.saturating_sub(1));
        if !self.presence.borrow().closed() || self.state.lock().pending.is_empty() {
            return;
        }
        let shared = Arc::clone(self);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                tokio::time::sleep(CLOSED_GRACE).await;
                let pending: Vec<PendingApproval> = {
                    let mut state = shared.state.lock();
                    if !shared.presence.borrow().closed() {
                        return;
                    }
                    state.pending.drain().map(|(_, p)| p).collect()
                };
                for pending in pending {
                    pending.respond(Answer::Deny {
                        reason: Some(
                            "no answer: the session's page was closed (tack denies what it cannot ask)"
                                .to_owned(),
                        ),
                    });
                }
            });
        }
    }

    /// The page's answer to pending request `n`.
    fn answer(&self, n: u64, answer: Answer) -> bool {
        let pending = self.state.lock().pending.remove(&n);
        pending.is_some_and(|p| p.respond(answer))
    }

    fn host_allowed(&self, host: &str) -> bool {
        match &self.hosts {
            Some(hosts) => hosts.iter().any(|h| h.eq_ignore_ascii_case(host)),
            None => host
                .rsplit_once(':')
                .is_some_and(|(_, port)| port == self.port.to_string()),
        }
    }
}

/// Counts the page's events stream as an open page while it lives.
struct Connected(Arc<Shared>);

impl Drop for Connected {
    fn drop(&mut self) {
        self.0.disconnect();
    }
}

/// The headers of every response.
fn secured(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
        (header::X_FRAME_OPTIONS, "DENY"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    response
}

fn refused(status: StatusCode, why: &str) -> Response {
    secured((status, format!("tack: {why}\n")).into_response())
}

fn text(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

async fn handle(AxumState(shared): AxumState<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let host = text(&parts.headers, header::HOST).unwrap_or_default();
    if !shared.host_allowed(host) {
        return refused(
            StatusCode::MISDIRECTED_REQUEST,
            "this server answers only to its own address (Host header refused); open the URL tack printed",
        );
    }
    match text(&parts.headers, header::ORIGIN) {
        Some(origin) if !origin.eq_ignore_ascii_case(&format!("http://{host}")) => {
            return refused(
                StatusCode::FORBIDDEN,
                "requests from another origin are refused",
            );
        }
        None if parts.method != Method::GET => {
            return refused(
                StatusCode::FORBIDDEN,
                "an answer must come from the session's page (no Origin header)",
            );
        }
        _ => {}
    }
    if text(
        &parts.headers,
        header::HeaderName::from_static("sec-fetch-site"),
    )
    .is_some_and(|site| site == "cross-site")
    {
        return refused(StatusCode::FORBIDDEN, "cross-site requests are refused");
    }
    let path = parts.uri.path().strip_prefix('/').unwrap_or_default();
    let (token, route) = path.split_once('/').unwrap_or((path, ""));
    if !same_token(token, &shared.token) {
        return refused(
            StatusCode::FORBIDDEN,
            "this page needs the session's token: open the URL tack printed",
        );
    }
    if !path.contains('/') {
        let mut response = refused(StatusCode::PERMANENT_REDIRECT, "the page is at …/");
        if let Ok(location) = HeaderValue::from_str(&format!("/{token}/")) {
            response.headers_mut().insert(header::LOCATION, location);
        }
        return response;
    }
    match (&parts.method, route) {
        (&Method::GET, "") => asset(PAGE, "text/html; charset=utf-8"),
        (&Method::GET, "app.js") => asset(SCRIPT, "text/javascript; charset=utf-8"),
        (&Method::GET, "style.css") => asset(STYLE, "text/css; charset=utf-8"),
        (&Method::GET, "icon.svg") => asset(ICON, "image/svg+xml"),
        (&Method::GET, "events") => events(shared),
        (&Method::POST, "answer") => answer(&shared, &parts.headers, body).await,
        _ => refused(StatusCode::NOT_FOUND, "no such page"),
    }
}

fn asset(body: &'static str, content_type: &'static str) -> Response {
    secured(([(header::CONTENT_TYPE, content_type)], body).into_response())
}

fn events(shared: Arc<Shared>) -> Response {
    let (initial, receiver) = shared.connect();
    let connected = Connected(shared);
    let live = futures::stream::unfold(
        (receiver, connected),
        |(mut receiver, connected)| async move {
            // A page that fell behind ends its stream: it reconnects and is
            // sent everything again.
            let frame = receiver.recv().await.ok()?;
            Some((frame, (receiver, connected)))
        },
    );
    let stream = futures::stream::iter(initial)
        .chain(live)
        .map(|f| Ok::<_, Infallible>(SseEvent::default().data(&*f)));
    let first = futures::stream::once(async {
        Ok::<_, Infallible>(
            SseEvent::default()
                .retry(Duration::from_millis(500))
                .comment("tack"),
        )
    });
    secured(
        Sse::new(first.chain(stream))
            .keep_alive(KeepAlive::new().interval(Duration::from_secs(1)))
            .into_response(),
    )
}

async fn answer(shared: &Shared, headers: &HeaderMap, body: Body) -> Response {
    if !text(headers, header::CONTENT_TYPE).is_some_and(|t| t.starts_with("application/json")) {
        return refused(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "an answer is JSON: {\"pending\": N, \"answer\": \"once\"|\"session\"|\"deny\"}",
        );
    }
    let Ok(bytes) = to_bytes(body, 4096).await else {
        return refused(StatusCode::PAYLOAD_TOO_LARGE, "the answer is too large");
    };
    let parsed: Option<(u64, Answer)> =
        serde_json::from_slice::<Value>(&bytes).ok().and_then(|v| {
            let n = v.get("pending")?.as_u64()?;
            let answer = match v.get("answer")?.as_str()? {
                "once" => Answer::Once,
                "session" => Answer::AlwaysForSession,
                "deny" => Answer::Deny {
                    reason: Some("denied on the session's page".to_owned()),
                },
                _ => return None,
            };
            Some((n, answer))
        });
    let Some((n, answer)) = parsed else {
        return refused(
            StatusCode::BAD_REQUEST,
            "an answer is {\"pending\": N, \"answer\": \"once\"|\"session\"|\"deny\"}",
        );
    };
    if shared.answer(n, answer) {
        secured((StatusCode::OK, "answered\n").into_response())
    } else {
        refused(
            StatusCode::CONFLICT,
            "that request is no longer pending (answered, timed out or withdrawn)",
        )
    }
}
