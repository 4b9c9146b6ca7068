//! Integration tests of tack-hooks: real hook scripts (shell and Python)
//! written to Claude Code's protocol, run on the real pipeline through the `tack-test` harness.
#![allow(clippy::unwrap_used)]
#![allow(missing_docs)]

mod harness;

mod agent_events;
mod bad_input;
mod claude_features;
mod config;
mod denied_batch_failure;
mod names;
mod post_tool_use;
mod pre_tool_use;
