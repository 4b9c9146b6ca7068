//! A host fault (a panicking stage recorder) while the scheduler prepares the
//! next call: that call ends `INTERNAL`, naming the part that failed; no
//! later call starts; the calls already started finish with their own
//! outcomes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use parking_lot::Mutex;
use serde_json::{Value, json};
use tack_core::hook::Disposer;
use tack_core::hooks::ToolHooks;
use tack_core::host::CapabilitySlots;
use tack_core::tool::{CallId, ErrorCode, Outcome, OutputSpec, ToolCall, ToolDefinition};
use tack_pipeline::{Pipeline, PipelineConfig, Stage, StageRecorder, ToolRegistry, TurnScheduler};
use tokio_util::sync::CancellationToken;

/// Panics the first time `call` enters `stage`; records every stage.
struct Faulty {
    call: &'static str,
    stage: Stage,
    fired: AtomicBool,
    seen: Mutex<Vec<(String, Stage)>>,
}

impl Faulty {
    fn new(call: &'static str, stage: Stage) -> Arc<Self> {
        Arc::new(Self {
            call,
            stage,
            fired: AtomicBool::new(false),
            seen: Mutex::default(),
        })
    }
}

impl StageRecorder for Faulty {
    fn record(&self, call_id: &CallId, stage: Stage) {
        self.seen.lock().push((call_id.to_string(), stage));
        if call_id.as_str() == self.call
            && stage == self.stage
            && !self.fired.swap(true, Ordering::SeqCst)
        {
            panic!("recorder broke on {call_id}");
        }
    }
}

struct Setup {
    scheduler: TurnScheduler,
    bodies: Arc<Mutex<Vec<String>>>,
    finished: Arc<AtomicUsize>,
    observed: Arc<Mutex<Vec<Arc<Outcome>>>>,
    _observer: Disposer,
}

/// `slow` (parallel; its body sleeps 30 ms) and `echo` (parallel), with
/// `recorder`.
fn setup(recorder: Arc<Faulty>) -> Setup {
    let registry = ToolRegistry::new();
    let bodies: Arc<Mutex<Vec<String>>> = Arc::default();
    let finished = Arc::new(AtomicUsize::new(0));
    for (name, sleep) in [("slow", 30), ("echo", 0)] {
        let bodies = bodies.clone();
        let finished = finished.clone();
        let tool = ToolDefinition::builder(name)
            .description("Test tool.")
            .input_schema(json!({"type": "object"}))
            .output(OutputSpec::new(json!({})))
            .concurrency_safe(|_| true)
            .handler(move |_args: Arc<Value>, cx| {
                let bodies = bodies.clone();
                let finished = finished.clone();
                async move {
                    bodies.lock().push(cx.call_id().to_string());
                    tokio::time::sleep(std::time::Duration::from_millis(sleep)).await;
                    finished.fetch_add(1, Ordering::SeqCst);
                    Ok(json!("done"))
                }
            })
            .build()
            .unwrap();
        registry.register(tool).unwrap();
    }
    let hooks = ToolHooks::new();
    let observed: Arc<Mutex<Vec<Arc<Outcome>>>> = Arc::default();
    let sink = observed.clone();
    let observer = hooks.result().tap(
        "observer",
        move |record: &Arc<tack_core::hooks::ExecutionRecord>| {
            sink.lock().push(record.outcome.clone())
        },
    );
    let pipeline = Pipeline::with_parts(
        registry,
        hooks,
        CapabilitySlots::new(),
        PipelineConfig::default().with_stage_recorder(recorder),
    );
    Setup {
        scheduler: TurnScheduler::new(pipeline),
        bodies,
        finished,
        observed,
        _observer: observer,
    }
}

