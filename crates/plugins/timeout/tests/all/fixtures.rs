//! The setups the timeout tests share: a registry holding test tools, with
//! the plugin installed, and calls of them with a caller's signal.

use std::sync::Arc;
use std::time::Duration;

use tack_core::hook::Disposables;
use tack_core::tool::{Outcome, ToolCall, ToolDefinition};
use tack_pipeline::{Pipeline, ToolRegistry};
use tack_timeout::TimeoutPolicy;
use tokio::time::sleep;
use tokio_util::sync::CancellationToken;

use crate::harness::install;

/// A pipeline over a registry holding `tools` in the global scope for its whole life.
pub fn registry(tools: impl IntoIterator<Item = ToolDefinition>) -> Pipeline {
    let r = ToolRegistry::new();
    for def in tools {
        r.register(def).unwrap().forget();
    }
    Pipeline::new(r)
}

/// A [`registry`] holding `tools`, then `policy` installed into it as the
/// plugin; dropping the second half unloads the plugin.
pub fn timed_registry_with(
    tools: impl IntoIterator<Item = ToolDefinition>,
    policy: &TimeoutPolicy,
) -> (Pipeline, Disposables) {
    let r = registry(tools);
    let plugin = install(&r, policy);
    (r, plugin)
}

/// [`timed_registry_with`] under the default policy: declared budgets only
/// (no default budget, no ceiling), a 2 s grace period.
pub fn timed_registry(tools: impl IntoIterator<Item = ToolDefinition>) -> (Pipeline, Disposables) {
    timed_registry_with(tools, &TimeoutPolicy::default())
}

/// Calls the tool `name` (call id `c`, no arguments) with `caller` as the
/// caller's cancellation signal.
pub async fn call_with(r: &Pipeline, name: &str, caller: CancellationToken) -> Arc<Outcome> {
    r.execute(ToolCall::new("c", name, "{}"), caller).await
}

/// Calls the tool `name` with a signal of its own that nobody cancels.
pub async fn call(r: &Pipeline, name: &str) -> Arc<Outcome> {
    call_with(r, name, CancellationToken::new()).await
}

/// Calls the tool `name`, and the caller cancels `after` that long.
pub async fn call_cancelled_after(r: &Pipeline, name: &str, after: Duration) -> Arc<Outcome> {
    let caller = CancellationToken::new();
    let cancel = caller.clone();
    let (out, ()) = tokio::join!(call_with(r, name, caller), async move {
        sleep(after).await;
        cancel.cancel();
    });
    out
}
