//! Lazy classification (PAR-010, PAR-011): a call's mode is decided when it is
//! next to start.

use std::sync::Arc;

use parking_lot::Mutex;
use pretty_assertions::assert_eq;
use serde_json::json;
use tack_core::hook::{AgentId, Disposer, Scope};
use tack_core::tool::{OutputSpec, ToolCall, ToolDefinition};

use super::harness::*;

fn flip(id: &str, ms: u64) -> ToolCall {
    ToolCall::new(id, "flip", json!({"ms": ms}).to_string())
}

#[tokio::test(start_paused = true)]
async fn calls_after_a_barrier_are_reclassified() {
    // PAR-010: an exclusive call replaces `flip` (parallel) with an exclusive one.
    let b = Arc::new(Bench::new());
    let old: Arc<Mutex<Option<Disposer>>> = Arc::new(Mutex::new(Some(
        b.registry
            .register(b.work_classified("flip", |_| true))
            .unwrap(),
    )));
    let replacement = b.work_classified("flip", |_| false);
    let registry = b.registry.clone();
    let slot = old.clone();
    b.registry
        .register(
            ToolDefinition::builder("swap")
                .description("Replaces flip.")
                .input_schema(json!({"type": "object"}))
                .output(OutputSpec::new(json!({})))
                .handler(move |_args, _cx| {
                    if let Some(old) = slot.lock().take() {
                        old.dispose();
                    }
                    registry.register(replacement.clone()).unwrap();
                    async move { Ok(json!({})) }
                })
                .build()
                .unwrap(),
        )
        .unwrap();
    assert_eq!(
        b.pipeline.execution_mode(&flip("x", 1)),
        tack_pipeline::ExecutionMode::Parallel
    );
    let out = b
        .run(
            10,
            vec![
                ToolCall::new("s", "swap", "{}"),
                flip("f1", 10),
                flip("f2", 10),
            ],
        )
        .await;
    assert!(out.iter().all(|o| o.is_success()), "{out:?}");
    assert_eq!(b.timeline(), ["f1 0..10", "f2 10..20"], "one at a time");
}

#[tokio::test(start_paused = true)]
async fn a_result_observer_can_make_the_next_call_exclusive() {
    // PAR-011: cap 2; when c1's result is observed, an exclusive `flip`
    // shadows the parallel one for agent `a`: the pool stops refilling, drains
    // c2 (which keeps its mode), and runs c3 alone.
    let b = Arc::new(Bench::new());
    b.registry
        .register(b.work_classified("flip", |_| true))
        .unwrap();
    let replacement = Mutex::new(Some(b.work_classified("flip", |_| false)));
    let registry = b.registry.clone();
    let _observer = b
        .pipeline
        .hooks()
        .result()
        .tap("shadow-on-c1", move |record| {
            if record.outcome.call_id.as_str() == "c1"
                && let Some(exclusive) = replacement.lock().take()
            {
                registry
                    .register_in(Scope::Agent(AgentId::new("a")), exclusive)
                    .unwrap();
            }
        });
    let out = b
        .run(
            2,
            ["c1", "c2", "c3", "c4"]
                .into_iter()
                .zip([10, 30, 10, 10])
                .map(|(id, ms)| flip(id, ms).with_agent("a"))
                .collect(),
        )
        .await;
    assert!(out.iter().all(|o| o.is_success()), "{out:?}");
    assert_eq!(
        b.timeline(),
        ["c1 0..10", "c2 0..30", "c3 30..40", "c4 40..50"]
    );
}
