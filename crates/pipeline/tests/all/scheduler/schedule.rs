//! The shape of a schedule: barriers, the rolling pool, order (PAR-001, PAR-003, PAR-006).

use pretty_assertions::assert_eq;
use tack_core::tool::ErrorCode;
use tack_pipeline::{SchedulerConfig, SchedulerConfigError, TurnScheduler};
use tokio_util::sync::CancellationToken;

use super::harness::*;

#[tokio::test(start_paused = true)]
async fn p_p_e_p_p_p_has_the_exact_overlap_pattern() {
    let b = Bench::new();
    let calls = vec![
        work("p1", 10, true),
        work("p2", 20, true),
        work("e3", 5, false),
        work("p4", 10, true),
        work("p5", 30, true),
        work("p6", 10, true),
    ];
    let out = b.run(10, calls).await;
    assert_eq!(ids(&out), ["p1", "p2", "e3", "p4", "p5", "p6"]);
    assert!(out.iter().all(|o| o.is_success()));
    assert_eq!(
        b.timeline(),
        [
            "p1 0..10",
            "p2 0..20",
            // waits for everything before it, runs alone
            "e3 20..25",
            // nothing after it starts before it ends
            "p4 25..35",
            "p5 25..55",
            "p6 25..35",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn three_parallel_siblings_all_start_before_any_completes() {
    // PAR-001
    let b = Bench::new();
    let out = b
        .run(
            10,
            vec![
                work("1", 10, true),
                work("2", 10, true),
                work("3", 10, true),
            ],
        )
        .await;
    assert_eq!(ids(&out), ["1", "2", "3"]);
    assert_eq!(b.timeline(), ["1 0..10", "2 0..10", "3 0..10"]);
}

#[tokio::test(start_paused = true)]
async fn the_pool_rolls_it_does_not_run_in_windows() {
    // PAR-003: cap 2, four calls; the 3rd starts as soon as the 1st settles.
    let b = Bench::new();
    let out = b
        .run(
            2,
            vec![
                work("c1", 10, true),
                work("c2", 30, true),
                work("c3", 10, true),
                work("c4", 10, true),
            ],
        )
        .await;
    assert_eq!(ids(&out), ["c1", "c2", "c3", "c4"]);
    assert_eq!(
        b.timeline(),
        ["c1 0..10", "c2 0..30", "c3 10..20", "c4 20..30"]
    );
    assert_eq!(peak(&b.spans()), 2);
    // PAR-006: a call starts (its admission, `pre`) right when a slot frees,
    // so call and result events interleave; outcomes still come back in model
    // order.
    assert_eq!(
        b.recorder.events(&["pre", "result"]),
        [
            "pre c1",
            "pre c2",
            "result c1",
            "pre c3",
            "result c3",
            "pre c4",
            "result c2",
            "result c4",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn the_pool_bound_is_never_exceeded() {
    let b = Bench::new();
    let calls: Vec<_> = (0..25)
        .map(|i| work(&format!("c{i:02}"), 5 + (i * 7) % 13, true))
        .collect();
    let out = b.run(4, calls).await;
    assert_eq!(out.len(), 25);
    assert_eq!(peak(&b.spans()), 4);
    let order: Vec<String> = b.spans().into_iter().map(|s| s.id).collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted, "bodies start in model order");
}

#[tokio::test(start_paused = true)]
async fn max_parallel_one_is_serial() {
    let b = Bench::new();
    b.run(
        1,
        vec![work("a", 10, true), work("b", 5, true), work("c", 1, false)],
    )
    .await;
    assert_eq!(b.timeline(), ["a 0..10", "b 10..15", "c 15..16"]);
}

// max_parallel 0 once became 1 silently; it is refused, saying why and what works.
#[test]
fn max_parallel_zero_is_refused_with_a_clear_error() {
    let err = SchedulerConfig::default().with_max_parallel(0).unwrap_err();
    assert_eq!(err, SchedulerConfigError::ZeroMaxParallel);
    let text = err.to_string();
    assert!(
        text.contains("max_parallel must be at least 1, got 0"),
        "{text}"
    );
    assert!(text.contains("1 runs every call alone"), "{text}");
    assert_eq!(
        SchedulerConfig::default()
            .with_max_parallel(1)
            .unwrap()
            .max_parallel(),
        1
    );
}

#[tokio::test(start_paused = true)]
async fn outcomes_come_back_in_model_order_whatever_the_finish_order() {
    let b = Bench::new();
    let calls: Vec<_> = (0..6)
        .map(|i| work(&format!("c{i}"), 60 - 10 * i, true))
        .collect();
    let out = b.run(10, calls).await;
    assert_eq!(ids(&out), ["c0", "c1", "c2", "c3", "c4", "c5"]);
    // ... while the observers saw them finish in reverse.
    let seen: Vec<String> = b
        .observed
        .lock()
        .iter()
        .map(|o| o.call_id.to_string())
        .collect();
    assert_eq!(seen, ["c5", "c4", "c3", "c2", "c1", "c0"]);
}

#[tokio::test(start_paused = true)]
async fn exclusive_calls_never_overlap_anything() {
    let b = Bench::new();
    let calls = vec![
        work("e1", 3, false),
        work("e2", 3, false),
        work("p3", 10, true),
        work("e4", 3, false),
        work("p5", 1, true),
    ];
    b.run(10, calls).await;
    assert_eq!(
        b.timeline(),
        ["e1 0..3", "e2 3..6", "p3 6..16", "e4 16..19", "p5 19..20"]
    );
}

#[tokio::test(start_paused = true)]
async fn unknown_and_invalid_calls_are_exclusive_and_still_answered() {
    let b = Bench::new();
    let calls = vec![
        work("p1", 10, true),
        tack_core::tool::ToolCall::new("u2", "nope", "{}"),
        tack_core::tool::ToolCall::new("i3", "work", r#"{"ms": "x", "p": true}"#),
        work("p4", 10, true),
    ];
    let out = b.run(10, calls).await;
    assert_eq!(ids(&out), ["p1", "u2", "i3", "p4"]);
    assert_eq!(code(&out[1]), Some(tack_core::tool::ErrorCode::UnknownTool));
    assert_eq!(
        code(&out[2]),
        Some(tack_core::tool::ErrorCode::InvalidArguments)
    );
    // The unknown call waited for p1 (it is a barrier).
    assert_eq!(b.timeline(), ["p1 0..10", "p4 10..20"]);
}

#[tokio::test(start_paused = true)]
async fn an_empty_turn_is_empty() {
    let b = Bench::new();
    assert!(b.run(3, Vec::new()).await.is_empty());
    assert!(
        TurnScheduler::new(b.pipeline.clone())
            .run_turn(Vec::new(), CancellationToken::new())
            .await
            .is_empty()
    );
}

#[tokio::test(start_paused = true)]
async fn the_default_configuration_uses_a_pool_of_ten() {
    let b = Bench::new();
    let calls: Vec<_> = (0..12)
        .map(|i| work(&format!("c{i:02}"), 10, true))
        .collect();
    let out = TurnScheduler::new(b.pipeline.clone())
        .run_turn(calls, CancellationToken::new())
        .await;
    assert_eq!(out.len(), 12);
    assert_eq!(peak(&b.spans()), 10);
    let last = b.spans().pop().unwrap();
    assert_eq!((last.start, last.end), (10, Some(20)));
}

#[test]
fn the_turn_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let b = Bench::new();
    let scheduler = b.scheduler(SchedulerConfig::default());
    let turn = scheduler.run_turn(vec![work("c1", 1, true)], CancellationToken::new());
    assert_send(&turn);
    let default = TurnScheduler::new(b.pipeline.clone());
    let turn = default.run_turn(Vec::new(), CancellationToken::new());
    assert_send(&turn);
}

// Duplicate call ids once both ran, giving two results with one id: the
// second and later ones are refused in their place, the first runs.
#[tokio::test(start_paused = true)]
async fn a_reused_call_id_is_refused_and_the_first_call_with_it_runs() {
    let b = Bench::new();
    let out = b
        .run(
            10,
            vec![
                work("a", 10, true),
                work("b", 10, true),
                work("a", 5, true),
                work("b", 1, false),
                work("c", 1, false),
            ],
        )
        .await;
    assert_eq!(ids(&out), ["a", "b", "a", "b", "c"]);
    assert!(out[0].is_success() && out[1].is_success() && out[4].is_success());
    for (i, first) in [(2, 1), (3, 2)] {
        let failure = out[i].failure_info().unwrap();
        assert_eq!(failure.code(), ErrorCode::InvalidArguments);
        assert!(!failure.dispatched());
        assert_eq!(
            failure.message(),
            format!(
                "call id `{}` is already used by call #{first} in this batch; every call in a \
                 batch needs its own id",
                out[i].call_id
            )
        );
    }
    // Only the first call with each id ran; every outcome was observed.
    assert_eq!(b.timeline(), ["a 0..10", "b 0..10", "c 10..11"]);
    assert_eq!(b.observed.lock().len(), 5);
}
