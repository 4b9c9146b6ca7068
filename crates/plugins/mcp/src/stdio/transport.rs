//! A transport over a byte stream — a stdio server's pipes, tack's own
//! stdin and stdout when serving, or an in-process pipe: newline-delimited
//! JSON-RPC with a message-size limit.
//!
//! rmcp's own stdio transport drops a line over its limit without a word,
//! so the request it answered (or the request itself) waits forever. This
//! one drops it too (never buffering more than the limit, see
//! [`super::framing`]) but answers for it: an oversized answer becomes a
//! JSON-RPC error for the request it answered (naming the peer, the limit
//! and how to raise it), an oversized request gets an error reply, and a
//! line that never ends closes the connection (a client restarts the server
//! on the next call). Everything else behaves as rmcp's transport does.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::SinkExt;
use rmcp::RoleClient;
use rmcp::model::{ErrorData, RequestId};
use rmcp::service::ServiceRole;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::JsonRpcMessageCodec;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio_util::codec::FramedWrite;

use super::framing::{Frame, LineReader, Sniffer};

/// A message that goes on this many times the limit without ending is not
/// a message: the connection is closed.
pub(crate) const GIVE_UP_FACTOR: usize = 16;

/// The `data.reason` of the error that stands for an answer over the limit.
pub(crate) const TOO_LARGE: &str = "tack_mcp_message_too_large";

/// How long a closed server may take to exit before it is signalled.
const EXIT_WAIT: Duration = Duration::from_millis(1000);

type Writer<W> = FramedWrite<W, JsonRpcMessageCodec<Value>>;

/// `bytes` as people read it: `8 MiB`, `64 KiB` or `1000 bytes`.
pub(crate) fn human_bytes(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// Why the connection was closed from this side (shared with the server's
/// error messages); `None` when the peer closed it.
pub(crate) type CloseNote = Arc<Mutex<Option<String>>>;

/// rmcp's newline-delimited JSON-RPC over `read` and `write`, with a limit
/// on the size of a message read.
pub(crate) struct LineTransport<Role: ServiceRole, R, W> {
    /// The peer, for messages: "MCP server `files`", "the MCP client".
    peer: String,
    /// How to raise the limit, for messages.
    option: &'static str,
    limit: usize,
    reader: LineReader<BufReader<R>>,
    writer: Arc<tokio::sync::Mutex<Option<Writer<W>>>>,
    /// Who answers parse errors and batches (the serving side), and what it
    /// learned of the session.
    session: Arc<Mutex<Session>>,
    /// Messages made up for the service (errors for oversized answers).
    queued: VecDeque<RxJsonRpcMessage<Role>>,
    /// The stream was given up on.
    ended: bool,
    child: Option<Child>,
    note: CloseNote,
    _role: std::marker::PhantomData<fn() -> Role>,
}

/// What the serving side of a line transport knows of its session: the
/// protocol version `initialize` agreed on, and the batches (protocol
/// `2025-03-26`) whose answers are being gathered.
#[derive(Debug, Default)]
struct Session {
    /// This side answers: malformed lines get `-32700`, batches are read.
    serving: bool,
    /// The version of the `initialize` result sent (none: not yet, or the
    /// session started without `initialize`).
    version: Option<String>,
    /// Each open batch: the ids still to be answered, and the answers so far.
    batches: Vec<(Vec<Value>, Vec<Value>)>,
}

impl Session {
    /// A JSON-RPC error without a request to answer (`id` null in the
    /// versions that have `initialize`, left out from `2026-07-28` on).
    fn orphan_error(&self, code: i32, message: String) -> Value {
        let mut error = json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}});
        if self.version.is_some() {
            error["id"] = Value::Null;
        }
        error
    }

    /// Files `answer` under its batch; `Some` with the whole batch's answers
    /// when it was the last one missing, `None` when it is held or belongs
    /// to no batch (then it is `Err` to be sent on its own).
    fn gather(&mut self, answer: Value) -> Result<Option<Value>, Value> {
        let Some(id) = answer
            .get("id")
            .filter(|_| answer.get("result").is_some() || answer.get("error").is_some())
        else {
            return Err(answer);
        };
        let Some(index) = self.batches.iter().position(|(ids, _)| ids.contains(id)) else {
            return Err(answer);
        };
        let (ids, answers) = &mut self.batches[index];
        ids.retain(|i| i != id);
        answers.push(answer);
        if !ids.is_empty() {
            return Ok(None);
        }
        let (_, answers) = self.batches.remove(index);
        Ok(Some(Value::Array(answers)))
    }
}

