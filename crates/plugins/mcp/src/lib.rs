//! # tack-mcp
//!
//! The Model Context Protocol both ways, on the official Rust SDK (`rmcp`):
//!
//! * **client** — [`McpClient`] starts the servers of an `.mcp.json`
//!   ([`McpConfig`]) over stdio or streamable HTTP and registers each tool
//!   as `mcp__<server>__<tool>` ([`tack_tool_name`]); every call goes
//!   through the host's pipeline (schema validation, permission, approval,
//!   guards, timeout, post-execute, result). How MCP maps onto tack's model
//!   is described on [`tier_from_annotations`] and in the cookbook. An
//!   HTTP server that asks for OAuth is signed in to through the host's
//!   [`Authorizer`] ([`ClientOptions::authorizer`]), per server
//!   [`OAuthSettings`], the tokens kept in [`ClientOptions::token_file`].
//! * **server** — [`McpServer`] serves a host's tools to any MCP client,
//!   each `tools/call` dispatched through the host's pipeline; a tool body
//!   reaches the client of its call (progress, log messages, sampling,
//!   elicitation, roots) through [`McpServer::client_channel`], on protocol
//!   2026-07-28 through the `input_required` round trip.
//!
//! Both sides speak protocol 2026-07-28 and the versions before it.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod client;
mod config;
mod error;
mod names;
mod oauth;
mod server;
mod stdio;

pub use client::mapping::{
    MAX_SCHEMA_BYTES, PERMISSIVE_OUTPUT, content_block, content_blocks, tier_from_annotations,
};
pub use client::{ClientOptions, DEFAULT_CALL_TIMEOUT, McpClient, McpProgress, PLUGIN_NAME};
pub use config::{McpConfig, ServerConfig};
pub use error::McpError;
pub use names::{server_prefix, tack_tool_name};
pub use oauth::{
    AuthorizationPrompt, Authorizer, ClientSecret, EnterpriseIdp, OAuthGrant, OAuthSettings,
};
pub use server::{
    APPROVAL_KEY, CallPeers, ElicitingApprover, HttpOptions, McpServer, ToolSource,
    annotations_for, client_schema, outcome_result, serve_http, tool_json,
};
pub use stdio::DEFAULT_MAX_MESSAGE_BYTES;