#[tokio::test]
async fn a_host_fault_while_preparing_the_next_call_ends_that_call_and_starts_no_more() {
    let recorder = Faulty::new("c2", Stage::Resolve);
    let s = setup(recorder.clone());
    let calls = vec![
        ToolCall::new("c1", "slow", "{}"),
        ToolCall::new("c2", "echo", "{}"),
        ToolCall::new("c3", "echo", "{}"),
        ToolCall::new("c4", "slow", "{}"),
    ];
    let outcomes = s.scheduler.run_turn(calls, CancellationToken::new()).await;
    let ids: Vec<&str> = outcomes.iter().map(|o| o.call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);

    // The call already started ran to its end: its real outcome.
    assert!(outcomes[0].is_success(), "{:?}", outcomes[0]);
    assert_eq!(outcomes[0].value(), Some(&json!("done")));
    assert_eq!(*s.bodies.lock(), ["c1"]);
    assert_eq!(s.finished.load(Ordering::SeqCst), 1);

    // The call being prepared: INTERNAL, naming the host part.
    let fault = outcomes[1].failure_info().unwrap();
    assert_eq!(fault.code(), ErrorCode::Internal);
    assert!(
        fault.message().contains("stage recorder") && fault.message().contains("`resolve`"),
        "{}",
        fault.message()
    );
    assert!(
        fault.message().contains("recorder broke on c2"),
        "{}",
        fault.message()
    );
    assert!(!fault.dispatched());

    // The calls after it never started: CANCELLED, not dispatched, saying why.
    for later in &outcomes[2..] {
        let f = later.failure_info().unwrap();
        assert_eq!(f.code(), ErrorCode::Cancelled, "{later:?}");
        assert!(!f.dispatched());
        assert!(f.message().contains("call `c2`"), "{}", f.message());
        assert!(f.message().contains("Nothing was done"), "{}", f.message());
    }

    // Every outcome went through the pipeline to the observers.
    let mut observed: Vec<String> = s
        .observed
        .lock()
        .iter()
        .map(|o| o.call_id.to_string())
        .collect();
    observed.sort();
    assert_eq!(observed, ["c1", "c2", "c3", "c4"]);
}

/// A fault while the scheduler prepares the very first call.
#[tokio::test]
async fn a_host_fault_on_the_first_call_runs_nothing() {
    let recorder = Faulty::new("c1", Stage::Validate);
    let s = setup(recorder);
    let calls = vec![
        ToolCall::new("c1", "echo", "{}"),
        ToolCall::new("c2", "echo", "{}"),
    ];
    let outcomes = s.scheduler.run_turn(calls, CancellationToken::new()).await;
    assert_eq!(outcomes[0].error_code(), Some(ErrorCode::Internal));
    assert!(
        outcomes[0]
            .failure_info()
            .unwrap()
            .message()
            .contains("`validate`"),
        "{:?}",
        outcomes[0]
    );
    assert_eq!(outcomes[1].error_code(), Some(ErrorCode::Cancelled));
    assert!(s.bodies.lock().is_empty());
}

/// `execute_admitted` prepares the call when its future is first polled,
/// not when the future is built, and contains a host fault there.
#[tokio::test]
async fn execute_admitted_prepares_when_polled_and_contains_a_host_fault() {
    let recorder = Faulty::new("c1", Stage::Parse);
    let s = setup(recorder.clone());
    let pipeline = s.scheduler.pipeline();
    let admitted = Arc::new(AtomicUsize::new(0));
    let count = admitted.clone();
    let future = pipeline.execute_admitted(
        ToolCall::new("c1", "echo", "{}"),
        CancellationToken::new(),
        move || {
            count.fetch_add(1, Ordering::SeqCst);
        },
    );
    assert!(
        recorder.seen.lock().is_empty(),
        "nothing runs before the future is polled"
    );
    let outcome = future.await;
    let f = outcome.failure_info().unwrap();
    assert_eq!(f.code(), ErrorCode::Internal);
    assert!(
        f.message().contains("stage recorder") && f.message().contains("`parse`"),
        "{}",
        f.message()
    );
    assert_eq!(admitted.load(Ordering::SeqCst), 1);
    assert!(s.bodies.lock().is_empty());
    assert_eq!(s.observed.lock().len(), 1, "the observers saw the outcome");
}
