//! Integration tests of tack-agent.
#![allow(clippy::unwrap_used)]

mod agent_hooks;
mod agent_loop;
mod code_dispatch;
mod event_log;
mod http_server;
mod journal;
mod log_integrity;
mod log_location;
mod log_properties;
mod openai;
mod redaction;
mod render_escape;
mod resume;
mod streaming;
