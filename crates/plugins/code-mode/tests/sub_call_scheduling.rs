//! A program's tool calls run under the turn scheduler's rules (one batch of
//! the host's dispatcher, `ToolDispatcher::open_batch`), not a pool of code
//! mode's own: an exclusive sub-call overlaps nothing, parallel-safe ones
//! overlap, policy sees them in submission order, and cancelling the run
//! ends every sub-call with exactly one outcome.
//!
//! The evidence is what the bodies see, never durations: a gauge of the
//! bodies running at once, read while each body yields to the others, and
//! barriers that only let bodies finish if they overlap. The program's engine
//! runs on a thread of its own, so its calls reach the host one by one; where
//! a rule is only tested if every call of a `Promise.all` is already
//! submitted, the bodies (or a policy step) first wait for the submissions,
//! counted by a dispatcher that wraps the host's.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tack_code_mode::{CodeMode, CodeModeConfig};
use tack_core::capability::{BatchEvent, DispatchBatch, ToolDispatcher};
use tack_core::hook::{AgentId, Disposer};
use tack_core::hooks::CodeDispatchEvent;
use tack_core::tool::{ErrorCode, Outcome, Tier, ToolCall, ToolError, ToolExecution};
use tack_test::{Call, FakeTool, Harness, Presentation, Report};
use tokio::sync::{Barrier, Notify, watch};
use tokio_util::sync::CancellationToken;

type Log = Arc<Mutex<Vec<String>>>;

/// How many bodies run now, and the most each body saw while it ran.
#[derive(Clone, Default)]
struct Gauge {
    running: Arc<AtomicUsize>,
    log: Log,
}

impl Gauge {
    /// A body: counts itself in, yields to the others a few times (a body
    /// that overlaps it gets to run meanwhile), and logs the most bodies it
    /// saw running at once.
    fn start(&self, what: &str) {
        self.log.lock().unwrap().push(format!("start {what}"));
    }

    /// The rest of a body that [`start`](Self::start)ed.
    async fn body(&self, what: String) {
        let mut most = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        for _ in 0..8 {
            tokio::task::yield_now().await;
            most = most.max(self.running.load(Ordering::SeqCst));
        }
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.log
            .lock()
            .unwrap()
            .push(format!("end {what} saw {most}"));
    }

    fn lines(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

/// The host's dispatcher, counting the calls submitted to its batches.
struct Counting {
    inner: Arc<dyn ToolDispatcher>,
    submitted: watch::Sender<usize>,
}

impl ToolDispatcher for Counting {
    fn dispatch(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Arc<Outcome>> {
        self.inner.dispatch(call, cancel)
    }

    fn open_batch(
        &self,
        cancel: CancellationToken,
        max_parallel: usize,
    ) -> Box<dyn DispatchBatch + '_> {
        Box::new(CountingBatch {
            inner: self.inner.open_batch(cancel, max_parallel),
            submitted: &self.submitted,
        })
    }
}

struct CountingBatch<'a> {
    inner: Box<dyn DispatchBatch + 'a>,
    submitted: &'a watch::Sender<usize>,
}

impl DispatchBatch for CountingBatch<'_> {
    fn submit(&mut self, call: ToolCall) -> usize {
        let index = self.inner.submit(call);
        self.submitted.send_modify(|n| *n += 1);
        index
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<BatchEvent>> {
        self.inner.poll_event(cx)
    }
}

/// Wraps `h`'s dispatcher in a [`Counting`] one that counts into
/// `submitted`; what keeps it provided.
fn provide_counting(h: &Harness<CodeMode>, submitted: watch::Sender<usize>) -> Disposer {
    let inner = h.capabilities().snapshot().dispatcher.clone().unwrap();
    h.capabilities()
        .provide_dispatcher(Arc::new(Counting { inner, submitted }))
}

/// Waits until `count` calls were submitted.
async fn submitted(count: &watch::Receiver<usize>, calls: usize) {
    count.clone().wait_for(|n| *n >= calls).await.unwrap();
}

/// A gauged tool taking `{i}`; parallel-safe or exclusive. With `all`, its
/// body first waits until that many calls were submitted.
fn gauged(name: &str, parallel: bool, gauge: &Gauge) -> FakeTool {
    gauged_after(name, parallel, gauge, None)
}

fn gauged_after(
    name: &str,
    parallel: bool,
    gauge: &Gauge,
    all: Option<(watch::Receiver<usize>, usize)>,
) -> FakeTool {
    let gauge = gauge.clone();
    let label = name.to_owned();
    FakeTool::new(name)
        .description("Counts the bodies running beside it.")
        .tier(Tier::Executes)
        .schema(
            json!({"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"]}),
        )
        .output_schema(json!({"type": "integer"}))
        .concurrency_safe(parallel)
        .body(move |args, _cx| {
            let gauge = gauge.clone();
            let what = format!("{label} {}", args["i"]);
            let i = args["i"].clone();
            let all = all.clone();
            async move {
                gauge.start(&what);
                if let Some((count, calls)) = &all {
                    submitted(count, *calls).await;
                }
                gauge.body(what).await;
                Ok(i)
            }
        })
}

