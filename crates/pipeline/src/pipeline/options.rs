//! Per-call options: what a caller of the pipeline (the turn scheduler)
//! tells one call, explicitly, instead of through task-locals or listeners
//! installed for the length of a turn.

use std::sync::OnceLock;

use tack_core::tool::{CallId, ContentBlock, ErrorCode, Outcome};

/// Why a turn cancelled its remaining calls: the call that failed first.
pub(crate) struct CancelCause {
    pub(crate) call_id: CallId,
    pub(crate) tool: String,
    pub(crate) code: ErrorCode,
    pub(crate) message: String,
}

impl CancelCause {
    /// The content a call cancelled because of this failure carries, so the
    /// model can tell it from a user interrupt (`None`: not such a call).
    pub(crate) fn explain(&self, outcome: &Outcome) -> Option<Vec<ContentBlock>> {
        let failure = outcome.failure_info()?;
        if failure.code() != ErrorCode::Cancelled || outcome.call_id == self.call_id {
            return None;
        }
        let why = format!(
            "call `{}` (`{}`) failed ({}: {}), and this turn cancels its remaining calls when one fails",
            self.call_id, self.tool, self.code, self.message
        );
        let text = if failure.dispatched() {
            format!(
                "CANCELLED: `{}` was stopped because {why}. The tool had started, so part of its work may have happened; check before calling it again. ({})",
                outcome.tool,
                failure.message()
            )
        } else {
            format!(
                "CANCELLED: `{}` was not run because {why}. Nothing was done; call it again if it is still needed.",
                outcome.tool
            )
        };
        Some(vec![ContentBlock::text(text)])
    }
}

/// The options of one call.
pub(crate) struct CallOptions<'a, A> {
    /// Called once when admission is over (see `Pipeline::execute_admitted`).
    pub(crate) admitted: A,
    /// Set when the call's turn cancels its remaining calls after a failure:
    /// a call that ends `CANCELLED` because of it says so in its content
    /// (before `tools/post-execute`, so a redactor sees what the model would).
    pub(crate) cause: Option<&'a OnceLock<CancelCause>>,
}

impl<A: FnOnce() + Send> CallOptions<'static, A> {
    /// Only an admission callback.
    pub(crate) fn new(admitted: A) -> Self {
        Self {
            admitted,
            cause: None,
        }
    }
}
