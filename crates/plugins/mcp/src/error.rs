//! What can go wrong with MCP.

/// An MCP configuration, connection or serving error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The configuration is invalid (the message names the server and field).
    #[error("MCP configuration: {message}")]
    Config {
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A server could not be started or initialized.
    #[error("MCP server `{server}` failed to start: {message}")]
    Start {
        /// The server's configured name.
        server: String,
        /// Why.
        message: String,
    },
    /// Serving tack's tools failed.
    #[error("MCP server: {message}")]
    Serve {
        /// Why.
        message: String,
    },
}
