//! The record of one execution: what `tools/post-execute` listeners and
//! `tools/result` observers see.

use std::sync::Arc;

use crate::hook::AgentId;
use crate::tool::{Outcome, ToolExecution};

/// The record of one execution: who asked, what ran, and its outcome.
///
/// Two hook points see it:
///
/// * `tools/post-execute` listeners get the record of the outcome so far,
///   for every outcome of a known tool, denials and invalid arguments
///   included, and answer with a [`PostDecision`](super::PostDecision);
/// * `tools/result` observers get the final record (the outcome the caller
///   gets), frozen, exactly once.
///
/// Cheap to build and to clone: three shared handles.
///
/// ```
/// use std::sync::Arc;
/// use tack_core::hooks::{ExecutionRecord, ToolHooks};
///
/// let hooks = ToolHooks::new();
/// // Post-execute: the outcome so far; the decision may add to it.
/// let _hint = hooks.post_execute().tap("hint", |record: ExecutionRecord, next| async move {
///     let failed = !record.outcome.is_success();
///     let decision = next.run(record).await;
///     if failed { decision.add_context("read the error before retrying") } else { decision }
/// });
/// // Result: the final record, once.
/// let _log = hooks.result().tap("log", |record: &Arc<ExecutionRecord>| {
///     println!("{} for {:?}", record.outcome.tool, record.agent);
/// });
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ExecutionRecord {
    /// The agent the call was made for.
    pub agent: Option<AgentId>,
    /// The execution, when arguments were valid (an unknown tool or invalid
    /// arguments has none).
    pub execution: Option<Arc<ToolExecution>>,
    /// The outcome (frozen): so far at `tools/post-execute`, final (what the
    /// caller gets) at `tools/result`.
    pub outcome: Arc<Outcome>,
}
