//! The server side: a host's tools served to any MCP client.

mod approval;
mod call_client;
mod client_channel;
mod handler;
mod http;
mod mapping;
mod request_state;

pub use approval::{APPROVAL_KEY, ElicitingApprover};
pub use call_client::CallPeers;
pub use handler::{McpServer, ToolSource};
pub use http::{HttpOptions, serve_http};
pub use mapping::{annotations_for, client_schema, outcome_result, tool_json};
