//! The six named tool hook points, with their typed inputs and outputs.
//!
//! | name | kind | input → output | default |
//! |---|---|---|---|
//! | `tools/pre-execute` | waterfall | `Arc<ToolExecution>` → [`PreDecision`] | allow |
//! | `tools/execute` | waterfall | [`ExecuteRequest`] → [`ExecuteOutput`] | run the body |
//! | `tools/post-execute` | waterfall | [`ExecutionRecord`] (the outcome so far) → [`PostDecision`] | accept |
//! | `tools/result` | observer | `Arc<`[`ExecutionRecord`]`>` (the final outcome) | — |
//! | `tools/code-dispatch-log` | waterfall | [`CodeDispatchEvent`] → itself | identity |
//! | `tools/code-dispatch` | observer | `Arc<`[`CodeDispatchEvent`]`>` | — |
//!
//! Guards ([`ToolHooks::guard`], [`ToolHooks::guard_async`]) run between
//! pre-execute and execute, in registration order, and can only pass or
//! deny.

mod code_dispatch_log;
pub(crate) mod execute;
mod post_execute;
mod record;
mod tool_hooks;

pub use code_dispatch_log::CodeDispatchEvent;
pub use execute::{ExecuteOutput, ExecuteRequest};
pub use post_execute::PostDecision;
pub use record::ExecutionRecord;
pub use tool_hooks::ToolHooks;

pub use crate::policy::PreDecision;
