//! How the per-call cost of the whole pipeline grows with a multi-tenant
//! host's work, for a trivial typed tool (`{x: integer}` → `x + 1`):
//!
//! * `scale_pipeline/agents/N`: N agents, each with its own scoped
//!   `tools/pre-execute` listener (and one global listener), calling
//!   round-robin (the per-call cost must not grow with N);
//! * `scale_pipeline/threads/T`: T threads calling through one shared
//!   registry at once (each iteration is one call; with T threads the time
//!   per iteration is the inverse of the total throughput); `2_apart`: two
//!   threads on a pipeline each, sharing nothing (what the machine gives two
//!   threads doing this work: the ceiling for `2`);
//! * `scale_pipeline/export/10000_*`: the schemas of 10,000 registered tools
//!   as the JSON text of a request's `tools` in OpenAI's shape: through a
//!   copied `Value`, written straight from the registered schemas, the
//!   registry's export written fresh (from each schema's text, rendered at
//!   registration) and its cached export.
//!
//! Before the criterion groups it prints rounds of 1 and 10,000 agents
//! taking turns in blocks of calls (time on a CPU per call, and the ratio),
//! then rounds of 1 worker, 2 workers calling through one shared pipeline
//! and 2 on a pipeline each: throughput, ratios and time on a CPU per call
//! (`TACK_SCALE_CALLS`, `TACK_SCALE_ROUNDS`, `TACK_SCALE_BLOCK`;
//! `TACK_SCALE_REPORT=agents` or `threads` prints only that report, `none`
//! neither; `TACK_SCALE_LISTENERS=global` makes the per-agent listeners one
//! more global listener, the control without a per-agent lookup;
//! `TACK_SCALE_ORDER=scattered` has the 10,000 agents of that report take
//! turns in a scattered order instead of the order they were made in, so
//! that nothing an agent's call reads is next to what the previous call
//! read).
//!
//! Every call completes on its first poll, so each builds the future and
//! polls it once with a no-op waker: no executor noise in the figures.
//!
//! Run: `cargo bench -p tack-pipeline --bench scale`

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::str::FromStr;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use serde_json::json;
use tack_core::hook::{AgentId, Disposer};
use tack_core::host::{ExportedTool, ToolFormat, export_tools, tools_json};
use tack_core::tool::{OutputSpec, ToolCall, ToolDefinition};
use tack_pipeline::{Pipeline, Presentation, ToolRegistry};
use tokio_util::sync::CancellationToken;

// This bench builds its own pipelines and listeners: it takes the tool and
// the poll from the shared module and leaves the rest.
#[allow(dead_code)]
mod add_one_call;

use add_one_call::{AddOne, poll_once};

/// A pipeline over a registry with `add_one`, one global pre-execute listener
/// and one scoped pre-execute listener per agent (with
/// `TACK_SCALE_LISTENERS=global`, a second global listener instead: the
/// same work per call without a per-agent lookup, the control for what the
/// lookup costs).
fn pipeline_for(agents: &[AgentId]) -> (Pipeline, Vec<Disposer>) {
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let pre = pipeline.hooks().pre_execute();
    let mut keep = vec![
        registry
            .register(ToolDefinition::from_tool(AddOne).expect("valid tool"))
            .expect("registers"),
        pre.tap("global", |exec, next| next.run(exec)),
    ];
    if std::env::var("TACK_SCALE_LISTENERS").is_ok_and(|v| v == "global") {
        keep.push(pre.tap("session", |exec, next| next.run(exec)));
    } else {
        keep.extend(
            agents
                .iter()
                .map(|a| pre.for_agent(a).tap("session", |exec, next| next.run(exec))),
        );
    }
    (pipeline, keep)
}

fn run(pipeline: &Pipeline, agent: &AgentId) {
    let call = ToolCall::new("c1", "add_one", r#"{"x": 41}"#).with_agent(agent.clone());
    let outcome = poll_once(pipeline.execute(call, CancellationToken::new()));
    assert!(outcome.is_success(), "{outcome:?}");
}

fn agents(n: usize) -> Vec<AgentId> {
    (0..n).map(|i| AgentId::new(format!("agent-{i}"))).collect()
}

fn agents_round_robin(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale_pipeline/agents");
    for n in [1usize, 10_000] {
        let ids = agents(n);
        let (pipeline, _keep) = pipeline_for(&ids);
        let mut at = 0;
        group.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                run(&pipeline, &ids[at]);
                at = (at + 1) % ids.len();
            })
        });
    }
    group.finish();
}