/// Records the protocol version of an `initialize` result being sent.
fn note_version(session: &Mutex<Session>, message: &Value) {
    if let Some(version) = message
        .get("result")
        .filter(|r| r.get("serverInfo").is_some())
        .and_then(|r| r.get("protocolVersion"))
        .and_then(Value::as_str)
        && let Ok(mut session) = session.lock()
    {
        session.version = Some(version.to_owned());
    }
}

impl<Role: ServiceRole, R, W> LineTransport<Role, R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// The transport to `peer` (as messages name it, e.g. "MCP server
    /// `files`") over `read` and `write`, reading messages of at most `limit`
    /// bytes; `option` says how to raise the limit.
    pub(crate) fn new(
        peer: String,
        option: &'static str,
        read: R,
        write: W,
        limit: usize,
        note: CloseNote,
    ) -> Self {
        Self {
            peer,
            option,
            limit,
            reader: LineReader::new(
                BufReader::with_capacity(64 * 1024, read),
                limit,
                limit.saturating_mul(GIVE_UP_FACTOR),
            ),
            writer: Arc::new(tokio::sync::Mutex::new(Some(FramedWrite::new(
                write,
                JsonRpcMessageCodec::default(),
            )))),
            session: Arc::new(Mutex::new(Session::default())),
            queued: VecDeque::new(),
            ended: false,
            child: None,
            note,
            _role: std::marker::PhantomData,
        }
    }

    /// Makes this the serving side: a line that is not JSON gets a parse
    /// error (`-32700`), and on a `2025-03-26` session a batch is read and
    /// answered with one array (other versions have no batches: `-32600`).
    pub(crate) fn serving(self) -> Self {
        if let Ok(mut session) = self.session.lock() {
            session.serving = true;
        }
        self
    }

    /// The error standing for the oversized answer to `id`.
    fn too_large(&self, id: RequestId) -> RxJsonRpcMessage<Role> {
        let message = format!(
            "the answer of {} is larger than the limit of {} ({} bytes) and was discarded; raise the limit with `{}` if its answers are this large",
            self.peer,
            human_bytes(self.limit),
            self.limit,
            self.option
        );
        tracing::warn!(peer = %self.peer, %id, limit = self.limit, "MCP answer over the size limit discarded");
        RxJsonRpcMessage::<Role>::error(
            ErrorData::internal_error(
                message,
                Some(json!({"reason": TOO_LARGE, "limit": self.limit})),
            ),
            Some(id),
        )
    }

    /// Sends `message` to the peer without waiting (from `receive`).
    fn reply(&mut self, message: TxJsonRpcMessage<Role>) {
        match serde_json::to_value(&message) {
            Ok(value) => self.reply_value(value),
            Err(e) => tracing::warn!(peer = %self.peer, "cannot encode a reply: {e}"),
        }
    }

    /// Sends `message` (JSON) to the peer without waiting.
    fn reply_value(&mut self, message: Value) {
        let writer = Arc::clone(&self.writer);
        let peer = self.peer.clone();
        tokio::spawn(async move {
            if let Some(writer) = writer.lock().await.as_mut()
                && let Err(e) = writer.send(message).await
            {
                tracing::debug!(%peer, "cannot reply to {peer}: {e}");
            }
        });
    }

    /// A line that is a JSON array: a batch. Read on a `2025-03-26` session
    /// (each message in turn; the answers go back as one array), refused
    /// with `-32600` on any other.
    fn batch(&mut self, line: &[u8]) {
        let (version, serving) = match self.session.lock() {
            Ok(session) => (session.version.clone(), session.serving),
            Err(_) => return,
        };
        if !serving {
            tracing::warn!(peer = %self.peer, "{} sent a JSON-RPC batch, ignored", self.peer);
            return;
        }
        let refuse = |this: &mut Self, message: String| {
            let error = this
                .session
                .lock()
                .map(|s| s.orphan_error(-32600, message.clone()))
                .unwrap_or_else(|_| json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": message}}));
            this.reply_value(error);
        };
        if version.as_deref() != Some("2025-03-26") {
            let message = format!(
                "JSON-RPC batches are not part of MCP protocol version {}: send each message on its own line",
                version.as_deref().unwrap_or("2026-07-28")
            );
            return refuse(self, message);
        }
        let items: Vec<Value> = match serde_json::from_slice(line) {
            Ok(items) => items,
            Err(e) => {
                let message = format!("the batch is not valid JSON: {e}");
                let error = self
                    .session
                    .lock()
                    .map(|s| s.orphan_error(-32700, message.clone()))
                    .unwrap_or_default();
                return self.reply_value(error);
            }
        };
        if items.is_empty() {
            return refuse(self, "an empty JSON-RPC batch is not a request".to_owned());
        }
        let mut ids = Vec::new();
        let mut messages = Vec::new();
        let mut errors = Vec::new();
        for item in items {
            let request_id = item
                .get("method")
                .and_then(|_| item.get("id"))
                .filter(|id| !id.is_null())
                .cloned();
            if item.get("method").and_then(Value::as_str) == Some("initialize") {
                errors.push(
                    json!({"jsonrpc": "2.0", "id": request_id.unwrap_or(Value::Null), "error": {
                    "code": -32600, "message": "initialize must not be part of a JSON-RPC batch"}}),
                );
                continue;
            }
            match serde_json::from_value::<RxJsonRpcMessage<Role>>(item.clone()) {
                Ok(message) => {
                    if let Some(id) = request_id {
                        ids.push(id);
                    }
                    messages.push(message);
                }
                Err(e) => errors.push(invalid_message(&item, &e.to_string())),
            }
        }
        if ids.is_empty() {
            // Nothing of it will be answered but its errors.
            if !errors.is_empty() {
                self.reply_value(Value::Array(errors));
            }
        } else if let Ok(mut session) = self.session.lock() {
            session.batches.push((ids, errors));
        }
        self.queued.extend(messages);
    }

    /// The message on the line just read, if it is one.
    fn parse_line(&mut self) -> Option<RxJsonRpcMessage<Role>> {
        const BOM: &[u8] = b"\xEF\xBB\xBF";
        let line = self.reader.line();
        let line = line.strip_prefix(BOM).unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let error = match serde_json::from_slice::<RxJsonRpcMessage<Role>>(line) {
            Ok(message) => return Some(message),
            Err(e) => e,
        };
        let serving = self.session.lock().is_ok_and(|s| s.serving);
        if line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            let line = line.to_vec();
            self.batch(&line);
            return None;
        }
        if serving {
            match serde_json::from_slice::<Value>(line) {
                Err(parse) => {
                    let error = self
                        .session
                        .lock()
                        .map(|s| {
                            s.orphan_error(
                                -32700,
                                format!("parse error: the line is not JSON ({parse})"),
                            )
                        })
                        .unwrap_or_default();
                    tracing::warn!(peer = %self.peer, "{} sent a line that is not JSON: {parse}", self.peer);
                    self.reply_value(error);
                    return None;
                }
                Ok(value)
                    if value.get("method").is_some()
                        && value.get("id").is_some_and(|id| !id.is_null()) =>
                {
                    tracing::warn!(peer = %self.peer, "{} sent a request that is not valid MCP: {error}", self.peer);
                    self.reply_value(invalid_message(&value, &error.to_string()));
                    return None;
                }
                Ok(_) => {}
            }
        }
        // What can be told without parsing it (no recursion, so a message
        // nested past the parser's limit too): its id, and whether it is an
        // answer or a request.
        let mut sniffer = Sniffer::default();
        sniffer.feed(line);
        let (id, has_method) = (sniffer.id(), sniffer.has_method());
        if id.is_none() && !has_method {
            // No id to answer (as rmcp and the other SDKs do).
            let shown = String::from_utf8_lossy(&line[..line.len().min(200)]).into_owned();
            tracing::warn!(peer = %self.peer, "{} sent a line that is not a JSON-RPC message ({error}), ignored: {shown}", self.peer);
            return None;
        }
        match (id, has_method) {
            // An answer that is not MCP: its request gets an error instead of no answer.
            (Some(id), false) => Some(RxJsonRpcMessage::<Role>::error(
                ErrorData::internal_error(
                    format!(
                        "{} answered with a message that is not valid MCP: {error}",
                        self.peer
                    ),
                    None,
                ),
                Some(id),
            )),
            (Some(id), true) => {
                tracing::warn!(peer = %self.peer, "{} sent a request that is not valid MCP: {error}", self.peer);
                self.reply(TxJsonRpcMessage::<Role>::error(
                    ErrorData::invalid_request(format!("invalid request: {error}"), None),
                    Some(id),
                ));
                None
            }
            (None, true) => {
                // A notification this client does not know (rmcp ignores them too).
                tracing::debug!(peer = %self.peer, "MCP notification ignored: {error}");
                None
            }
            (None, false) => None,
        }
    }
}

