//! A composite tool's batch (`ToolDispatcher::open_batch`, `TurnScheduler::batch`):
//! calls submitted as a stream run on the turn scheduler's own schedule —
//! admission in submission order, parallel-safe calls overlap, exclusive
//! calls run alone, conflicting resources serialize, the pool bound holds,
//! and every call ends in exactly one outcome, cancelled or not.
//!
//! The evidence is what the bodies see, never durations: a gauge of the
//! bodies running at once, read while each body yields to the others.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tack_core::capability::{BatchEvent, DispatchBatch};
use tack_core::tool::{ErrorCode, Outcome, OutputSpec, ToolCall, ToolDefinition};
use tack_pipeline::{ResourceClaim, SchedulerConfig};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::harness::*;

/// How many bodies run now; each body logs the most it saw at once.
#[derive(Clone, Default)]
struct Gauge {
    running: Arc<AtomicUsize>,
    log: Arc<Mutex<Vec<String>>>,
}

impl Gauge {
    fn lines(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    fn position(&self, line: &str) -> usize {
        let lines = self.lines();
        lines
            .iter()
            .position(|l| l.starts_with(line))
            .unwrap_or_else(|| panic!("no `{line}` in {lines:?}"))
    }

    /// `name({id, key?, write?})`, parallel-safe or exclusive: counts itself
    /// in, yields to the others a few times, logs the most bodies it saw.
    fn tool(&self, name: &str, parallel: bool) -> ToolDefinition {
        let gauge = self.clone();
        ToolDefinition::builder(name)
            .description("Counts the bodies running beside it.")
            .input_schema(json!({"type": "object", "properties": {"id": {"type": "string"}}}))
            .output(OutputSpec::new(json!({})))
            .concurrency_safe(move |_| parallel)
            .handler(move |args: Arc<Value>, _cx| {
                let gauge = gauge.clone();
                async move {
                    let id = args["id"].as_str().unwrap_or_default().to_owned();
                    gauge.log.lock().unwrap().push(format!("start {id}"));
                    let mut most = gauge.running.fetch_add(1, Ordering::SeqCst) + 1;
                    for _ in 0..8 {
                        tokio::task::yield_now().await;
                        most = most.max(gauge.running.load(Ordering::SeqCst));
                    }
                    gauge.running.fetch_sub(1, Ordering::SeqCst);
                    gauge
                        .log
                        .lock()
                        .unwrap()
                        .push(format!("end {id} saw {most}"));
                    Ok(json!(id))
                }
            })
            .build()
            .unwrap()
    }
}

/// A bench with the gauged tools `par` (parallel-safe) and `solo` (exclusive).
fn bench() -> (Bench, Gauge) {
    let b = Bench::new();
    let gauge = Gauge::default();
    b.registry.register(gauge.tool("par", true)).unwrap();
    b.registry.register(gauge.tool("solo", false)).unwrap();
    (b, gauge)
}

fn call(tool: &str, id: &str, extra: Value) -> ToolCall {
    let mut args = json!({"id": id});
    if let (Some(args), Some(extra)) = (args.as_object_mut(), extra.as_object()) {
        args.extend(extra.clone());
    }
    ToolCall::new(id, tool, args.to_string())
}

/// Drains `batch`: the events as `start <i>` / `end <i>`, and the outcomes
/// by index (each index must end exactly once).
async fn drain(batch: &mut dyn DispatchBatch) -> (Vec<String>, Vec<Arc<Outcome>>) {
    let mut lines = Vec::new();
    let mut ended: Vec<(usize, Arc<Outcome>)> = Vec::new();
    while let Some(event) = batch.next_event().await {
        match event {
            BatchEvent::Started(i) => lines.push(format!("start {i}")),
            BatchEvent::Ended(i, outcome) => {
                assert!(ended.iter().all(|(e, _)| *e != i), "{i} ended twice");
                lines.push(format!("end {i}"));
                ended.push((i, outcome));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    ended.sort_by_key(|(i, _)| *i);
    (lines, ended.into_iter().map(|(_, o)| o).collect())
}

#[tokio::test]
async fn calls_submitted_as_a_stream_follow_the_turn_rules() {
    let (b, gauge) = bench();
    let scheduler = b.scheduler(SchedulerConfig::default());
    let mut batch = scheduler.batch(CancellationToken::new(), usize::MAX);
    assert_eq!(batch.submit(call("par", "p0", json!({}))), 0);
    // The first call starts before the others are even submitted.
    assert!(matches!(
        batch.next_event().await,
        Some(BatchEvent::Started(0))
    ));
    assert_eq!(batch.submit(call("par", "p1", json!({}))), 1);
    assert_eq!(batch.submit(call("solo", "s2", json!({}))), 2);
    assert_eq!(batch.submit(call("par", "p3", json!({}))), 3);
    let (_, outcomes) = drain(&mut *batch).await;
    assert_eq!(outcomes.len(), 4);
    assert!(outcomes.iter().all(|o| o.is_success()), "{outcomes:?}");
    assert_eq!(
        gauge.lines(),
        [
            "start p0",
            "start p1",
            "end p0 saw 2",
            "end p1 saw 2",
            "start s2",
            "end s2 saw 1",
            "start p3",
            "end p3 saw 1",
        ]
    );
}

#[tokio::test]
async fn conflicting_resource_claims_in_a_batch_do_not_overlap() {
    let (b, gauge) = bench();
    let config = SchedulerConfig::default().with_resource_keys("par", |args: &Value| {
        vec![ResourceClaim::write(
            args["key"].as_str().unwrap_or_default(),
        )]
    });
    // The scheduler's dispatcher: batches under its configuration.
    let dispatcher = b.scheduler(config).dispatcher();
    let mut batch = dispatcher.open_batch(CancellationToken::new(), 10);
    batch.submit(call("par", "a1", json!({"key": "fs:/a"})));
    batch.submit(call("par", "b2", json!({"key": "fs:/b"})));
    batch.submit(call("par", "a3", json!({"key": "fs:/a"})));
    let (_, outcomes) = drain(&mut *batch).await;
    assert!(outcomes.iter().all(|o| o.is_success()), "{outcomes:?}");
    let lines = gauge.lines();
    // Different keys overlap; the second write of `fs:/a` waits for the first.
    assert!(lines.contains(&"end a1 saw 2".to_owned()), "{lines:?}");
    assert!(
        gauge.position("start a3") > gauge.position("end a1"),
        "{lines:?}"
    );
}

#[tokio::test]
async fn a_batch_keeps_the_scheduler_bound_and_its_own() {
    // The scheduler's pool bound of 1.
    let (b, gauge) = bench();
    let config = SchedulerConfig::default().with_max_parallel(1).unwrap();
    let dispatcher = b.scheduler(config).dispatcher();
    let mut batch = dispatcher.open_batch(CancellationToken::new(), 10);
    batch.submit(call("par", "p0", json!({})));
    batch.submit(call("par", "p1", json!({})));
    drain(&mut *batch).await;
    assert_eq!(
        gauge.lines(),
        ["start p0", "end p0 saw 1", "start p1", "end p1 saw 1"]
    );

    // The batch's own bound of 1, under the pipeline's own dispatcher.
    let (b, gauge) = bench();
    let dispatcher = b
        .pipeline
        .capabilities()
        .snapshot()
        .dispatcher
        .clone()
        .unwrap();
    let mut batch = dispatcher.open_batch(CancellationToken::new(), 1);
    batch.submit(call("par", "p0", json!({})));
    batch.submit(call("par", "p1", json!({})));
    drain(&mut *batch).await;
    assert_eq!(
        gauge.lines(),
        ["start p0", "end p0 saw 1", "start p1", "end p1 saw 1"]
    );
}

#[tokio::test]
async fn cancelling_a_batch_ends_every_call_once_and_runs_no_queued_call() {
    let (b, gauge) = bench();
    let started = Arc::new(Notify::new());
    let signal = Arc::clone(&started);
    let hang = ToolDefinition::builder("hang")
        .description("Waits until cancelled.")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({})))
        .handler(move |_args: Arc<Value>, cx| {
            let signal = Arc::clone(&signal);
            async move {
                signal.notify_one();
                cx.cancellation().cancelled().await;
                Err(tack_core::tool::ToolError::cancelled("stopped"))
            }
        })
        .build()
        .unwrap();
    b.registry.register(hang).unwrap();
    let cancel = CancellationToken::new();
    let scheduler = b.scheduler(SchedulerConfig::default());
    let mut batch = scheduler.batch(cancel.clone(), usize::MAX);
    batch.submit(ToolCall::new("h0", "hang", "{}"));
    batch.submit(call("solo", "s1", json!({})));
    batch.submit(call("par", "p2", json!({})));
    let canceller = async {
        started.notified().await;
        cancel.cancel();
    };
    let ((lines, outcomes), ()) = tokio::join!(drain(&mut *batch), canceller);
    assert_eq!(
        lines,
        ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]
    );
    assert!(gauge.lines().is_empty(), "no queued call ran");
    assert_eq!(ids(&outcomes), ["h0", "s1", "p2"]);
    for outcome in &outcomes {
        assert_eq!(code(outcome), Some(ErrorCode::Cancelled), "{outcome:?}");
    }
    assert!(outcomes[0].failure_info().unwrap().dispatched());
    assert!(!outcomes[1].failure_info().unwrap().dispatched());
    assert!(!outcomes[2].failure_info().unwrap().dispatched());
    // Through the pipeline: the observers saw all three.
    assert_eq!(b.observed.lock().len(), 3);
}

#[tokio::test]
async fn pre_execute_listeners_see_a_batch_one_call_at_a_time_in_submission_order() {
    let (b, _gauge) = bench();
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&log);
    let _policy = b.pipeline.hooks().pre_execute().tap(
        "order",
        move |exec: Arc<tack_core::tool::ToolExecution>, next| {
            let seen = Arc::clone(&seen);
            async move {
                let id = exec.call_id().as_str().to_owned();
                seen.lock().unwrap().push(format!("enter {id}"));
                // Each admission yields to the others: a call admitted
                // meanwhile would log its entry here.
                for _ in 0..8 {
                    tokio::task::yield_now().await;
                }
                seen.lock().unwrap().push(format!("exit {id}"));
                next.run(exec).await
            }
        },
    );
    let scheduler = b.scheduler(SchedulerConfig::default());
    let mut batch = scheduler.batch(CancellationToken::new(), usize::MAX);
    for id in ["p0", "p1", "p2"] {
        batch.submit(call("par", id, json!({})));
    }
    let (_, outcomes) = drain(&mut *batch).await;
    assert!(outcomes.iter().all(|o| o.is_success()), "{outcomes:?}");
    assert_eq!(
        *log.lock().unwrap(),
        [
            "enter p0", "exit p0", "enter p1", "exit p1", "enter p2", "exit p2"
        ]
    );
}
