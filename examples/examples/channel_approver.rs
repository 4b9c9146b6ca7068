//! A host with a channel approver standing in for a web UI. The permission
//! gate (mode `ask`: read-only tools run, everything else asks) sends each
//! request over a channel; the "UI" task shows it and answers with the next
//! click — once, deny, always for this session.
//!
//! Run: `cargo run -p tack-examples --features agent --example channel_approver`

use std::sync::Arc;

use tack_agent::PluginSet;
use tack_core::prelude::*;
use tack_permission::{Answer, ChannelApprover, Permission, PermissionConfig};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gate = Permission::new(PermissionConfig::default());
    // "Always for this session" answers become the gate's session rules.
    let (approver, mut inbox) = ChannelApprover::new(gate.session_rules(), 8);
    let plugins = PluginSet::new()
        .with(gate.with_approver(Arc::new(approver)))
        .build()?;
    let pipeline = &plugins.pipeline;
    let sh = ToolDefinition::builder("sh") // tier: executes (the default)
        .description("Run a shell command.")
        .input_schema(json!({"type": "object", "properties": {"command": {"type": "string"}}}))
        .output(OutputSpec::new(json!({"type": "string"})))
        .handler(|args, _cx| async move { Ok(json!(format!("ran {}", args["command"]))) })
        .build()?;
    let _sh = pipeline.registry().register(sh)?;

    // The web UI: a task that receives pending requests and answers each one.
    let ui = tokio::spawn(async move {
        let deny = Answer::Deny {
            reason: Some("not on main".into()),
        };
        let mut clicks = [Answer::Once, deny, Answer::AlwaysForSession].into_iter();
        while let Some(pending) = inbox.recv().await {
            let answer = clicks.next().unwrap_or(Answer::Deny { reason: None });
            println!(
                "  [ui] {}: {} -> {answer:?}",
                pending.summary(),
                pending.request().reason
            );
            pending.respond(answer);
        }
    });

    for command in ["cargo test", "git push --force", "cargo build", "cargo run"] {
        let call = ToolCall::new("c1", "sh", json!({ "command": command }).to_string());
        let outcome = pipeline.execute(call, CancellationToken::new()).await;
        println!("{command}: {}", outcome.content.joined_text());
    }
    drop(plugins); // unloading the gate drops the approver: the UI's inbox closes
    ui.await?;
    Ok(())
}
