//! # tack-code-mode
//!
//! Code mode for tack: the model writes a short JavaScript or TypeScript
//! program, `run_code` runs it in a fresh embedded QuickJS runtime, and the
//! program calls tools through an SDK (`await tools.<name>(args)`) — every such
//! call a nested call through the host's complete pipeline. TypeScript needs
//! the `typescript` feature (on by default: swc erases the types); without
//! it programs are JavaScript and the crate builds much faster.
//!
//! * [`CodeMode`] registers `run_code` as the registry's code transport.
//! * [`sdk_text`] generates the TypeScript declarations a host appends to the
//!   system prompt under the `code` or `both` presentation (call it with the
//!   registry's `native_tools(agent)`); [`prompt_section`] adds the
//!   [`CODE_ONLY_RULE`] under `code` (not under `both`, where direct calls
//!   execute).
//! * Limits: wall time ([`DEFAULT_TIMEOUT`], a `timeout_ms` argument may lower
//!   it), memory ([`DEFAULT_MEMORY_BYTES`]) and printed bytes
//!   ([`DEFAULT_OUTPUT_BYTES`]); each hit is `CODE_RUN_FAILED` with its kind
//!   (`timeout`, `memory`, `output`, also `syntax`, `typescript`,
//!   `exception`, `stalled`) and the captured logs in the error data.
//! * Sub-calls are `<outer id>:code:<n>`. A run's sub-calls are one batch
//!   of the host's dispatcher (`ToolDispatcher::open_batch`), which runs them
//!   under the turn scheduler's rules: admitted (pre-execute, approval,
//!   guards) one at a time in submission order; calls of tools the host
//!   classifies parallel overlap (at most `max_parallel_sub_calls`),
//!   exclusive ones run alone, conflicting resource claims serialize.
//! * A sub-call that concludes the turn (and succeeds) makes `run_code` ask
//!   to conclude it too; honoured only if `run_code` succeeds.
//! * Errors point at the program's own lines and columns, never at the
//!   wrapper that makes the program an async function body.
//! * Each started sub-call is announced on `tools/code-dispatch` (a
//!   `Started` event), then its settled record passes through
//!   `tools/code-dispatch-log` and is announced (`Settled`): log records for
//!   hosts, never model content.
//! * An image a successful sub-call returns, and every context a sub-call
//!   defers, ride on the outer result as deferred context, in submission
//!   order, even when the program fails afterwards.
//! * The result value is `{logs, result?}`, rendered by [`render_result`].
//!
//! See `docs/code-mode.md`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod bridge;
mod engine;
mod location;
mod plugin;
mod render;
mod sdk;
mod strip;

pub use plugin::{
    CodeMode, CodeModeConfig, DEFAULT_MAX_OUTSTANDING_BYTES, DEFAULT_MAX_OUTSTANDING_SUB_CALLS,
    DEFAULT_MAX_PARALLEL_SUB_CALLS, DEFAULT_MEMORY_BYTES, DEFAULT_OUTPUT_BYTES,
    DEFAULT_OUTSTANDING_WAIT, DEFAULT_TIMEOUT, PLUGIN_NAME, RUN_CODE, run_code_definition,
};
pub use render::{MAX_INDENT, NO_OUTPUT, render_result};
pub use sdk::{CODE_ONLY_RULE, USAGE, prompt_section, sdk_text};
