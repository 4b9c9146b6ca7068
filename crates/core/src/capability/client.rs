//! The client a call came from: progress, log messages and questions sent
//! to it while a tool body runs.
//!
//! A host that serves its tools to a client (tack-mcp's `McpServer`, for an
//! MCP client) provides a [`ClientChannel`]; a tool body reaches it through
//! [`ToolRunContext`](crate::context::ToolRunContext)'s
//! [`report_progress`](crate::context::ToolRunContext::report_progress),
//! [`log_to_client`](crate::context::ToolRunContext::log_to_client),
//! [`client_can_ask`](crate::context::ToolRunContext::client_can_ask) and
//! [`ask_client`](crate::context::ToolRunContext::ask_client). Without a
//! channel (a call the model made in `tack run`, a test) progress and log
//! messages go nowhere, and a question fails with
//! [`CapabilityError::NoClient`].

use std::fmt;

use futures::future::BoxFuture;
use serde_json::Value;

use super::CapabilityError;
use crate::model::CallId;

/// The severity of a log message sent to the client (the syslog levels MCP
/// uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ClientLogLevel {
    /// Detail for debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// Something to look at.
    Warning,
    /// A failure.
    Error,
    /// A critical condition.
    Critical,
    /// Action needed now.
    Alert,
    /// The system is unusable.
    Emergency,
}

/// What a tool body may ask the client for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClientRequestKind {
    /// A completion from the client's model (MCP `sampling/createMessage`).
    Sampling,
    /// Input from the client's user (MCP `elicitation/create`).
    Elicitation,
    /// The client's roots (MCP `roots/list`).
    Roots,
}

impl ClientRequestKind {
    /// The capability name a client declares for it (`sampling`,
    /// `elicitation`, `roots`).
    pub fn capability(self) -> &'static str {
        match self {
            ClientRequestKind::Sampling => "sampling",
            ClientRequestKind::Elicitation => "elicitation",
            ClientRequestKind::Roots => "roots",
        }
    }
}

impl fmt::Display for ClientRequestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.capability())
    }
}

/// One question for the client: its kind, its parameters (as the protocol
/// spells them: for MCP, the `params` of `sampling/createMessage` or
/// `elicitation/create`; none for roots) and a key naming it within the
/// call. Keys must be stable from one run of the body to the next: a client
/// of MCP 2026-07-28 answers by re-sending the call, and the body, run
/// again, finds its answers by these keys.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ClientRequest {
    /// The name of this question within the call.
    pub key: String,
    /// What is asked for.
    pub kind: ClientRequestKind,
    /// The request's parameters.
    pub params: Value,
}

impl ClientRequest {
    /// A question of `kind` named `key`, with `params`.
    pub fn new(key: impl Into<String>, kind: ClientRequestKind, params: Value) -> Self {
        Self {
            key: key.into(),
            kind,
            params,
        }
    }
}

/// The client of the calls a host serves. Every method names the call it is
/// for (the channel finds the client session and request by it); a call it
/// does not know gets nothing sent (progress, logs) or
/// [`CapabilityError::NoClient`].
///
/// Implemented by hosts that serve tools (tack-mcp); reached from a tool body
/// through [`ToolRunContext`](crate::context::ToolRunContext).
pub trait ClientChannel: Send + Sync + 'static {
    /// Reports how far `call` has got, if its request asked for progress
    /// (MCP: a `progressToken`, and these are the three fields of its
    /// `notifications/progress`): `progress`, the work done so far, out of
    /// `total`, the whole work when known, with an optional `message` saying
    /// what is being done. Progress only grows within a call. Resolves once
    /// the update is sent.
    fn progress(
        &self,
        call: &CallId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> BoxFuture<'static, ()>;

    /// Sends a log message about `call`, if the client asked for messages of
    /// `level` (MCP: `logging/setLevel`, or the request's own log level).
    fn log(&self, call: &CallId, level: ClientLogLevel, data: Value) -> BoxFuture<'static, ()>;

    /// Whether the client of `call` declared the capability `kind` needs.
    fn can_ask(&self, call: &CallId, kind: ClientRequestKind) -> bool;

    /// Asks the client of `call` every one of `requests`; the answers, in
    /// the same order (for MCP, each answer's `result` object).
    ///
    /// # Errors
    ///
    /// [`CapabilityError::NoClient`], [`CapabilityError::Unsupported`],
    /// [`CapabilityError::InputRequired`] or
    /// [`CapabilityError::ClientFailed`].
    fn ask(
        &self,
        call: &CallId,
        requests: Vec<ClientRequest>,
    ) -> BoxFuture<'static, Result<Vec<Value>, CapabilityError>>;
}

impl fmt::Debug for dyn ClientChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientChannel").finish_non_exhaustive()
    }
}
