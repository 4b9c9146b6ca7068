//! A monotonic guard: it runs after `tools/pre-execute` and approval, and can
//! only pass or deny. Here a listener allows every call outright, and the
//! guard still refuses the one that reads a `.env` file: nothing before a
//! guard can loosen it.
//!
//! Run: `cargo run -p tack-examples --features agent --example monotonic_guard`

use tack_agent::PluginSet;
use tack_core::prelude::*;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let guard = PluginFn::new("no-dotenv", |cx| {
        cx.hooks().guard("no-dotenv", |exec| {
            match exec.arg_str("path") {
                Some(path) if path.ends_with(".env") => Err("`.env` files hold secrets".into()),
                _ => Ok(()), // there is no "allow": pass hands on to the next guard
            }
        });
        Ok(())
    });
    let plugins = PluginSet::new().with(guard).build()?;
    let pipeline = &plugins.pipeline;
    // The most permissive policy there is: allow every call, skip the rest of the chain.
    let hooks = pipeline.hooks();
    let _yes = hooks
        .pre_execute()
        .tap("yes-to-all", |_, _| async { PreDecision::allow() });
    let read = ToolDefinition::builder("read")
        .description("Read a file.")
        .input_schema(json!({"type": "object", "properties": {"path": {"type": "string"}}}))
        .output(OutputSpec::new(json!({"type": "string"})))
        .handler(|args, _cx| async move { Ok(json!(format!("contents of {}", args["path"]))) })
        .build()?;
    let _read = pipeline.registry().register(read)?;
    for path in ["notes.txt", "app/.env"] {
        let call = ToolCall::new("call-1", "read", json!({ "path": path }).to_string());
        let outcome = pipeline.execute(call, CancellationToken::new()).await;
        let by = outcome.provenance.as_ref().map(ToString::to_string);
        let text = outcome.content.joined_text();
        println!("{path}: {text} [{}]", by.unwrap_or_default());
    }
    Ok(())
}