fn threads(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale_pipeline/threads");
    group.throughput(Throughput::Elements(1));
    let ids = agents(100);
    let (pipeline, _keep) = pipeline_for(&ids);
    let (other, _keep_other) = pipeline_for(&ids);
    // `2_apart`: two workers on a pipeline each, what the machine gives two
    // workers that share nothing.
    let setups: [(&str, Vec<&Pipeline>); 3] = [
        ("1", vec![&pipeline]),
        ("2", vec![&pipeline, &pipeline]),
        ("2_apart", vec![&pipeline, &other]),
    ];
    for (name, pipelines) in &setups {
        group.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                let per_worker = iters.div_ceil(pipelines.len() as u64);
                let start = Instant::now();
                std::thread::scope(|s| {
                    for (w, pipeline) in pipelines.iter().enumerate() {
                        let ids = &ids;
                        s.spawn(move || {
                            for i in 0..per_worker {
                                run(pipeline, &ids[(i as usize + w * 50) % ids.len()]);
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

fn export(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale_pipeline/export");
    group.sample_size(20);
    let registry = ToolRegistry::new();
    let _tools: Vec<Disposer> = (0..10_000)
        .map(|i| {
            let definition = ToolDefinition::builder(format!("tool_{i}"))
                .description(format!(
                    "Tool number {i}: reads a file and returns part of it."
                ))
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "The file to read."},
                        "offset": {"type": "integer", "minimum": 0},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 2000}
                    },
                    "required": ["path"]
                }))
                .output(OutputSpec::new(json!({"type": "string"})))
                .handler(|_args, _cx| async move { Ok(json!("")) })
                .build()
                .expect("valid tool");
            registry.register(definition).expect("registers")
        })
        .collect();
    // Before: copy the schemas, build a `Value` (a deep copy), serialize it.
    group.bench_function("10000_openai_via_value", |b| {
        b.iter(|| {
            let schemas = registry.schemas(None);
            serde_json::to_string(&export_tools(&schemas, ToolFormat::OpenAi)).expect("serializes")
        })
    });
    // Written straight from the registered schemas (serialized), every time.
    group.bench_function("10000_openai_written", |b| {
        b.iter(|| {
            let tools = registry.visible(None);
            tools_json(
                tools
                    .iter()
                    .map(|t| ExportedTool::of_definition(t.definition(), ToolFormat::OpenAi)),
            )
        })
    });
    // The registry's export written fresh: a presentation set (a change to
    // the registry) before each, so the cached list is stale every time.
    group.bench_function("10000_openai_fresh", |b| {
        b.iter(|| {
            registry.set_presentation(None, Presentation::Native);
            registry.export_tools(None, ToolFormat::OpenAi)
        })
    });
    // The registry's export: kept until the tool set changes.
    group.bench_function("10000_openai_cached", |b| {
        b.iter(|| registry.export_tools(None, ToolFormat::OpenAi))
    });
    group.finish();
}

/// The number in the environment variable `name`, or `default` when it is
/// unset or not a number.
fn env_number<T: FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// How long this thread has run on a CPU (from `/proc/thread-self/schedstat`;
/// zero where that is missing).
fn on_cpu() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .map_or(Duration::ZERO, Duration::from_nanos)
}

/// Rounds of `TACK_SCALE_CALLS` calls (default 400,000) by 1 worker, by 2
/// workers on one shared pipeline (100 agents), and by 2 workers on a
/// pipeline each (nothing shared: what this machine gives two workers doing
/// this work): the total throughput, the ratios, and each worker's time on a
/// CPU per call. On a machine busy with other work the wall-clock ratio says
/// how much CPU the workers got; the time on a CPU per call says whether
/// sharing made each call dearer (contended cache lines show there).
fn throughput_report() {
    let calls: u64 = env_number("TACK_SCALE_CALLS", 400_000);
    let rounds: usize = env_number("TACK_SCALE_ROUNDS", 3);
    let ids = agents(100);
    let (shared, _keep) = pipeline_for(&ids);
    let (other, _keep_other) = pipeline_for(&ids);
    for _ in 0..rounds {
        let one = workers_round(&[&shared], 1, calls, &ids, "1 worker");
        let two = workers_round(&[&shared], 2, calls, &ids, "2 workers, one pipeline");
        let apart = workers_round(
            &[&shared, &other],
            2,
            calls,
            &ids,
            "2 workers, a pipeline each",
        );
        println!(
            "throughput 2 vs 1 workers: {:.2}x on one pipeline, {:.2}x on a pipeline each",
            two / one,
            apart / one
        );
    }
}

/// `workers` threads making `calls` calls in all, worker `w` through
/// `pipelines[w % len]`: prints and returns the throughput (calls a second).
fn workers_round(
    pipelines: &[&Pipeline],
    workers: u64,
    calls: u64,
    ids: &[AgentId],
    label: &str,
) -> f64 {
    let per_worker = calls / workers;
    let start = Instant::now();
    let cpu: Vec<Duration> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let pipeline = pipelines[w as usize % pipelines.len()];
                s.spawn(move || {
                    let cpu = on_cpu();
                    for i in 0..per_worker {
                        run(pipeline, &ids[(i + w * 50) as usize % ids.len()]);
                    }
                    on_cpu() - cpu
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect()
    });
    let rate = (per_worker * workers) as f64 / start.elapsed().as_secs_f64();
    let per_call: Vec<String> = cpu
        .iter()
        .map(|c| format!("{:.0}", c.as_secs_f64() * 1e9 / per_worker as f64))
        .collect();
    println!(
        "throughput {label}: {:.2} M calls/s, on CPU ns/call per worker [{}]",
        rate / 1e6,
        per_call.join(", ")
    );
    rate
}

/// Rounds of `TACK_SCALE_CALLS` calls for 1 agent and as many for 10,000
/// agents, the two taking turns in blocks of `TACK_SCALE_BLOCK` calls
/// (default 10,000: each of the 10,000 agents once per block): time on a CPU
/// per call, and the second over the first. Both figures of a round sample
/// the same seconds of the machine, so load from other work that comes and
/// goes moves them together, not the ratio.
fn agents_report() {
    let calls: usize = env_number("TACK_SCALE_CALLS", 400_000);
    let rounds: usize = env_number("TACK_SCALE_ROUNDS", 3);
    let block: usize = env_number("TACK_SCALE_BLOCK", 10_000usize).clamp(1, calls.max(1));
    let setups: Vec<(usize, Vec<AgentId>)> = [1, 10_000].map(|n| (n, agents(n))).into();
    // Round-robin, or a stride coprime with 10,000 (every agent once per
    // 10,000 calls, each far from the one before it).
    let scattered = std::env::var("TACK_SCALE_ORDER").is_ok_and(|v| v == "scattered");
    let turn = |i: usize, n: usize| if scattered { i * 7_919 % n } else { i % n };
    let pipelines: Vec<_> = setups.iter().map(|(_, ids)| pipeline_for(ids)).collect();
    for _ in 0..rounds {
        // Per setup: calls made, time on a CPU, wall time.
        let mut spent = vec![(0usize, Duration::ZERO, Duration::ZERO); setups.len()];
        while spent[0].0 < calls {
            for (((_, ids), (pipeline, _)), (made, cpu, wall)) in
                setups.iter().zip(&pipelines).zip(&mut spent)
            {
                let these = block.min(calls - *made);
                let (start, before) = (Instant::now(), on_cpu());
                for i in *made..*made + these {
                    run(pipeline, &ids[turn(i, ids.len())]);
                }
                *cpu += on_cpu() - before;
                *wall += start.elapsed();
                *made += these;
            }
        }
        let per_call = |d: Duration| d.as_secs_f64() * 1e9 / calls as f64;
        let mut line: Vec<String> = setups
            .iter()
            .zip(&spent)
            .map(|((n, _), (_, cpu, wall))| {
                format!(
                    "{n} agent(s) {:.0} ns/call on CPU ({:.0} wall)",
                    per_call(*cpu),
                    per_call(*wall)
                )
            })
            .collect();
        if spent[0].1 > Duration::ZERO {
            line.push(format!(
                "10,000 over 1: {:+.1} %",
                (spent[1].1.as_secs_f64() / spent[0].1.as_secs_f64() - 1.0) * 100.0
            ));
        }
        println!("agents: {}", line.join(", "));
    }
}

criterion_group!(benches, agents_round_robin, threads, export);

fn main() {
    // `TACK_SCALE_REPORT=agents` or `threads` prints one report only (for a
    // profiler); `none` skips both.
    let report = std::env::var("TACK_SCALE_REPORT").unwrap_or_default();
    if report.is_empty() || report == "agents" {
        agents_report();
    }
    if report.is_empty() || report == "threads" {
        throughput_report();
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
