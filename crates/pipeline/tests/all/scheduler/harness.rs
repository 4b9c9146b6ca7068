//! Instrumented tools that record when their bodies start and end (on tokio's
//! paused clock), ways to run (and cancel) a turn, and helpers to read the
//! schedule back.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;
use serde_json::{Value, json};
use tack_core::context::ToolRunContext;
use tack_core::hook::Disposer;
use tack_core::tool::{ErrorCode, Outcome, OutputSpec, ToolCall, ToolDefinition, ToolError};
use tack_pipeline::{Pipeline, PipelineConfig, SchedulerConfig, ToolRegistry, TurnScheduler};
use tokio::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

use crate::recording::{Recorded, Recorder, recorded_registry};

/// One body run: when it started and ended, in ms since the harness was made,
/// and its place in the order bodies started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub id: String,
    pub start: u64,
    pub end: Option<u64>,
    pub order: usize,
}

impl Recorder {
    /// `(call, stage)` for the stages in `which`, in the order they happened.
    pub fn events(&self, which: &[&str]) -> Vec<String> {
        self.all()
            .iter()
            .filter(|(_, s)| which.contains(&s.as_str()))
            .map(|(id, s)| format!("{} {id}", s.as_str()))
            .collect()
    }
}

pub struct Bench {
    pub registry: ToolRegistry,
    pub pipeline: Pipeline,
    pub recorder: Arc<Recorder>,
    pub spans: Arc<Mutex<Vec<Span>>>,
    pub observed: Arc<Mutex<Vec<Arc<Outcome>>>>,
    t0: Instant,
    started: Arc<AtomicUsize>,
    _observer: Disposer,
}

impl Bench {
    pub fn new() -> Self {
        let Recorded {
            registry,
            pipeline,
            recorder,
            outcomes,
            observer,
        } = recorded_registry(PipelineConfig::default(), "bench-results");
        let bench = Self {
            registry,
            pipeline,
            recorder,
            spans: Arc::default(),
            observed: outcomes,
            t0: Instant::now(),
            started: Arc::default(),
            _observer: observer,
        };
        bench.registry.register(bench.work("work")).unwrap();
        bench
    }

    fn ms(t0: Instant) -> u64 {
        u64::try_from(t0.elapsed().as_millis()).unwrap()
    }

    /// `work({ms, p?, fail?, ctx?, conclude?})`: parallel-safe when `p` is
    /// true; sleeps `ms` (cancellable), records its span, then fails when
    /// `fail` is set.
    pub fn work(&self, name: &str) -> ToolDefinition {
        self.work_classified(name, |args| args["p"] == json!(true))
    }

