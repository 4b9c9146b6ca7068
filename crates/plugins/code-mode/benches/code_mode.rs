//! run_code start-up cost and per-sub-call overhead.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tack_code_mode::{CodeModeConfig, run_code_definition};
use tack_core::hook::AgentId;
use tack_core::tool::{OutputSpec, ToolCall, ToolDefinition};
use tack_pipeline::{Pipeline, Presentation, ToolRegistry};
use tokio_util::sync::CancellationToken;

fn setup() -> (Pipeline, AgentId, Vec<tack_core::hook::Disposer>) {
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let noop = ToolDefinition::builder("noop")
        .description("Does nothing.")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({})))
        .handler(|_a: Arc<Value>, _cx| async move { Ok(json!(1)) })
        .build()
        .unwrap();
    let keep = vec![
        registry.register(noop).unwrap(),
        registry
            .register_code_transport(
                run_code_definition(CodeModeConfig::default(), pipeline.hooks().clone()).unwrap(),
            )
            .unwrap(),
    ];
    let agent = AgentId::new("coder");
    registry.set_presentation(Some(&agent), Presentation::Code);
    (pipeline, agent, keep)
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (registry, agent, _keep) = setup();
    let run = |code: &'static str| {
        let registry = registry.clone();
        let agent = agent.clone();
        async move {
            let args = json!({"code": code}).to_string();
            let out = registry
                .execute(
                    ToolCall::new("b", "run_code", args).with_agent(agent),
                    CancellationToken::new(),
                )
                .await;
            assert!(out.is_success());
        }
    };
    c.bench_function("run_code_startup_return_1", |b| {
        b.to_async(&rt).iter(|| run("return 1;"))
    });
    c.bench_function("run_code_100_sequential_sub_calls", |b| {
        b.to_async(&rt)
            .iter(|| run("for (let i = 0; i < 100; i++) { await tools.noop({}); }"))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
