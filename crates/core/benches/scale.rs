//! How hook cost grows with the work a multi-tenant host gives it:
//!
//! * `scale/agents/N`: one waterfall with a global listener and one scoped
//!   listener for each of N agents, dispatched for the agents round-robin
//!   (the per-call cost must not grow with N);
//! * `scale/threads/T`: one shared waterfall dispatched by T threads at once
//!   (each iteration is one dispatch; with T threads the time per iteration
//!   is the inverse of the total throughput, so 2 threads should halve it);
//! * `scale/register/30000_*` and `scale/dispose/30000_*`: registering then
//!   disposing 30,000 listeners, each for its own agent (sessions that come
//!   and go) or all global (plugins); criterion reports the time per listener;
//! * `scale/export/10000_*`: exporting 10,000 tool schemas in OpenAI's shape:
//!   as a `serde_json::Value` (a deep copy), that `Value` serialized, and the
//!   JSON text written straight from the stored schemas.
//!
//! Before the criterion groups it prints one timed round of registering and
//! disposing 1,000, 10,000 and 30,000 listeners (at most
//! `TACK_SCALE_CHURN_MAX`), in wall time and in time on a CPU (Linux; the
//! figure that holds on a machine busy with other work).
//!
//! Every future here completes on its first poll, so each dispatch builds the
//! future and polls it once with a no-op waker: no executor noise.
//!
//! Run: `cargo bench -p tack-core --bench scale`

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group};
use serde_json::json;
use tack_core::hook::{AgentId, Disposer, Waterfall};
use tack_core::host::ToolSchema;
use tack_core::host::{ToolFormat, export_tools, export_tools_json};

fn poll_once<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("benchmark futures complete on their first poll"),
    }
}

fn agents(n: usize) -> Vec<AgentId> {
    (0..n).map(|i| AgentId::new(format!("agent-{i}"))).collect()
}

/// A waterfall with one global listener and one scoped listener per agent.
fn hook_for(agents: &[AgentId]) -> (Waterfall<u64, u64>, Vec<Disposer>) {
    let hook: Waterfall<u64, u64> = Waterfall::new("bench/scale", |x| async move { x + 1 });
    let mut keep = vec![hook.tap("global", |x, next| next.run(x))];
    keep.extend(
        agents
            .iter()
            .map(|a| hook.for_agent(a).tap("scoped", |x, next| next.run(x))),
    );
    (hook, keep)
}

fn agents_round_robin(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale/agents");
    for n in [1usize, 1_000, 10_000] {
        let ids = agents(n);
        let (hook, _keep) = hook_for(&ids);
        let mut at = 0;
        group.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                let agent = &ids[at];
                at = (at + 1) % ids.len();
                poll_once(hook.dispatch(Some(agent), black_box(1))).expect("no panics here")
            })
        });
    }
    group.finish();
}

fn threads(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale/threads");
    group.throughput(Throughput::Elements(1));
    let ids = agents(100);
    let (hook, _keep) = hook_for(&ids);
    for workers in [1usize, 2] {
        group.bench_function(BenchmarkId::from_parameter(workers), |b| {
            b.iter_custom(|iters| {
                let per_worker = iters.div_ceil(workers as u64);
                let start = Instant::now();
                std::thread::scope(|s| {
                    for w in 0..workers {
                        let (hook, ids) = (&hook, &ids);
                        s.spawn(move || {
                            for i in 0..per_worker {
                                let agent = &ids[(i as usize + w * 50) % ids.len()];
                                poll_once(hook.dispatch(Some(agent), black_box(1)))
                                    .expect("no panics here");
                            }
                        });
                    }
                });
                start.elapsed()
            })
        });
    }
    group.finish();
}

const CHURN: usize = 30_000;

fn register_all(hook: &Waterfall<u64, u64>, ids: Option<&[AgentId]>) -> Vec<Disposer> {
    register_n(hook, ids, CHURN)
}

fn register_n(hook: &Waterfall<u64, u64>, ids: Option<&[AgentId]>, n: usize) -> Vec<Disposer> {
    (0..n)
        .map(|i| {
            let (scoped, name) = match ids {
                Some(ids) => (hook.for_agent(&ids[i]), "session"),
                None => (hook.clone(), "plugin"),
            };
            scoped.tap(name, |x, next| next.run(x))
        })
        .collect()
}

