//! Deferred context and concluded turns across a turn (CTX-001 … CTX-005),
//! and per-call isolation (PAR-016).

use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::json;
use tack_core::hook::Next;
use tack_core::hooks::{ExecuteOutput, ExecuteRequest, ExecutionRecord, PostDecision};
use tack_core::tool::ErrorCode;

use super::harness::*;

#[tokio::test(start_paused = true)]
async fn each_outcome_keeps_its_own_context_in_order_while_calls_overlap() {
    // CTX-001 in a parallel turn: deferred (body), then wrapper, then post,
    // per call, none leaking into a sibling.
    let b = Bench::new();
    let _wrapper = b.pipeline.hooks().execute().tap(
        "wrapper",
        |req: ExecuteRequest, next: Next<ExecuteRequest, ExecuteOutput>| async move {
            let context = req.context().clone();
            let id = req.execution().call_id().to_string();
            let out = next.run(req).await;
            context.defer_context(format!("wrapper-{id}"));
            out
        },
    );
    let _post = b.pipeline.hooks().post_execute().tap(
        "post",
        |record: ExecutionRecord, next: Next<ExecutionRecord, PostDecision>| async move {
            let id = record.outcome.call_id.to_string();
            next.run(record).await.add_context(format!("post-{id}"))
        },
    );
    let out = b
        .run(
            10,
            vec![
                work_with("c1", json!({"ms": 20, "p": true, "ctx": "body-c1"})),
                // CTX-002: a failure keeps its context.
                work_with(
                    "c2",
                    json!({"ms": 10, "p": true, "ctx": "body-c2", "fail": true}),
                ),
            ],
        )
        .await;
    assert_eq!(
        out[0].deferred_context,
        ["body-c1", "wrapper-c1", "post-c1"]
    );
    assert_eq!(
        out[1].deferred_context,
        ["body-c2", "wrapper-c2", "post-c2"]
    );
    assert_eq!(code(&out[1]), Some(ErrorCode::ExecutionFailed));
    assert_eq!(b.timeline(), ["c1 0..20", "c2 0..10"]);
}

#[tokio::test(start_paused = true)]
async fn a_concluding_success_marks_the_turn_and_a_failure_never_does() {
    // CTX-004 / CTX-005: the loop ends the agent's turn when any outcome of
    // the committed batch concluded it; the scheduler still runs every call.
    let b = Bench::new();
    let out = b
        .run(
            10,
            vec![
                work_with("c1", json!({"ms": 5, "p": true, "conclude": true})),
                work_with(
                    "c2",
                    json!({"ms": 5, "p": true, "conclude": true, "fail": true}),
                ),
                work("c3", 10, true),
            ],
        )
        .await;
    let concluded: Vec<bool> = out.iter().map(|o| o.concluded_turn).collect();
    assert_eq!(concluded, [true, false, false]);
    assert!(out.iter().any(|o| o.concluded_turn));
    assert!(out[2].is_success());
}

#[tokio::test(start_paused = true)]
async fn a_wrapper_swapping_one_calls_signal_cannot_reach_a_sibling() {
    // PAR-016: each call has its own execution and request; a wrapper cancels
    // the child signal it made for c1 only.
    let b = Bench::new();
    let _wrapper = b.pipeline.hooks().execute().tap(
        "deadline-for-c1",
        |req: ExecuteRequest, next: Next<ExecuteRequest, ExecuteOutput>| async move {
            if req.execution().call_id().as_str() == "c1" {
                let (req, child) = req.child_cancellation();
                child.cancel();
                return next.run(req).await;
            }
            next.run(req).await
        },
    );
    let out = b
        .run(10, vec![work("c1", 10, true), work("c2", 10, true)])
        .await;
    assert_eq!(code(&out[0]), Some(ErrorCode::Cancelled));
    assert!(out[1].is_success());
    assert_eq!(b.timeline(), ["c2 0..10"]);
    let _ = Arc::new(());
}
