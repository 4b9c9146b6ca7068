//! The setups the timeout tests share: the plugin over the pipeline with test
//! tools (through tack-test), and calls of them with a caller's signal.

use std::sync::Arc;
use std::time::Duration;

use tack_core::tool::Outcome;
use tack_test::{Call, FakeTool, Harness};
use tack_timeout::Timeout;
use tokio::time::sleep;
use tokio_util::sync::CancellationToken;

/// The timeout plugin over a pipeline with test tools.
pub type Timed = Harness<Timeout>;

/// `tools` registered globally, `policy` not installed yet (a test adds its
/// own listeners first, then calls `install`).
pub fn registry_with(tools: impl IntoIterator<Item = FakeTool>, policy: Timeout) -> Timed {
    let mut builder = Harness::builder();
    for tool in tools {
        builder = builder.tool(tool);
    }
    builder.uninstalled(policy).unwrap()
}

/// [`registry_with`] under the default policy.
pub fn registry(tools: impl IntoIterator<Item = FakeTool>) -> Timed {
    registry_with(tools, Timeout::default())
}

/// `tools`, then `policy` installed as the plugin.
pub fn timed_registry_with(tools: impl IntoIterator<Item = FakeTool>, policy: Timeout) -> Timed {
    let mut timed = registry_with(tools, policy);
    timed.install().unwrap();
    timed
}

/// [`timed_registry_with`] under the default policy: declared budgets only
/// (no default budget, no ceiling), a 2 s grace period.
pub fn timed_registry(tools: impl IntoIterator<Item = FakeTool>) -> Timed {
    timed_registry_with(tools, Timeout::default())
}

/// Calls the tool `name` (call id `c`, no arguments) with `caller` as the
/// caller's cancellation signal.
pub async fn call_with(r: &Timed, name: &str, caller: CancellationToken) -> Arc<Outcome> {
    r.call(Call::raw(name, "{}").id("c").cancellation(caller))
        .await
        .outcome()
        .clone()
}

/// Calls the tool `name` with a signal of its own that nobody cancels.
pub async fn call(r: &Timed, name: &str) -> Arc<Outcome> {
    call_with(r, name, CancellationToken::new()).await
}

/// Calls the tool `name`, and the caller cancels `after` that long.
pub async fn call_cancelled_after(r: &Timed, name: &str, after: Duration) -> Arc<Outcome> {
    r.call_cancelled_when(Call::raw(name, "{}").id("c"), sleep(after))
        .await
        .outcome()
        .clone()
}
