//! Cost of the turn scheduler.
//!
//! * **Wall time**: 1,000 parallel-safe calls, each awaiting a 10 ms sleep,
//!   with `max_parallel = 100`, against the ideal of 10 waves × 10 ms.
//! * **Overhead per call**: N zero-work parallel-safe calls through
//!   `run_turn`, minus the same N calls through `Pipeline::execute` one
//!   after the other, divided by N — without policy listeners, and with one
//!   pass-through pre-execute listener (which turns on the admission gate).
//!
//! Each figure is the median of several runs, with the min–max spread.
//!
//! Run: `cargo bench -p tack-pipeline --bench scheduler`

use std::time::{Duration, Instant};

use serde_json::json;
use tack_core::tool::{OutputSpec, ToolCall, ToolDefinition};
use tack_pipeline::{Pipeline, SchedulerConfig, ToolRegistry, TurnScheduler};
use tokio_util::sync::CancellationToken;

const RUNS: usize = 9;

fn pipeline() -> Pipeline {
    let registry = ToolRegistry::new();
    let sleep = ToolDefinition::builder("sleep")
        .description("Sleeps 10 ms.")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({})))
        .concurrency_safe(|_| true)
        .handler(|_args, _cx| async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            Ok(json!({}))
        })
        .build()
        .expect("a valid definition");
    let noop = ToolDefinition::builder("noop")
        .description("Does nothing.")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({})))
        .concurrency_safe(|_| true)
        .handler(|_args, _cx| async move { Ok(json!({})) })
        .build()
        .expect("a valid definition");
    registry.register(sleep).expect("registered");
    registry.register(noop).expect("registered");
    Pipeline::new(registry)
}

fn calls(name: &str, n: usize) -> Vec<ToolCall> {
    (0..n)
        .map(|i| ToolCall::new(format!("c{i}"), name, "{}"))
        .collect()
}

/// Median, min and max of `runs` timings.
fn stats(mut runs: Vec<Duration>) -> (Duration, Duration, Duration) {
    runs.sort();
    (runs[runs.len() / 2], runs[0], runs[runs.len() - 1])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn wall_time(rt: &tokio::runtime::Runtime) {
    let scheduler = TurnScheduler::with_config(
        pipeline(),
        SchedulerConfig::default()
            .with_max_parallel(100)
            .expect("100 is a valid bound"),
    );
    let ideal = Duration::from_millis(100);
    let runs: Vec<Duration> = (0..RUNS)
        .map(|_| {
            rt.block_on(async {
                let start = Instant::now();
                let out = scheduler
                    .run_turn(calls("sleep", 1_000), CancellationToken::new())
                    .await;
                assert!(out.iter().all(|o| o.is_success()));
                start.elapsed()
            })
        })
        .collect();
    // What tokio's timer allows at best: 100 chains of 10 sequential 10 ms
    // sleeps, no pipeline (its wheel has 1 ms ticks and rounds each sleep up).
    let floor: Vec<Duration> = (0..RUNS)
        .map(|_| {
            rt.block_on(async {
                let start = Instant::now();
                futures::future::join_all((0..100).map(|_| async {
                    for _ in 0..10 {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }))
                .await;
                start.elapsed()
            })
        })
        .collect();
    let (floor, floor_min, floor_max) = stats(floor);
    let (median, min, max) = stats(runs);
    println!(
        "timer floor, 100 chains × 10 sequential 10 ms sleeps, no pipeline: median {:.1} ms (min {:.1}, max {:.1})",
        ms(floor),
        ms(floor_min),
        ms(floor_max)
    );
    println!(
        "scheduler vs timer floor: median {:+.1}%",
        (median.as_secs_f64() / floor.as_secs_f64() - 1.0) * 100.0
    );
    println!(
        "wall time, 1000 × 10 ms sleep, max_parallel 100: median {:.1} ms (min {:.1}, max {:.1}); ideal {:.0} ms; median {:+.1}% over ideal",
        ms(median),
        ms(min),
        ms(max),
        ms(ideal),
        (median.as_secs_f64() / ideal.as_secs_f64() - 1.0) * 100.0
    );
}

fn overhead(rt: &tokio::runtime::Runtime, gated: bool, max_parallel: usize) {
    const N: usize = 20_000;
    let pipeline = pipeline();
    let _policy = gated.then(|| {
        pipeline
            .hooks()
            .pre_execute()
            .tap("pass", |exec, next| next.run(exec))
    });
    let scheduler = TurnScheduler::with_config(
        pipeline.clone(),
        SchedulerConfig::default()
            .with_max_parallel(max_parallel)
            .expect("benchmarks use a positive bound"),
    );
    let mut direct = Vec::with_capacity(RUNS);
    let mut turn = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let batch = calls("noop", N);
        direct.push(rt.block_on(async {
            let start = Instant::now();
            for call in batch {
                let out = pipeline.execute(call, CancellationToken::new()).await;
                assert!(out.is_success());
            }
            start.elapsed()
        }));
        let batch = calls("noop", N);
        turn.push(rt.block_on(async {
            let start = Instant::now();
            let out = scheduler.run_turn(batch, CancellationToken::new()).await;
            assert_eq!(out.len(), N);
            start.elapsed()
        }));
    }
    let per_call = |d: Duration| d.as_secs_f64() * 1e6 / N as f64;
    let (d_med, ..) = stats(direct.clone());
    let (t_med, ..) = stats(turn.clone());
    // Overhead per run pair, for the spread.
    let mut pairs: Vec<f64> = direct
        .iter()
        .zip(&turn)
        .map(|(d, t)| per_call(*t) - per_call(*d))
        .collect();
    pairs.sort_by(f64::total_cmp);
    println!(
        "zero-work calls ({}, max_parallel {max_parallel}): execute {:.2} µs/call, run_turn {:.2} µs/call; scheduling overhead median {:.2} µs/call (runs {:.2}..{:.2})",
        if gated {
            "1 pre-execute listener: gated"
        } else {
            "no policy listeners"
        },
        per_call(d_med),
        per_call(t_med),
        per_call(t_med) - per_call(d_med),
        pairs[0],
        pairs[pairs.len() - 1],
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs it once, quickly.
    let quick = !std::env::args().any(|a| a == "--bench");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    if quick {
        rt.block_on(async {
            let out = TurnScheduler::new(pipeline())
                .run_turn(calls("noop", 10), CancellationToken::new())
                .await;
            assert_eq!(out.len(), 10);
        });
        return;
    }
    wall_time(&rt);
    overhead(&rt, false, 100);
    overhead(&rt, false, 10);
    overhead(&rt, true, 100);
}
