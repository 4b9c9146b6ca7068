//! How the per-call cost of the whole pipeline grows with a multi-tenant
//! host's work, for a trivial typed tool (`{x: integer}` → `x + 1`):
//!
//! * `scale_pipeline/agents/N`: N agents, each with its own scoped
//!   `tools/pre-execute` listener (and one global listener), calling
//!   round-robin (the per-call cost must not grow with N);
//! * `scale_pipeline/threads/T`: T threads calling through one shared
//!   registry at once (each iteration is one call; with T threads the time
//!   per iteration is the inverse of the total throughput);
//! * `scale_pipeline/export/10000_*`: the schemas of 10,000 registered tools
//!   as the JSON text of a request's `tools` in OpenAI's shape: through a
//!   copied `Value`, written straight from the registered schemas, and the
//!   registry's cached export.
//!
//! Every call completes on its first poll, so each builds the future and
//! polls it once with a no-op waker: no executor noise in the figures.
//!
//! Run: `cargo bench -p tack-pipeline --bench scale`

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tack_core::context::ToolRunContext;
use tack_core::hook::{AgentId, Disposer, ListenerSpec};
use tack_core::tool::{
    ExportedTool, OutputSpec, Tier, Tool, ToolCall, ToolDefinition, ToolError, ToolFormat,
    export_tools, tools_json,
};
use tack_pipeline::{Pipeline, ToolRegistry};
use tokio_util::sync::CancellationToken;

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    x: i64,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct AddOut {
    y: i64,
}

struct AddOne;

impl Tool for AddOne {
    const NAME: &'static str = "add_one";
    type Args = AddArgs;
    type Output = AddOut;
    fn description(&self) -> &str {
        "Add one to x."
    }
    fn tier(&self) -> Tier {
        Tier::ReadOnly
    }
    async fn execute(&self, args: AddArgs, _cx: &ToolRunContext) -> Result<AddOut, ToolError> {
        Ok(AddOut { y: args.x + 1 })
    }
}

fn poll_once<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("benchmark calls complete on their first poll"),
    }
}

/// A pipeline over a registry with `add_one`, one global pre-execute listener
/// and one scoped pre-execute listener per agent.
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
    keep.extend(agents.iter().map(|a| {
        pre.tap(
            ListenerSpec::for_agent(a.clone(), "session"),
            |exec, next| next.run(exec),
        )
    }));
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
    for workers in [1usize, 2] {
        group.bench_function(BenchmarkId::from_parameter(workers), |b| {
            b.iter_custom(|iters| {
                let per_worker = iters.div_ceil(workers as u64);
                let start = Instant::now();
                std::thread::scope(|s| {
                    for w in 0..workers {
                        let (pipeline, ids) = (&pipeline, &ids);
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
    // Written straight from the registered schemas, every time.
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
    // The registry's export: kept until the tool set changes.
    group.bench_function("10000_openai_cached", |b| {
        b.iter(|| registry.export_tools(None, ToolFormat::OpenAi))
    });
    group.finish();
}

criterion_group!(benches, agents_round_robin, threads, export);
criterion_main!(benches);
