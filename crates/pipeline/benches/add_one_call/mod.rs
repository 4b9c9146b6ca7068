//! What the pipeline benches share: a trivial typed tool (`{x: integer}` →
//! `x + 1`), a pipeline holding it, the typical listener set, and one call
//! as a host hands it over.
//!
//! Each call is what a host hands the pipeline: a `ToolCall` whose name and
//! argument text it has just read (two allocations per call, counted; the id
//! is shared) and a clone of the turn's cancellation token (made once per
//! turn, not per call).

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tack_core::context::ToolRunContext;
use tack_core::hook::Disposer;
use tack_core::hooks::ExecutionRecord;
use tack_core::tool::{Tier, Tool, ToolCall, ToolDefinition, ToolError};
use tack_pipeline::{Pipeline, ToolRegistry};
use tokio_util::sync::CancellationToken;

/// The tool's arguments.
#[derive(Deserialize, JsonSchema)]
pub struct AddArgs {
    x: i64,
}

/// The tool's output.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct AddOut {
    y: i64,
}

/// The benchmarked tool.
pub struct AddOne;

impl Tool for AddOne {
    const NAME: &'static str = "add_one";
    type Args = AddArgs;
    type Output = AddOut;
    fn description(&self) -> &str {
        "Add one to x."
    }
    fn tier(&self) -> Tier {
        Tier::ReadOnly
    }
    async fn execute(&self, args: AddArgs, _cx: &ToolRunContext) -> Result<AddOut, ToolError> {
        Ok(AddOut { y: args.x + 1 })
    }
}

/// Polls `future` once: every benchmarked call completes on its first poll.
pub fn poll_once<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("benchmark calls complete on their first poll"),
    }
}

/// A pipeline over a registry holding [`AddOne`] (kept while the disposer lives).
pub fn add_one_registry() -> (Pipeline, Disposer) {
    let registry = ToolRegistry::new();
    let tool = registry
        .register(ToolDefinition::from_tool(AddOne).expect("valid tool"))
        .expect("registers");
    (Pipeline::new(registry), tool)
}

/// Set (c): 5 pre-execute listeners, 1 guard, 1 execute wrapper, 1
/// post-execute listener, 1 result observer.
pub fn with_listeners(registry: &Pipeline) -> Vec<Disposer> {
    let hooks = registry.hooks();
    let mut keep: Vec<Disposer> = (0..5)
        .map(|i| {
            hooks
                .pre_execute()
                .tap(format!("pre-{i}"), |exec, next| next.run(exec))
        })
        .collect();
    keep.push(hooks.guard("guard", |_| Ok(())));
    keep.push(
        hooks
            .execute()
            .tap("wrapper", |request, next| next.run(request)),
    );
    keep.push(
        hooks
            .post_execute()
            .tap("post", |input, next| next.run(input)),
    );
    keep.push(
        hooks
            .result()
            .tap("observer", |record: &Arc<ExecutionRecord>| {
                black_box(record.outcome.is_success());
            }),
    );
    keep
}

thread_local! {
    /// The call, as a host holds it once it has read the model's message.
    static CALL: ToolCall = ToolCall::new("c1", "add_one", r#"{"x": 41}"#);
    /// The turn's cancellation signal: a host makes one per turn and hands
    /// each call of the turn a clone.
    static TURN: CancellationToken = CancellationToken::new();
}

/// A fresh call: a clone of [`CALL`] copies its name and argument text (two
/// allocations, what reading them from the model's message costs) and shares
/// its id (an `Arc<str>`, made once per call by the host's parser).
pub fn call() -> ToolCall {
    CALL.with(ToolCall::clone)
}

/// A clone of the turn's cancellation token.
pub fn turn() -> CancellationToken {
    TURN.with(CancellationToken::clone)
}

/// One call through the pipeline; it must succeed.
pub fn run(registry: &Pipeline) {
    let outcome = poll_once(registry.execute(call(), turn()));
    assert!(outcome.is_success(), "{outcome:?}");
}
