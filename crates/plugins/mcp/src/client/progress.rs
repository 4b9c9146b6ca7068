//! Progress notifications of MCP servers, as host events.

use std::fmt;
use std::sync::Arc;

use tack_core::tool::CallId;

/// One `notifications/progress` an MCP server sent during a tool call,
/// delivered to the host's [`ClientOptions::on_progress`] listener.
///
/// Every `tools/call` the client sends carries a `progressToken` of its own
/// (in `_meta`), so a server that reports progress can; the notification is
/// matched back to the tack call it belongs to.
///
/// [`ClientOptions::on_progress`]: super::ClientOptions::on_progress
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct McpProgress {
    /// The configured server name.
    pub server: String,
    /// The tack name of the tool called (`mcp__<server>__<tool>`).
    pub tool: String,
    /// The id of the tack call the progress belongs to.
    pub call_id: CallId,
    /// The progress so far (it increases with every notification).
    pub progress: f64,
    /// The total, when the server knows it.
    pub total: Option<f64>,
    /// The server's message, if any.
    pub message: Option<String>,
}

/// A listener of [`McpProgress`] events (cheap to clone).
#[derive(Clone)]
pub(crate) struct ProgressListener(pub(crate) Arc<dyn Fn(McpProgress) + Send + Sync>);

impl fmt::Debug for ProgressListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressListener")
    }
}
