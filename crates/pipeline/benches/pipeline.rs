//! Per-call cost of the pipeline for a trivial typed tool (`{x: integer}` →
//! `x + 1`):
//!
//! * `handler_direct`: the erased handler alone (deserialize, add, serialize);
//! * `pipeline_no_listeners`: the full pipeline (resolve, parse, validate,
//!   execute, output validation and render, finalize, publish);
//! * `pipeline_with_listeners`: with 5 pre-execute listeners, 1 guard, 1
//!   execute wrapper, 1 post-execute listener and 1 result observer;
//! * `pipeline_pre_listeners/N`: N no-op pre-execute listeners, for the cost
//!   of one more.
//!
//! Before the criterion groups it prints the best on-CPU time per call over
//! 30 batches (no listeners, set (c), and the cost of one more `async move {
//! next.run(x).await }` pre-execute listener): on a loaded machine those move
//! less than criterion's wall-clock figures. `TACK_BENCH_CRITERION_ONLY=1`
//! skips the printed report.
//!
//! It runs on the plain system allocator. Allocations per call and peak
//! memory are counted by `--bench allocations`, whose instrumented allocator
//! would otherwise add its counter updates to every timing here.
//!
//! Run: `cargo bench -p tack-pipeline --bench pipeline`; for exact
//! instruction counts, the fixed-work mode (`PIPELINE_FIXED`, see
//! `fixed_work`) under callgrind.

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, criterion_group};
use tack_core::context::ToolRunContext;
use tack_core::hook::Disposer;
use tack_core::host::Capabilities;
use tack_core::host::{NewExecutionToken, NewRunContext, NewToolExecution, RunEffects};
use tack_core::tool::{CallId, ExecutionToken, Tier, ToolDefinition, ToolExecution};
use tack_pipeline::Pipeline;
use tokio_util::sync::CancellationToken;

mod add_one_call;

use add_one_call::{AddOne, add_one_registry, poll_once, run, with_listeners};

