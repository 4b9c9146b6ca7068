//! `tools/code-dispatch-log`: edit the logged copy of a nested `run_code` result.

use crate::hook::Provenance;
use crate::tool::{CallId, ContentBlock, ErrorCode};

/// The log record of one tool call made by a `run_code` program. The
/// `tools/code-dispatch-log` waterfall may rewrite its content (e.g. bound its
/// size); the program's value and the model-visible `run_code` result are
/// untouched. The hook's default is identity.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CodeDispatchLogEntry {
    /// The `run_code` call.
    pub parent_call_id: CallId,
    /// The nested call (`<parent>:code:<n>`).
    pub call_id: CallId,
    /// The tool called.
    pub tool: String,
    /// The failure code, `None` for a success.
    pub error: Option<ErrorCode>,
    /// The content to log.
    pub content: Vec<ContentBlock>,
    /// Who last rewrote the record (stamped by the hook point).
    pub provenance: Option<Provenance>,
}

impl CodeDispatchLogEntry {
    /// A record.
    pub fn new(
        parent_call_id: CallId,
        call_id: CallId,
        tool: impl Into<String>,
        error: Option<ErrorCode>,
        content: Vec<ContentBlock>,
    ) -> Self {
        Self {
            parent_call_id,
            call_id,
            tool: tool.into(),
            error,
            content,
            provenance: None,
        }
    }

    /// Replaces the content, clearing the provenance so the hook point stamps
    /// the listener that did it.
    pub fn with_content(mut self, content: Vec<ContentBlock>) -> Self {
        self.content = content;
        self.provenance = None;
        self
    }
}
