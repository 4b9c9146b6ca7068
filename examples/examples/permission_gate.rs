//! A permission gate on `tools/pre-execute`: a plugin that denies `rm -rf`,
//! asks before `curl`, and lets everything else through to the rest of the
//! chain (whose default is allow).
//!
//! Run: `cargo run -p tack-examples --features agent --example permission_gate`

use tack_agent::PluginSet;
use tack_core::prelude::*;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gate = PluginFn::new("gate", |cx| {
        let pre_execute = cx.hooks().pre_execute();
        pre_execute.tap("gate", |exec, next| async move {
            let command = exec.arg_str("command").unwrap_or_default();
            if command.contains("rm -rf") {
                return PreDecision::deny("`rm -rf` is not allowed in this workspace");
            }
            if command.starts_with("curl") {
                return PreDecision::ask("this command downloads from the network");
            }
            next.run(exec).await // not ours to judge: ask the rest of the chain
        });
        Ok(())
    });
    let plugins = PluginSet::new().with(gate).build()?;
    // A stand-in for a shell tool: it only echoes the command it was given.
    let sh = ToolDefinition::builder("sh")
        .description("Run a shell command.")
        .input_schema(json!({"type": "object", "properties": {"command": {"type": "string"}}}))
        .output(OutputSpec::new(json!({"type": "string"})))
        .handler(|args, _cx| async move { Ok(json!(format!("ran {}", args["command"]))) })
        .build()?;
    let _sh = plugins.pipeline.registry().register(sh)?;
    for command in ["ls -la", "rm -rf /", "curl https://example.com"] {
        let call = ToolCall::new("call-1", "sh", json!({ "command": command }).to_string());
        let outcome = plugins
            .pipeline
            .execute(call, CancellationToken::new())
            .await;
        let by = outcome.provenance.as_ref().map(ToString::to_string);
        let text = outcome.content.joined_text();
        println!("{command}: {text} [{}]", by.unwrap_or_default());
    }
    Ok(())
}
