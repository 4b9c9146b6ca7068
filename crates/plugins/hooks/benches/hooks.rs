//! The cost of one `PreToolUse` hook (`true`) on a tool call, against the
//! same call without it, in the same run. Dominated by starting `sh`.
#![allow(missing_docs, clippy::unwrap_used)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tack_core::host::PluginHost;
use tack_core::tool::{OutputSpec, ToolCall, ToolDefinition};
use tack_hooks::{HookSession, Hooks, HooksConfig};
use tack_pipeline::{Pipeline, ToolRegistry};
use tokio_util::sync::CancellationToken;

fn pipeline() -> (Pipeline, tack_core::hook::Disposer) {
    let registry = ToolRegistry::new();
    let tool = ToolDefinition::builder("bash")
        .description("Echo the command.")
        .input_schema(json!({"type": "object", "properties": {"command": {"type": "string"}}}))
        .output(OutputSpec::new(json!({})))
        .handler(|args: Arc<Value>, _cx| async move { Ok((*args).clone()) })
        .build()
        .unwrap();
    let disposer = registry.register(tool).unwrap();
    (Pipeline::new(registry), disposer)
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (plain, _d1) = pipeline();
    let (hooked, _d2) = pipeline();
    let config = HooksConfig::from_settings(
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}}),
        None,
    )
    .unwrap();
    let hooks = Hooks::new(config, HookSession::new("bench", std::env::temp_dir()));
    let mut host = PluginHost::new(hooked.hooks(), hooked.capabilities(), hooked.registry());
    host.install(&hooks).unwrap();
    let _footprint = host.into_disposables();

    let mut group = c.benchmark_group("pre_tool_use");
    for (name, pipeline) in [("without_hook", &plain), ("with_true_hook", &hooked)] {
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| async {
                let out = pipeline
                    .execute(
                        ToolCall::new("c", "bash", r#"{"command":"ls"}"#),
                        CancellationToken::new(),
                    )
                    .await;
                assert!(out.is_success());
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