/// The error answer to a request that does not parse as MCP: invalid
/// params (`-32602`) when it is a JSON-RPC request with a method name (a
/// method rmcp knows whose params are wrong; unknown methods parse), else an
/// invalid request (`-32600`).
fn invalid_message(message: &Value, error: &str) -> Value {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let method = message.get("method").and_then(Value::as_str);
    let well_formed = message.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && message.get("params").is_none_or(Value::is_object);
    let (code, text) = match method {
        Some(method) if well_formed => (-32602, format!("invalid params for `{method}`: {error}")),
        _ => (-32600, format!("invalid request: {error}")),
    };
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}})
}

impl LineTransport<RoleClient, ChildStdout, ChildStdin> {
    /// Runs `command` as the stdio server `server` (its stderr piped, for the
    /// caller to read; the process killed when the transport is dropped).
    pub(crate) fn spawn(
        server: &str,
        mut command: tokio::process::Command,
        limit: usize,
        note: CloseNote,
    ) -> std::io::Result<(Self, Option<ChildStderr>)> {
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(std::io::Error::other(
                "the child's stdin or stdout is not piped",
            ));
        };
        let stderr = child.stderr.take();
        let mut transport = Self::new(
            format!("MCP server `{server}`"),
            "ClientOptions::max_message_bytes",
            stdout,
            stdin,
            limit,
            note,
        );
        transport.child = Some(child);
        Ok((transport, stderr))
    }
}