    /// `work` with another concurrency classifier.
    pub fn work_classified(&self, name: &str, classify: fn(&Value) -> bool) -> ToolDefinition {
        let spans = self.spans.clone();
        let started = self.started.clone();
        let t0 = self.t0;
        ToolDefinition::builder(name)
            .description("Sleeps, recording when.")
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "ms": {"type": "integer", "minimum": 0},
                    "p": {"type": "boolean"},
                    "fail": {"type": "boolean"},
                    "ctx": {"type": "string"},
                    "conclude": {"type": "boolean"},
                    "key": {"type": "string"},
                    "write": {"type": "boolean"}
                },
                "required": ["ms"]
            }))
            .output(OutputSpec::new(json!({})))
            .concurrency_safe(classify)
            .handler(move |args: Arc<Value>, cx| {
                let spans = spans.clone();
                let order = started.fetch_add(1, Ordering::SeqCst);
                let id = cx.call_id().as_str().to_owned();
                spans.lock().push(Span {
                    id: id.clone(),
                    start: Self::ms(t0),
                    end: None,
                    order,
                });
                async move {
                    if let Some(ctx) = args["ctx"].as_str() {
                        cx.defer_context(ctx);
                    }
                    let ms = args["ms"].as_u64().unwrap();
                    let cancelled = tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(ms)) => false,
                        () = cx.cancellation().cancelled() => true,
                    };
                    if let Some(span) = spans.lock().iter_mut().find(|s| s.id == id) {
                        span.end = Some(Self::ms(t0));
                    }
                    if cancelled {
                        return Err(ToolError::cancelled("interrupted while sleeping"));
                    }
                    if args["fail"] == json!(true) {
                        return Err(ToolError::new("it failed on purpose"));
                    }
                    if args["conclude"] == json!(true) {
                        cx.conclude_turn();
                    }
                    Ok(json!({}))
                }
            })
            .build()
            .unwrap()
    }

    /// Registers a global tool taking any object, always parallel-safe, with `handler` as its body.
    pub fn add_parallel_tool<F, Fut>(&self, name: &str, description: &str, handler: F)
    where
        F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        let definition = ToolDefinition::builder(name)
            .description(description)
            .input_schema(json!({"type": "object"}))
            .output(OutputSpec::new(json!({})))
            .concurrency_safe(|_| true)
            .handler(handler)
            .build()
            .unwrap();
        self.registry.register(definition).unwrap();
    }

    pub fn scheduler(&self, config: SchedulerConfig) -> TurnScheduler {
        TurnScheduler::with_config(self.pipeline.clone(), config)
    }

    /// Runs one turn of `calls` with `config`, under the caller's `cancel` token.
    pub async fn run_with(
        &self,
        config: SchedulerConfig,
        calls: Vec<ToolCall>,
        cancel: CancellationToken,
    ) -> Vec<Arc<Outcome>> {
        self.scheduler(config).run_turn(calls, cancel).await
    }

    pub async fn run(&self, max_parallel: usize, calls: Vec<ToolCall>) -> Vec<Arc<Outcome>> {
        self.run_with(
            SchedulerConfig::default()
                .with_max_parallel(max_parallel)
                .unwrap(),
            calls,
            CancellationToken::new(),
        )
        .await
    }

    /// Spans sorted by call id order of start.
    pub fn spans(&self) -> Vec<Span> {
        let mut spans = self.spans.lock().clone();
        spans.sort_by_key(|s| s.order);
        spans
    }

    /// `id start..end` for every body, in start order.
    pub fn timeline(&self) -> Vec<String> {
        self.spans()
            .iter()
            .map(|s| match s.end {
                Some(end) => format!("{} {}..{}", s.id, s.start, end),
                None => format!("{} {}..", s.id, s.start),
            })
            .collect()
    }
}

/// `work` with `ms` and parallel or exclusive.
pub fn work(id: &str, ms: u64, parallel: bool) -> ToolCall {
    ToolCall::new(id, "work", json!({"ms": ms, "p": parallel}).to_string())
}

/// `work` with extra arguments.
pub fn work_with(id: &str, args: Value) -> ToolCall {
    ToolCall::new(id, "work", args.to_string())
}

/// A caller token that is already cancelled.
pub fn cancelled() -> CancellationToken {
    let token = CancellationToken::new();
    token.cancel();
    token
}

/// A caller token that a spawned task cancels `ms` from now (on tokio's clock).
pub fn cancelled_after(ms: u64) -> CancellationToken {
    let token = CancellationToken::new();
    let trigger = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        trigger.cancel();
    });
    token
}

pub fn ids(outcomes: &[Arc<Outcome>]) -> Vec<&str> {
    outcomes.iter().map(|o| o.call_id.as_str()).collect()
}

pub fn code(outcome: &Outcome) -> Option<ErrorCode> {
    outcome.error_code()
}

pub fn text(outcome: &Outcome) -> String {
    outcome.content.joined_text()
}

/// The most bodies running at once.
pub fn peak(spans: &[Span]) -> usize {
    let mut edges: Vec<(u64, i64)> = Vec::new();
    for s in spans {
        edges.push((s.start, 1));
        edges.push((s.end.unwrap(), -1));
    }
    // Ends before starts at the same instant: a slot freed at t is reused at t.
    edges.sort();
    let (mut now, mut most) = (0i64, 0i64);
    for (_, d) in edges {
        now += d;
        most = most.max(now);
    }
    usize::try_from(most).unwrap()
}
