//! The exit codes of `tack` (documented in docs/host.md).

/// The turn ended with an answer or a tool concluded it; `replay`: the log
/// passed verification.
pub const SUCCESS: u8 = 0;
/// The host failed: a bad option value, an unusable workspace or log, a
/// model that could not be reached or answered with an error.
pub const FAILURE: u8 = 1;
/// A usage error: clap's code for a bad command line, and `tack`'s for a
/// workspace file defining hooks or MCP servers that is not trusted (see
/// `tack trust`).
pub const USAGE: u8 = 2;
/// The step limit (`--max-steps`) stopped the turn before an answer.
pub const STEP_LIMIT: u8 = 3;
/// `replay`: the log failed verification (damaged or tampered with).
pub const INVALID_LOG: u8 = 4;
/// The model replied with neither text nor a tool call.
pub const EMPTY_REPLY: u8 = 5;