/// A parallel-safe tool whose body waits on `barrier` (or until cancelled).
fn waiting(name: &str, barrier: &Arc<Barrier>) -> FakeTool {
    let barrier = Arc::clone(barrier);
    FakeTool::new(name)
        .description("Waits for the others.")
        .tier(Tier::Executes)
        .output_schema(json!({"type": "string"}))
        .concurrency_safe(true)
        .body(move |_args, cx| {
            let barrier = Arc::clone(&barrier);
            async move {
                tokio::select! {
                    _ = barrier.wait() => Ok(json!(cx.call_id().as_str())),
                    () = cx.cancellation().cancelled() => Err(ToolError::cancelled("stopped waiting for the others",
                    )),
                }
            }
        })
}

/// An exclusive tool that waits until cancelled.
fn hang(started: &Arc<Notify>) -> FakeTool {
    let started = Arc::clone(started);
    FakeTool::new("hang")
        .description("Never finishes on its own.")
        .tier(Tier::Executes)
        .body(move |_args, cx| {
            let started = Arc::clone(&started);
            async move {
                started.notify_one();
                cx.cancellation().cancelled().await;
                Err::<Value, _>(ToolError::cancelled("cancelled"))
            }
        })
}

/// `run_code` installed over `tools`, programs run as agent `coder`.
fn harness(tools: Vec<FakeTool>) -> Harness<CodeMode> {
    let mut builder =
        Harness::builder().agent_presentation(AgentId::new("coder"), Presentation::Code);
    for tool in tools {
        builder = builder.tool(tool);
    }
    builder
        .install(CodeMode::new(CodeModeConfig::default()))
        .unwrap()
}

fn run_call(code: &str, cancel: CancellationToken) -> Call {
    // The time limit only ends a run that could never end (a barrier the
    // schedule never lets its bodies meet at); nothing measures it.
    Call::new("run_code", json!({"code": code, "timeout_ms": 20_000}))
        .id("outer")
        .agent(AgentId::new("coder"))
        .cancellation(cancel)
}

async fn run(h: &Harness<CodeMode>, code: &str) -> Report {
    h.call(run_call(code, CancellationToken::new())).await
}

#[tokio::test]
async fn an_exclusive_sub_call_in_promise_all_overlaps_no_other_sub_call() {
    let gauge = Gauge::default();
    let (count_tx, count) = watch::channel(0);
    // The reads run until all four calls are submitted: the write is
    // submitted while the first two still run.
    let h = harness(vec![
        gauged_after("read", true, &gauge, Some((count.clone(), 4))),
        gauged("write", false, &gauge),
    ]);
    let _counting = provide_counting(&h, count_tx);
    let out = run(
        &h,
        "return await Promise.all([tools.read({i: 1}), tools.read({i: 2}), \
         tools.write({i: 3}), tools.read({i: 4})]);",
    )
    .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.value().unwrap()["result"], json!([1, 2, 3, 4]));
    let mut lines = gauge.lines();
    // The two reads before the write overlap (either may end first)...
    lines[2..4].sort();
    assert_eq!(
        lines,
        [
            "start read 1",
            "start read 2",
            "end read 1 saw 2",
            "end read 2 saw 2",
            // ... the write waits for both and runs alone, and the read
            // after it waits for it.
            "start write 3",
            "end write 3 saw 1",
            "start read 4",
            "end read 4 saw 1",
        ]
    );
}

#[tokio::test]
async fn parallel_safe_sub_calls_overlap_under_promise_all_and_not_in_sequence() {
    // Two different tools that can only finish together.
    let barrier = Arc::new(Barrier::new(2));
    let h = harness(vec![waiting("left", &barrier), waiting("right", &barrier)]);
    let out = run(
        &h,
        "return await Promise.all([tools.left({}), tools.right({})]);",
    )
    .await;
    assert!(
        out.is_success(),
        "the bodies met at the barrier only if they overlapped: {out:?}"
    );
    assert_eq!(
        out.value().unwrap()["result"],
        json!(["outer:code:1", "outer:code:2"])
    );

    // Awaited one after the other they do not overlap: the program waits.
    let gauge = Gauge::default();
    let h = harness(vec![gauged("read", true, &gauge)]);
    let out = run(
        &h,
        "const a = await tools.read({i: 1}); const b = await tools.read({i: 2}); return [a, b];",
    )
    .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(
        gauge.lines(),
        [
            "start read 1",
            "end read 1 saw 1",
            "start read 2",
            "end read 2 saw 1"
        ]
    );
}

