//! Nested dispatch: how a composite tool (such as `run_code`) calls other tools.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::tool::{Outcome, ToolCall};

/// Runs a tool call through the complete pipeline. Implemented by the host's
/// pipeline; reached from a tool body through
/// [`ToolRunContext::dispatcher`](crate::context::ToolRunContext::dispatcher).
///
/// A composite tool sets the call's [`parent`](ToolCall::parent) to its own
/// execution's token so the pipeline knows the call is nested.
pub trait ToolDispatcher: Send + Sync + 'static {
    /// Runs `call`; always ends in exactly one outcome (the same frozen value
    /// the `tools/result` observers saw).
    fn dispatch(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Arc<Outcome>>;
}

impl fmt::Debug for dyn ToolDispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDispatcher").finish_non_exhaustive()
    }
}