/// Ends a child: waits a moment after its stdin was closed, then asks it to
/// terminate, then kills it (MCP's stdio shutdown sequence).
async fn end_child(mut child: Child) {
    if let Ok(Ok(_)) = tokio::time::timeout(EXIT_WAIT, child.wait()).await {
        return;
    }
    #[cfg(unix)]
    if let Some(pid) = child.id().and_then(|pid| i32::try_from(pid).ok()) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
        if let Ok(Ok(_)) = tokio::time::timeout(EXIT_WAIT, child.wait()).await {
            return;
        }
    }
    let _ = child.kill().await;
}

impl<Role: ServiceRole, R, W> Transport<Role> for LineTransport<Role, R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<Role>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        let session = Arc::clone(&self.session);
        let message = serde_json::to_value(&item);
        async move {
            let mut message = message.map_err(std::io::Error::other)?;
            note_version(&session, &message);
            let held = match session.lock() {
                Ok(mut s) if !s.batches.is_empty() => Some(s.gather(std::mem::take(&mut message))),
                _ => None,
            };
            match held {
                Some(Ok(None)) => return Ok(()),
                Some(Ok(Some(batch))) => message = batch,
                Some(Err(single)) => message = single,
                None => {}
            }
            match writer.lock().await.as_mut() {
                Some(writer) => writer.send(message).await.map_err(Into::into),
                None => Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the transport is closed",
                )),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<Role>> {
        loop {
            if let Some(message) = self.queued.pop_front() {
                return Some(message);
            }
            if self.ended {
                return None;
            }
            match self.reader.next().await {
                Frame::Line => {
                    let parsed = self.parse_line();
                    self.reader.clear();
                    if let Some(message) = parsed {
                        return Some(message);
                    }
                }
                Frame::OversizedAnswer { id }
                | Frame::OversizedEnded {
                    id: Some(id),
                    has_method: false,
                    ..
                } => {
                    let message = self.too_large(id);
                    self.queued.push_back(message);
                }
                Frame::OversizedEnded {
                    id: Some(id),
                    has_method: true,
                    bytes,
                } => {
                    tracing::warn!(peer = %self.peer, %id, bytes, limit = self.limit, "MCP request over the size limit discarded");
                    self.reply(TxJsonRpcMessage::<Role>::error(
                        ErrorData::invalid_request(
                            format!(
                                "the request ({bytes} bytes or more) is larger than the limit of {} ({} bytes) of the side that received it",
                                human_bytes(self.limit),
                                self.limit
                            ),
                            None,
                        ),
                        Some(id),
                    ));
                }
                Frame::OversizedEnded {
                    id: None, bytes, ..
                } => {
                    tracing::warn!(peer = %self.peer, bytes, limit = self.limit, "MCP message over the size limit discarded");
                }
                Frame::GaveUp { bytes } => {
                    let why = format!(
                        "it sent a message that went on past {} ({bytes} bytes) without ending, more than {GIVE_UP_FACTOR} times the limit of {}; the connection was closed",
                        human_bytes(self.limit.saturating_mul(GIVE_UP_FACTOR)),
                        human_bytes(self.limit)
                    );
                    tracing::error!(peer = %self.peer, "{} {why}", self.peer);
                    if let Ok(mut note) = self.note.lock() {
                        *note = Some(why);
                    }
                    self.ended = true;
                    // The stream is out of step for good: stop the server now.
                    if let Some(child) = self.child.as_mut() {
                        let _ = child.start_kill();
                    }
                    return None;
                }
                Frame::Eof => return None,
                Frame::Io(e) => {
                    tracing::warn!(peer = %self.peer, "reading from {} failed: {e}", self.peer);
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing its stdin asks a stdio server to exit.
        drop(self.writer.lock().await.take());
        if let Some(child) = self.child.take() {
            end_child(child).await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(8 * 1024 * 1024), "8 MiB");
        assert_eq!(human_bytes(64 * 1024), "64 KiB");
        assert_eq!(human_bytes(1000), "1000 bytes");
        assert_eq!(human_bytes(1536 * 1024), "1536 KiB");
    }
}
