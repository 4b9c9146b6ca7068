//! Cost of the permission gate per call with 100 rules.
#![allow(clippy::unwrap_used, missing_docs)] // a benchmark: setup failures should panic; criterion macros generate undocumented items

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tack_core::host::{NewExecutionToken, NewToolExecution};
use tack_core::tool::{CallId, ExecutionToken, Tier, ToolExecution, ToolName};
use tack_permission::{Action, Mode, Permission, PermissionConfig, Rule, RuleSet};

/// 100 rules of every shape: name globs, tiers, path globs, command patterns.
fn hundred_rules() -> RuleSet {
    let mut rules = RuleSet::new();
    for i in 0..25 {
        rules.push(
            Rule::allow("read_file")
                .path("path", format!("src/mod{i}/**"))
                .build()
                .unwrap(),
        );
        rules.push(
            Rule::ask("write_file")
                .path("path", format!("docs/{i}/*.md"))
                .build()
                .unwrap(),
        );
        rules.push(
            Rule::allow("bash")
                .command("command", format!("tool{i} *"))
                .build()
                .unwrap(),
        );
        rules.push(
            Rule::deny(format!("mcp_{i}_*"))
                .tier(Tier::Network)
                .build()
                .unwrap(),
        );
    }
    assert_eq!(rules.len(), 100);
    rules
}

fn exec(tool: &str, tier: Tier, args: serde_json::Value) -> Arc<ToolExecution> {
    Arc::new(ToolExecution::new(
        CallId::from("c"),
        ToolName::new(tool).unwrap(),
        Arc::new(args),
        tier,
        ExecutionToken::issue(CallId::from("c")),
    ))
}

fn bench(c: &mut Criterion) {
    let gate = Permission::new(
        PermissionConfig::default()
            .mode(Mode::Ask)
            .workspace_root("/work/repo")
            .rules(hundred_rules())
            .rule(
                Rule::deny("bash")
                    .command("command", "rm *")
                    .build()
                    .unwrap(),
            ),
    );
    // Worst case: nothing matches early, every rule is tried.
    let miss = exec(
        "bash",
        Tier::Executes,
        json!({"command": "cargo build --release"}),
    );
    let path = exec(
        "read_file",
        Tier::ReadOnly,
        json!({"path": "/work/repo/src/mod24/a/../b.rs"}),
    );
    // A typical compound command: a pipeline, a redirection and `&&`.
    let compound = exec(
        "bash",
        Tier::Executes,
        json!({"command": "cd crates/core && cargo test --release 2>&1 | tail -50 && git status --short"}),
    );
    // Every part allowed by the 25th command rule (`tool24 *`).
    let covered = exec(
        "bash",
        Tier::Executes,
        json!({"command": "tool24 build --release 2>&1 | tool24 filter -n 50 && tool24 report"}),
    );
    assert_eq!(gate.evaluate(&miss).action, Action::Ask);
    assert_eq!(gate.evaluate(&path).action, Action::Allow);
    assert_eq!(gate.evaluate(&compound).action, Action::Ask);
    assert_eq!(gate.evaluate(&covered).action, Action::Allow);

    c.bench_function("evaluate/100 rules/no match (bash)", |b| {
        b.iter(|| black_box(gate.evaluate(black_box(&miss))))
    });
    c.bench_function("evaluate/100 rules/path match", |b| {
        b.iter(|| black_box(gate.evaluate(black_box(&path))))
    });
    c.bench_function("evaluate/100 rules/compound command, no match", |b| {
        b.iter(|| black_box(gate.evaluate(black_box(&compound))))
    });
    c.bench_function(
        "evaluate/100 rules/compound command, 25th command rule",
        |b| b.iter(|| black_box(gate.evaluate(black_box(&covered)))),
    );

    // The listener as the pipeline runs it: a tools/pre-execute dispatch.
    let plugins = tack_pipeline::PluginSet::new()
        .with(gate.clone())
        .build()
        .unwrap();
    let hooks = plugins.pipeline.hooks();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    c.bench_function("pre-execute dispatch/100 rules/no match", |b| {
        b.to_async(&runtime).iter(|| {
            let input = miss.clone();
            let hook = hooks.pre_execute().clone();
            async move { black_box(hook.dispatch(None, input).await) }
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
