//! The client side: MCP servers' tools become tack tools.

pub(crate) mod mapping;
mod plugin;
mod progress;
mod server;

pub use plugin::{ClientOptions, DEFAULT_CALL_TIMEOUT, McpClient, PLUGIN_NAME};
pub use progress::McpProgress;
