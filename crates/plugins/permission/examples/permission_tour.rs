//! The permission gate: install, effect, disposal.
//!
//! Run with `cargo run -p tack-permission --example permission_tour`.
//! The approver here is a channel answered by a scripted "UI"; in a terminal
//! host use `TerminalApprover::stdio(gate.session_rules())` instead.

use std::sync::Arc;

use serde_json::json;
use tack_core::host::PluginHost;
use tack_core::tool::{OutputSpec, Tier, ToolCall, ToolDefinition};
use tack_permission::{Answer, ChannelApprover, Permission, PermissionConfig, PermissionFile};
use tack_pipeline::{Pipeline, ToolRegistry};
use tokio_util::sync::CancellationToken;

const RULES: &str = r#"
mode = "ask"
allow = ['bash(command: "git status*")']
deny = ['bash(command: "rm *")', 'read_file(path: "**/.env")']
"#;

fn tool(name: &str, tier: Tier) -> Result<ToolDefinition, Box<dyn std::error::Error>> {
    Ok(ToolDefinition::builder(name)
        .description(format!("The `{name}` demo tool."))
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({"type": "string"})))
        .tier(tier)
        .handler(|_args, _cx| async { Ok(json!("ran")) })
        .build()?)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = ToolRegistry::new();
    registry.register(tool("bash", Tier::Executes)?)?;
    registry.register(tool("read_file", Tier::ReadOnly)?)?;

    // Install: rules from TOML, paths relative to the workspace root, and an
    // approver for UIs whose "always" answers become session rules.
    let gate = Permission::new(
        PermissionConfig::default()
            .file(PermissionFile::parse(RULES, "permissions.toml")?)
            .workspace_root("/work/repo"),
    );
    let (approver, mut inbox) = ChannelApprover::new(gate.session_rules(), 8);
    let gate = gate.with_approver(Arc::new(approver));
    let pipeline = Pipeline::new(registry.clone());
    let mut host = PluginHost::new(pipeline.hooks(), pipeline.capabilities(), &registry);
    host.install(&gate)?;
    let plugins = host.into_disposables();

    // A scripted UI: answers "always for this session" to the first request.
    let ui = tokio::spawn(async move {
        while let Some(pending) = inbox.recv().await {
            println!(
                "  [ui] approval asked for call {}: {}",
                pending.call_id(),
                pending.request().reason
            );
            pending.respond(Answer::AlwaysForSession);
        }
    });

    // Effect.
    let calls = [
        ("c1", "bash", r#"{"command": "git status -s"}"#),
        ("c2", "bash", r#"{"command": "git status; rm -rf /"}"#),
        ("c3", "bash", r#"{"command": "cargo build"}"#),
        ("c4", "bash", r#"{"command": "rm -rf target"}"#),
        ("c5", "read_file", r#"{"path": "/work/repo/app/../.env"}"#),
        ("c6", "read_file", r#"{"path": "src/main.rs"}"#),
    ];
    for (id, name, args) in calls {
        let out = pipeline
            .execute(ToolCall::new(id, name, args), CancellationToken::new())
            .await;
        match out.failure_info() {
            None => println!("{id} {name} {args}: ran"),
            Some(f) => println!("{id} {name} {args}: {} - {}", f.code(), f.message()),
        }
    }

    // Disposal: unloading removes the gate and the approver.
    drop(plugins);
    let out = pipeline
        .execute(
            ToolCall::new("c7", "bash", r#"{"command": "rm -rf target"}"#),
            CancellationToken::new(),
        )
        .await;
    println!(
        "after unloading: c7 rm -rf target: {}",
        if out.is_success() { "ran" } else { "refused" }
    );
    drop(pipeline);
    drop(registry);
    ui.abort();
    Ok(())
}
