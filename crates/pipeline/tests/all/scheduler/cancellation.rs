//! Cancelling a turn, and the sibling-failure policy (PAR-013, PAR-014).

use pretty_assertions::assert_eq;
use serde_json::json;
use tack_core::tool::{ErrorCode, ToolCall};
use tack_pipeline::SchedulerConfig;
use tokio_util::sync::CancellationToken;

use super::harness::*;

const USER_CANCEL: &str =
    "CANCELLED: the call of tool `work` was cancelled before the tool started; nothing was done";

#[tokio::test(start_paused = true)]
async fn cancelling_mid_turn_drains_the_running_and_cancels_the_rest() {
    // PAR-013: cap 2, 4 calls, cancel while c1 and c2 run.
    let b = Bench::new();
    let cancel = cancelled_after(5);
    let calls = vec![
        work_with("c1", json!({"ms": 10, "p": true, "ctx": "ctx-c1"})),
        work_with("c2", json!({"ms": 10, "p": true, "ctx": "ctx-c2"})),
        work("c3", 10, true),
        work("c4", 10, true),
    ];
    let out = b
        .run_with(
            SchedulerConfig::default().with_max_parallel(2).unwrap(),
            calls,
            cancel,
        )
        .await;
    assert_eq!(ids(&out), ["c1", "c2", "c3", "c4"]);
    for running in &out[..2] {
        let failure = running.failure_info().unwrap();
        assert_eq!(failure.code(), ErrorCode::Cancelled);
        assert!(failure.dispatched(), "the body had started");
    }
    // Deferred context of the started calls rides on their outcomes.
    assert_eq!(out[0].deferred_context, ["ctx-c1"]);
    assert_eq!(out[1].deferred_context, ["ctx-c2"]);
    for unstarted in &out[2..] {
        assert_eq!(code(unstarted), Some(ErrorCode::Cancelled));
        assert!(!unstarted.failure_info().unwrap().dispatched());
        assert_eq!(text(unstarted), USER_CANCEL);
    }
    assert_eq!(b.timeline(), ["c1 0..5", "c2 0..5"], "no new call started");
    // Not-started calls still went through the pipeline: observers saw all four.
    assert_eq!(b.observed.lock().len(), 4);
    // ... skipping policy and the body. (Each is resolved and parsed once,
    // when it is next to start; c4 is next as soon as c3 has started.)
    let unstarted: Vec<String> = b
        .recorder
        .events(&["resolve", "pre", "execute", "post", "result"])
        .into_iter()
        .filter(|e| e.ends_with("c3") || e.ends_with("c4"))
        .collect();
    assert_eq!(
        unstarted,
        [
            "resolve c3",
            "resolve c4",
            "post c3",
            "result c3",
            "post c4",
            "result c4"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn an_exclusive_call_after_an_aborted_group_never_runs() {
    // PAR-014
    let b = Bench::new();
    let out = b
        .run_with(
            SchedulerConfig::default(),
            vec![
                work("p1", 10, true),
                work("p2", 10, true),
                work("e3", 1, false),
            ],
            cancelled_after(3),
        )
        .await;
    assert_eq!(code(&out[2]), Some(ErrorCode::Cancelled));
    assert!(!out[2].failure_info().unwrap().dispatched());
    assert_eq!(b.timeline(), ["p1 0..3", "p2 0..3"]);
}

#[tokio::test(start_paused = true)]
async fn a_turn_cancelled_before_it_starts_answers_every_call() {
    let b = Bench::new();
    let calls = vec![
        work("c1", 10, true),
        ToolCall::new("c2", "nope", "{}"),
        work("c3", 10, false),
        ToolCall::new("c4", "work", "not json"),
    ];
    let out = b
        .run_with(SchedulerConfig::default(), calls, cancelled())
        .await;
    assert_eq!(ids(&out), ["c1", "c2", "c3", "c4"]);
    let codes: Vec<_> = out.iter().map(|o| code(o)).collect();
    assert_eq!(
        codes,
        [
            Some(ErrorCode::Cancelled),
            Some(ErrorCode::UnknownTool),
            Some(ErrorCode::Cancelled),
            // Malformed arguments are reported as such: the caller's to fix.
            Some(ErrorCode::InvalidArguments),
        ]
    );
    assert!(b.spans().is_empty());
    assert_eq!(b.observed.lock().len(), 4);
}

#[tokio::test(start_paused = true)]
async fn by_default_a_failure_does_not_touch_its_siblings() {
    let b = Bench::new();
    let out = b
        .run(
            10,
            vec![
                work("c1", 20, true),
                work_with("c2", json!({"ms": 5, "p": true, "fail": true})),
                work("c3", 10, true),
                work("c4", 10, false),
            ],
        )
        .await;
    assert!(out[0].is_success() && out[2].is_success() && out[3].is_success());
    assert_eq!(code(&out[1]), Some(ErrorCode::ExecutionFailed));
    assert_eq!(
        b.timeline(),
        ["c1 0..20", "c2 0..5", "c3 0..10", "c4 20..30"]
    );
}

#[tokio::test(start_paused = true)]
async fn cancel_siblings_on_failure_stops_the_rest_and_says_why() {
    let b = Bench::new();
    let out = b
        .run_with(
            SchedulerConfig::default()
                .with_cancel_siblings_on_failure(true)
                .with_max_parallel(3)
                .unwrap(),
            vec![
                work("c1", 20, true),
                work_with("c2", json!({"ms": 5, "p": true, "fail": true})),
                work("c3", 10, true),
                work("c4", 10, true),
                work("c5", 10, false),
            ],
            CancellationToken::new(),
        )
        .await;
    assert_eq!(ids(&out), ["c1", "c2", "c3", "c4", "c5"]);
    assert_eq!(code(&out[1]), Some(ErrorCode::ExecutionFailed));
    assert_eq!(text(&out[1]), "EXECUTION_FAILED: it failed on purpose");
    // Running siblings (before and after the failed call) were stopped ...
    for stopped in [&out[0], &out[2]] {
        assert_eq!(code(stopped), Some(ErrorCode::Cancelled));
        assert!(stopped.failure_info().unwrap().dispatched());
        assert_eq!(
            text(stopped),
            format!(
                "CANCELLED: `work` was stopped because call `c2` (`work`) failed (EXECUTION_FAILED: it failed on purpose), and this turn cancels its remaining calls when one fails. The tool had started, so part of its work may have happened; check before calling it again. (interrupted while sleeping)"
            )
        );
    }
    // ... and the rest never started, with a message unlike a user interrupt.
    for unstarted in &out[3..] {
        assert_eq!(code(unstarted), Some(ErrorCode::Cancelled));
        assert!(!unstarted.failure_info().unwrap().dispatched());
        assert_eq!(
            text(unstarted),
            "CANCELLED: `work` was not run because call `c2` (`work`) failed (EXECUTION_FAILED: it failed on purpose), and this turn cancels its remaining calls when one fails. Nothing was done; call it again if it is still needed."
        );
        assert_ne!(text(unstarted), USER_CANCEL);
    }
    assert_eq!(b.timeline(), ["c1 0..5", "c2 0..5", "c3 0..5"]);
    // The observers saw the same explanation the model reads.
    let seen = b.observed.lock();
    let c5 = seen.iter().find(|o| o.call_id.as_str() == "c5").unwrap();
    assert!(std::sync::Arc::ptr_eq(c5, &out[4]));
    drop(seen);
    assert!(
        b.pipeline
            .hooks()
            .post_execute()
            .listener_names(None)
            .is_empty()
    );
}

#[tokio::test(start_paused = true)]
async fn a_user_interrupt_is_not_reported_as_a_sibling_failure() {
    let b = Bench::new();
    let out = b
        .run_with(
            SchedulerConfig::default().with_cancel_siblings_on_failure(true),
            vec![work("c1", 10, true), work("c2", 10, true)],
            cancelled(),
        )
        .await;
    for o in &out {
        assert_eq!(text(o), USER_CANCEL);
    }
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_call_does_not_count_as_a_failure() {
    // A body that reports CANCELLED on its own does not cancel its siblings.
    let b = Bench::new();
    b.add_parallel_tool(
        "quits",
        "Reports a cancellation.",
        |_args, _cx| async move { Err(tack_core::tool::ToolError::cancelled("gave up")) },
    );
    let out = b
        .run_with(
            SchedulerConfig::default().with_cancel_siblings_on_failure(true),
            vec![ToolCall::new("q", "quits", "{}"), work("c2", 10, true)],
            CancellationToken::new(),
        )
        .await;
    assert_eq!(code(&out[0]), Some(ErrorCode::Cancelled));
    assert!(out[1].is_success());
}

#[tokio::test(start_paused = true)]
async fn a_body_cancelling_its_own_token_does_not_cancel_its_siblings() {
    // Each call gets a child token of the turn's.
    let b = Bench::new();
    b.add_parallel_tool(
        "selfish",
        "Cancels its own token.",
        |_args, cx| async move {
            cx.cancellation().cancel();
            Ok(json!({}))
        },
    );
    let out = b
        .run(
            10,
            vec![ToolCall::new("s", "selfish", "{}"), work("c2", 10, true)],
        )
        .await;
    assert!(out[1].is_success());
    assert_eq!(b.timeline(), ["c2 0..10"]);
}
