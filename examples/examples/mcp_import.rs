//! Importing an MCP server's tools: the reference filesystem server from npm
//! (`@modelcontextprotocol/server-filesystem`) becomes tack tools named
//! `mcp__files__<tool>`, and each call of one goes through tack's pipeline.
//!
//! `cargo run -p tack-examples --features mcp --example mcp_import`
//!
//! Needs Node and the server, installed once from the repository root with
//! `npm ci --prefix .ci/node --no-audit --no-fund` (as CI does); set
//! `TACK_MCP_NODE_DIR` to use another npm prefix. The server is configured
//! in Claude Code's `.mcp.json` shape and serves a temporary directory. A
//! pre-execute gate lets only read-only tools run: the server's annotations
//! decide each tool's tier (`readOnlyHint` → `read_only`), so
//! `write_file` is denied before the server sees it.

use std::path::Path;
use std::sync::Arc;

use tack_agent::PluginSet;
use tack_core::prelude::*;
use tack_mcp::{ClientOptions, McpClient, McpConfig};
use tack_pipeline::{Pipeline, ToolRegistry};

const INSTALL: &str = "is missing: run `npm ci --prefix .ci/node --no-audit --no-fund`";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let node = concat!(env!("CARGO_MANIFEST_DIR"), "/../.ci/node");
    let prefix = std::env::var("TACK_MCP_NODE_DIR").unwrap_or_else(|_| node.into());
    let bin = Path::new(&prefix).join("node_modules/.bin");
    let server = bin.join("mcp-server-filesystem");
    if !server.exists() {
        return Err(format!("{} {INSTALL}", server.display()).into());
    }
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?; // the server compares resolved paths
    std::fs::write(root.join("notes.txt"), "buy milk\n")?;
    let path = format!("{}:{}", bin.display(), std::env::var("PATH")?); // the server's `node`
    let mcp_json = json!({"mcpServers": {"files": {"command": server, "args": [root], "env": {"PATH": path}}}});
    let config = McpConfig::from_json(&mcp_json.to_string())?;

    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let registrar = Arc::new(registry.clone()); // where the server's tools go
    let plugin = McpClient::connect(&config, ClientOptions::default(), registrar).await;
    if let Some(failure) = plugin.failures().first() {
        return Err(failure.to_string().into());
    }
    let _plugins = PluginSet::over(pipeline.clone()).with(plugin).build()?; // dropping it stops the server
    let pre_execute = pipeline.hooks().pre_execute();
    let _gate = pre_execute.tap("read-only-mcp", |exec, next| async move {
        if !exec.tier().is_read_only() {
            return PreDecision::deny(format!("{} is not read-only", exec.name()));
        }
        next.run(exec).await
    });
    for tool in registry.visible(None) {
        let definition = tool.definition();
        println!("imported {} ({})", definition.name(), definition.tier());
    }
    let (file, new) = (root.join("notes.txt"), root.join("new.txt"));
    let calls = [
        ("mcp__files__read_text_file", json!({ "path": file })),
        ("mcp__files__read_text_file", json!({ "file": file })),
        (
            "mcp__files__write_file",
            json!({ "path": new, "content": "x" }),
        ),
    ];
    for (n, (name, args)) in calls.into_iter().enumerate() {
        let call = ToolCall::new(format!("c{n}"), name, args.to_string());
        let outcome = pipeline.execute(call, CancellationToken::new()).await;
        println!("{name} -> {}", outcome.content.joined_text().trim());
    }
    println!("new.txt exists: {}", new.exists());
    Ok(())
}
