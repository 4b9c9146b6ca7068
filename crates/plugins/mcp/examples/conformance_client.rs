//! tack's MCP client for the conformance suite's client scenarios: the
//! suite runs `conformance_client URL` with `MCP_CONFORMANCE_SCENARIO` set.
//! It connects through [`McpPlugin`] (the server named `conformance`), and
//! for `tools_call` calls `add_numbers` through a tack pipeline.
#![allow(clippy::unwrap_used)]

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tack_core::CancellationToken;
use tack_core::capability::ToolDispatcher;
use tack_core::host::PluginHost;
use tack_core::tool::ToolCall;
use tack_mcp::{ClientOptions, McpConfig, McpPlugin, ServerConfig};
use tack_pipeline::{Pipeline, ToolRegistry};

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().next_back() else {
        eprintln!("usage: conformance_client URL");
        return ExitCode::FAILURE;
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let config = McpConfig::new().with_server("conformance", ServerConfig::http(url));
    let plugin = McpPlugin::connect(
        &config,
        ClientOptions::default().startup_timeout(Duration::from_secs(10)),
        Arc::new(registry.clone()),
    )
    .await;
    if let Some(failure) = plugin.failures().first() {
        eprintln!("{failure}");
        return ExitCode::FAILURE;
    }
    let mut host = PluginHost::new(pipeline.hooks(), pipeline.capabilities(), &registry);
    host.install(&plugin).unwrap();
    let mut code = ExitCode::SUCCESS;
    if scenario == "tools_call" {
        let call = ToolCall::new(
            "c1",
            "mcp__conformance__add_numbers",
            json!({"a": 2, "b": 3}).to_string(),
        );
        let outcome = pipeline.dispatch(call, CancellationToken::new()).await;
        println!("{}", serde_json::to_string(&*outcome).unwrap());
        if !outcome.is_success() {
            code = ExitCode::FAILURE;
        }
    }
    plugin.shutdown().await;
    code
}