fn churn(c: &mut Criterion) {
    let ids = agents(CHURN);
    for phase in ["register", "dispose"] {
        let mut group = c.benchmark_group(format!("scale/{phase}"));
        group.sample_size(10).sampling_mode(SamplingMode::Flat);
        group.throughput(Throughput::Elements(CHURN as u64));
        for (label, scoped) in [("30000_scoped", true), ("30000_global", false)] {
            group.bench_function(label, |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let hook: Waterfall<u64, u64> =
                            Waterfall::new("bench/churn", |x| async move { x + 1 });
                        let _global = hook.tap("always", |x, next| next.run(x));
                        let scope = scoped.then_some(ids.as_slice());
                        let start = Instant::now();
                        let keep = register_all(&hook, scope);
                        if phase == "register" {
                            total += start.elapsed();
                        }
                        // A dispatch between the phases, as a live host has
                        // (through all 30,000 when they are global).
                        poll_once(hook.dispatch(ids.first(), 1)).expect("no panics here");
                        let start = Instant::now();
                        drop(keep);
                        if phase == "dispose" {
                            total += start.elapsed();
                        }
                        assert_eq!(hook.listener_count(), 1);
                    }
                    total
                })
            });
        }
        group.finish();
    }
}

fn schemas(n: usize) -> Vec<ToolSchema> {
    (0..n)
        .map(|i| {
            ToolSchema::new(
                format!("tool_{i}"),
                format!("Tool number {i}: reads a file and returns part of it."),
                json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "The file to read."},
                        "offset": {"type": "integer", "minimum": 0},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 2000},
                        "mode": {"enum": ["text", "bytes", "lines"]}
                    },
                    "required": ["path"],
                    "additionalProperties": false
                }),
            )
        })
        .collect()
}

fn export(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale/export");
    group.sample_size(20);
    let tools = schemas(10_000);
    group.bench_function("10000_openai_value", |b| {
        b.iter(|| export_tools(black_box(&tools), ToolFormat::OpenAi))
    });
    group.bench_function("10000_openai_value_to_text", |b| {
        b.iter(|| {
            serde_json::to_string(&export_tools(black_box(&tools), ToolFormat::OpenAi))
                .expect("serializes")
        })
    });
    group.bench_function("10000_openai_text_written", |b| {
        b.iter(|| export_tools_json(black_box(&tools), ToolFormat::OpenAi))
    });
    group.finish();
}

/// One timed round of registering then disposing n listeners, for n up to
/// `TACK_SCALE_CHURN_MAX` (default 30,000): the growth with n in one line
/// each, cheap enough to run where the criterion groups would take hours.
fn churn_report() {
    let max: usize = std::env::var("TACK_SCALE_CHURN_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CHURN);
    let ids = agents(max);
    for n in [1_000, 10_000, 30_000].into_iter().filter(|n| *n <= max) {
        for (label, scoped) in [("scoped", true), ("global", false)] {
            let hook: Waterfall<u64, u64> = Waterfall::new("bench/churn", |x| async move { x + 1 });
            let _global = hook.tap("always", |x, next| next.run(x));
            let (start, cpu) = (Instant::now(), on_cpu());
            let keep = register_n(&hook, scoped.then_some(&ids[..n]), n);
            let (registered, registered_cpu) = (start.elapsed(), on_cpu() - cpu);
            poll_once(hook.dispatch(ids.first(), 1)).expect("no panics here");
            let (start, cpu) = (Instant::now(), on_cpu());
            drop(keep);
            let (disposed, disposed_cpu) = (start.elapsed(), on_cpu() - cpu);
            let per = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
            println!(
                "churn {n} {label}: register {:.2} µs/listener ({:.2} on CPU; {:.3} s), dispose {:.2} µs/listener ({:.2} on CPU; {:.3} s)",
                per(registered),
                per(registered_cpu),
                registered.as_secs_f64(),
                per(disposed),
                per(disposed_cpu),
                disposed.as_secs_f64(),
            );
        }
    }
}

/// How long this thread has run on a CPU (from `/proc/thread-self/schedstat`;
/// zero where that is missing): on a machine shared with other work, the
/// time a measured stretch really took, without the time it waited.
fn on_cpu() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .map_or(Duration::ZERO, Duration::from_nanos)
}

criterion_group!(benches, agents_round_robin, threads, churn, export);

fn main() {
    churn_report();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