#[tokio::test]
async fn pre_execute_listeners_see_the_sub_calls_in_submission_order() {
    let gauge = Gauge::default();
    let h = harness(vec![
        gauged("read", true, &gauge),
        gauged("write", false, &gauge),
    ]);
    let (count_tx, count) = watch::channel(0);
    let _counting = provide_counting(&h, count_tx);
    let log: Log = Arc::default();
    let seen = Arc::clone(&log);
    let _listener =
        h.hooks()
            .pre_execute()
            .tap("order", move |execution: Arc<ToolExecution>, next| {
                let seen = Arc::clone(&seen);
                let count = count.clone();
                async move {
                    let id = execution.call_id().as_str().to_owned();
                    if id.contains(":code:") {
                        seen.lock().unwrap().push(format!("enter {id}"));
                        // The first call's admission lasts until every call is
                        // submitted, and each one yields to the others: a
                        // call admitted meanwhile would log its entry here.
                        if id.ends_with(":1") {
                            submitted(&count, 4).await;
                        }
                        for _ in 0..8 {
                            tokio::task::yield_now().await;
                        }
                        seen.lock().unwrap().push(format!("exit {id}"));
                    }
                    next.run(execution).await
                }
            });
    let out = run(
        &h,
        "return await Promise.all([tools.read({i: 1}), tools.read({i: 2}), tools.read({i: 3}), \
         tools.write({i: 4})]);",
    )
    .await;
    assert!(out.is_success(), "{out:?}");
    let expected: Vec<String> = (1..=4)
        .flat_map(|n| {
            [
                format!("enter outer:code:{n}"),
                format!("exit outer:code:{n}"),
            ]
        })
        .collect();
    assert_eq!(*log.lock().unwrap(), expected);
}

#[tokio::test]
async fn cancelling_run_code_ends_every_sub_call_with_one_outcome() {
    let started = Arc::new(Notify::new());
    let gauge = Gauge::default();
    let h = harness(vec![
        hang(&started),
        gauged("write", false, &gauge),
        gauged("read", true, &gauge),
    ]);
    let dispatched: Log = Arc::default();
    let sink = Arc::clone(&dispatched);
    let _log = h
        .hooks()
        .code_dispatch()
        .tap("log", move |event: &Arc<CodeDispatchEvent>| {
            let line = match &**event {
                CodeDispatchEvent::Started { call_id, .. } => format!("start {call_id}"),
                CodeDispatchEvent::Settled { call_id, .. } => format!("settle {call_id}"),
            };
            sink.lock().unwrap().push(line);
        });
    let cancel = CancellationToken::new();
    let call = run_call(
        "await Promise.all([tools.hang({}), tools.write({i: 2}), tools.read({i: 3})]);",
        cancel.clone(),
    );
    let canceller = async {
        started.notified().await;
        cancel.cancel();
    };
    let (out, ()) = tokio::join!(h.call(call), canceller);
    assert_eq!(out.error_code(), Some(ErrorCode::Cancelled), "{out:?}");
    assert!(gauge.lines().is_empty(), "the queued calls never ran");
    // Each sub-call ended once, through the pipeline (the `tools/result`
    // observers saw it): the running one stopped, the queued ones not run.
    let nested = out.nested();
    let ids: Vec<&str> = nested.iter().map(Report::call_id).collect();
    assert_eq!(ids, ["outer:code:1", "outer:code:2", "outer:code:3"]);
    for record in nested {
        assert_eq!(
            record.error_code(),
            Some(ErrorCode::Cancelled),
            "{record:?}"
        );
        assert!(record.observed(), "{record:?}");
    }
    assert!(nested[0].failure().unwrap().dispatched());
    for queued in &nested[1..] {
        assert!(!queued.failure().unwrap().dispatched(), "{queued:?}");
        assert!(!queued.body_ran(), "{queued:?}");
    }
    // Only the call that started before the cancellation is in the log.
    assert_eq!(
        *dispatched.lock().unwrap(),
        ["start outer:code:1", "settle outer:code:1"]
    );
}
