//! Serving tools over MCP: your own tool and tack's builtin file tools,
//! confined to a read-only view of a directory, for any MCP client.
//!
//! `cargo run -p tack-examples --features mcp --example mcp_serve -- DIR` serves on stdin
//! and stdout until the client disconnects (with nothing on stdin it ends at
//! once). Connect a client to it, for example Claude Code:
//! `claude mcp add cookbook -- cargo run -q -p tack-examples --features mcp --example mcp_serve -- "$PWD"`.
//!
//! `McpServer` lists the tools of a `ToolSource` (here: what the registry
//! shows) and dispatches each `tools/call` through a `Pipeline`, so every
//! call meets the policies installed into that pipeline: here the sandbox in
//! read-only mode, which refuses `write_file` and `edit_file`. A failed call
//! reaches the client as a result with `isError: true`.

use std::sync::Arc;

use tack_agent::PluginSet;
use tack_core::prelude::*;
use tack_mcp::McpServer;
use tack_pipeline::{Pipeline, ToolRegistry};
use tack_sandbox::{Sandbox, SandboxPolicy};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::fs::canonicalize(std::env::args().nth(1).unwrap_or_else(|| ".".into()))?;
    let word_count = ToolDefinition::builder("word_count")
        .description("Count the words of a text.")
        .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
        .output(OutputSpec::new(json!({"type": "object", "properties": {"words": {"type": "integer"}}})))
        .tier(Tier::ReadOnly)
        .handler(|args, _| async move { Ok(json!({ "words": args["text"].as_str().unwrap_or_default().split_whitespace().count() })) })
        .build()?;
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let _word_count = registry.register(word_count)?;
    let _plugins = PluginSet::over(pipeline.clone())
        .with(Sandbox::new(SandboxPolicy::read_only(&root))?)
        .with_named("builtin-tools")
        .build()?;
    let listed = registry.clone();
    let tools = Arc::new(move || {
        listed
            .visible(None)
            .iter()
            .map(|t| t.definition().clone())
            .collect()
    });
    eprintln!("serving MCP on stdio, read-only over {}", root.display()); // stdout is the protocol's
    McpServer::new(Arc::new(pipeline), tools)
        .named("tack-cookbook")
        .with_tools_changed(registry.changes())
        .serve_stdio()
        .await?;
    Ok(())
}
