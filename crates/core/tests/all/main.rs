//! Integration tests of tack-core, one module per area.

// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used)]

mod capability;
mod compile_fail;
mod disposer;
mod guards;
mod observer;
mod order;
mod plugin;
mod schema_depth;
mod schema_keywords;
mod send_sync;
mod tool_model;
mod typed_tool;
mod verdicts;
mod waterfall;
