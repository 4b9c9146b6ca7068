//! `tools/result`: the frozen record every observer sees once.

use std::sync::Arc;

use crate::hook::AgentId;
use crate::tool::{Outcome, ToolExecution};

/// The frozen record of one finished execution, shown to `tools/result`
/// observers exactly once.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ExecutionRecord {
    /// The agent the call was made for.
    pub agent: Option<AgentId>,
    /// The execution, when arguments were valid.
    pub execution: Option<Arc<ToolExecution>>,
    /// The final outcome (what the caller gets).
    pub outcome: Arc<Outcome>,
}
