//! The server side: a host's tools served to any MCP client.

mod approval;
mod handler;
mod http;
mod mapping;

pub use approval::{CallPeers, ElicitingApprover};
pub use handler::{McpServer, ToolSource};
pub use http::{HttpOptions, serve_http};
pub use mapping::{annotations_for, client_schema, outcome_result, tool_json};
