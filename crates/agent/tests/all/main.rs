//! Integration tests of tack-agent.
#![allow(clippy::unwrap_used)]

mod agent_loop;
mod event_log;
mod openai;
