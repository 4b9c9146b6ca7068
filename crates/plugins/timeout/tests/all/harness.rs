//! Test tools for the timeout plugin.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;
use tack_core::context::ToolRunContext;
use tack_core::tool::{Outcome, ToolError};
use tack_test::FakeTool;

/// A tool with an optional declared timeout and a body of the run context.
pub fn tool<F, Fut>(name: &str, timeout_ms: Option<u64>, body: F) -> FakeTool
where
    F: Fn(ToolRunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    let tool = FakeTool::new(name).body(move |_args, cx| body(cx));
    match timeout_ms {
        Some(ms) => tool.timeout(Duration::from_millis(ms)),
        None => tool,
    }
}

pub fn failure(outcome: &Outcome) -> &ToolError {
    outcome
        .failure_info()
        .unwrap_or_else(|| panic!("expected a failure: {outcome:?}"))
}
