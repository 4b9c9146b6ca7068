//! Integration tests of tack-core, one module per area.

mod capability;
mod compile_fail;
mod disposer;
mod guards;
mod observer;
mod plugin;
mod send_sync;
mod tool_model;
mod typed_tool;
mod waterfall;
