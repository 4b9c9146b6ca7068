//! The outcomes of nested calls: the calls a composite tool (code mode, a
//! tool that calls other tools) dispatches from inside a call, kept for the
//! report of the top-level call they were made in.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tack_core::tool::{CallId, Outcome};

/// The outcomes of nested calls, by the id of the top-level call they were
/// made in (the root of their parent token), in the order they ended.
#[derive(Default)]
pub(crate) struct NestedCalls(Mutex<HashMap<CallId, Vec<Arc<Outcome>>>>);

impl NestedCalls {
    pub(crate) fn push(&self, root: CallId, outcome: Arc<Outcome>) {
        self.0.lock().entry(root).or_default().push(outcome);
    }

    /// The nested calls made in `root` that have ended, taken out.
    pub(crate) fn take(&self, root: &CallId) -> Vec<Arc<Outcome>> {
        self.0.lock().remove(root).unwrap_or_default()
    }
}
