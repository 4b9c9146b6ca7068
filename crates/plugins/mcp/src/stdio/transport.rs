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
use serde_json::json;
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

type Writer<Role, W> = FramedWrite<W, JsonRpcMessageCodec<TxJsonRpcMessage<Role>>>;

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
    writer: Arc<tokio::sync::Mutex<Option<Writer<Role, W>>>>,
    /// Messages made up for the service (errors for oversized answers).
    queued: VecDeque<RxJsonRpcMessage<Role>>,
    /// The stream was given up on.
    ended: bool,
    child: Option<Child>,
    note: CloseNote,
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
            queued: VecDeque::new(),
            ended: false,
            child: None,
            note,
        }
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
        async move {
            match writer.lock().await.as_mut() {
                Some(writer) => writer.send(item).await.map_err(Into::into),
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