/// Nanoseconds this thread has spent on a CPU (`/proc/thread-self/schedstat`,
/// Linux), so time the thread waited for a CPU while other work ran is not
/// counted; `None` elsewhere.
fn on_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// The best per-call time of 30 batches of 100,000 calls, in on-CPU time where
/// the platform reports it (else wall time): on a shared machine the least
/// disturbed batch is a steadier figure than a mean (printed beside
/// criterion's, not asserted).
fn best_per_call_ns(registry: &Pipeline) -> f64 {
    const BATCHES: usize = 30;
    // A kernel may count on-CPU time in scheduler ticks (4 ms): a batch
    // this long keeps that step under 40 ns per call.
    const CALLS: usize = 100_000;
    (0..BATCHES)
        .map(|_| {
            let cpu = on_cpu_ns();
            let start = std::time::Instant::now();
            for _ in 0..CALLS {
                run(registry);
            }
            let ns = match (cpu, on_cpu_ns()) {
                (Some(before), Some(after)) => (after - before) as f64,
                _ => start.elapsed().as_secs_f64() * 1e9,
            };
            ns / CALLS as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// `n` no-op pre-execute listeners written as `async move { next.run(x).await }`.
fn async_pre_listeners(registry: &Pipeline, n: usize) -> Vec<Disposer> {
    (0..n)
        .map(|i| {
            registry
                .hooks()
                .pre_execute()
                .tap(format!("pre-{i}"), |exec, next| async move {
                    next.run(exec).await
                })
        })
        .collect()
}

/// `n` pass-through pre-execute listeners that return `next.run(exec)`
/// itself (a tail call: no future of their own).
fn tap_pre_listeners(registry: &Pipeline, n: usize) -> Vec<Disposer> {
    (0..n)
        .map(|i| {
            registry
                .hooks()
                .pre_execute()
                .tap(format!("pre-{i}"), |exec, next| next.run(exec))
        })
        .collect()
}

/// Best-of-batches figures: no listeners, set (c), and the cost of one more
/// no-op pre-execute listener (`async move { next.run(x).await }`).
fn report_best() {
    let (registry, _tool) = add_one_registry();
    let none = best_per_call_ns(&registry);
    let _keep = with_listeners(&registry);
    let set = best_per_call_ns(&registry);
    let (registry, _tool) = add_one_registry();
    let _fifty = async_pre_listeners(&registry, 50);
    let fifty = best_per_call_ns(&registry);
    println!(
        "best of 30 batches of 100,000 calls (on-CPU time): no listeners {none:.0} ns/call, set (c) {set:.0} ns/call, \
         50 async no-op pre-execute listeners {fifty:.0} ns/call ({:.1} ns per listener)",
        (fifty - none) / 50.0
    );
}

fn pipeline(c: &mut Criterion) {
    let mut group = c.benchmark_group("pipeline");

    let definition = ToolDefinition::from_tool(AddOne).expect("valid tool");
    let args = Arc::new(serde_json::json!({"x": 41}));
    let execution = Arc::new(ToolExecution::new(
        CallId::from("c1"),
        definition.name().clone(),
        args.clone(),
        Tier::ReadOnly,
        ExecutionToken::issue(CallId::from("c1")),
    ));
    let caps = Arc::new(Capabilities::default());
    group.bench_function("handler_direct", |b| {
        b.iter(|| {
            let cx = ToolRunContext::new(
                execution.clone(),
                caps.clone(),
                CancellationToken::new(),
                RunEffects::new(),
            );
            poll_once(definition.handler().call(args.clone(), cx)).expect("adds")
        })
    });

    let (registry, _tool) = add_one_registry();
    group.bench_function("pipeline_no_listeners", |b| b.iter(|| run(&registry)));

    let (registry, _tool) = add_one_registry();
    let _keep = with_listeners(&registry);
    group.bench_function("pipeline_with_listeners", |b| b.iter(|| run(&registry)));

    for n in [0usize, 10, 50] {
        let (registry, _tool) = add_one_registry();
        let _keep = tap_pre_listeners(&registry, n);
        group.bench_with_input(
            BenchmarkId::new("pipeline_pre_listeners", n),
            &registry,
            |b, registry| b.iter(|| run(registry)),
        );
    }
    group.finish();
}

/// Fixed-work mode for instruction counts: with
/// `PIPELINE_FIXED=kind:iters` (`kind`: `none`, `set` for set (c), or
/// `asyncN` for N `async move { next.run(x).await }` pre-execute
/// listeners, `tapN` for N that return `next.run(x)` itself), runs `iters` calls and exits, without criterion. Under
/// `valgrind --tool=callgrind` the total divided by the calls is the
/// instruction cost of one (less the setup, which two iteration counts
/// take apart).
fn fixed_work(spec: &str) {
    let (kind, iters) = spec.split_once(':').expect("kind:iters");
    let iters: u64 = iters.parse().expect("a number of calls");
    let (registry, _tool) = add_one_registry();
    let _keep = match kind {
        "none" => Vec::new(),
        "set" => with_listeners(&registry),
        _ => {
            let number = |prefix: &str| kind.strip_prefix(prefix).and_then(|n| n.parse().ok());
            match (number("async"), number("tap")) {
                (Some(n), _) => async_pre_listeners(&registry, n),
                (None, Some(n)) => tap_pre_listeners(&registry, n),
                _ => panic!("PIPELINE_FIXED kind: none, set, asyncN or tapN"),
            }
        }
    };
    for _ in 0..iters {
        run(&registry);
    }
}

criterion_group!(benches, pipeline);

fn main() {
    if let Ok(spec) = std::env::var("PIPELINE_FIXED") {
        fixed_work(&spec);
        return;
    }
    // `TACK_BENCH_CRITERION_ONLY=1` skips the printed report (for profiling).
    if std::env::var_os("TACK_BENCH_CRITERION_ONLY").is_none() {
        report_best();
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
