//! The cookbook's tests: each example's module runs it the way a reader does
//! and checks what it prints or does; `docs_commands` runs the commands the
//! documentation shows. One test binary, so the package links its tests once.

mod support;

mod audit_log;
mod channel_approver;
mod code_mode;
mod custom_model;
mod docs_commands;
mod hooks_file;
mod mcp_import;
mod mcp_serve;
mod memory_fs;
mod minimal_host;
mod monotonic_guard;
mod permission_gate;
mod plugin_set;
mod redact_secrets;
mod retry_on_timeout;
mod retry_wrapper;
mod structured_output;
mod tool_disclosure;
mod typed_tool;
