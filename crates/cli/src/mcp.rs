//! MCP servers' tools in a session: the workspace's `.mcp.json`, the
//! settings' `mcpServers` and `--mcp-config FILE`, in that order (a later
//! server of the same name replaces an earlier one).

use std::path::Path;
use std::sync::Arc;

use tack_mcp::{ClientOptions, McpConfig, McpPlugin};
use tack_pipeline::ToolRegistry;

use crate::args::SessionArgs;
use crate::settings::Settings;

/// The MCP configuration of a session.
pub fn config(root: &Path, args: &SessionArgs, settings: &Settings) -> Result<McpConfig, String> {
    let mut config = McpConfig::new();
    let workspace = root.join(".mcp.json");
    if workspace.is_file() {
        config.merge(McpConfig::from_file(&workspace).map_err(|e| e.to_string())?);
    }
    config.merge(
        McpConfig::from_servers(settings.mcp_servers.clone())
            .map_err(|e| format!("settings key `mcpServers`: {e}"))?,
    );
    if let Some(file) = &args.mcp_config {
        config.merge(McpConfig::from_file(file).map_err(|e| format!("--mcp-config: {e}"))?);
    }
    Ok(config)
}

/// Starts the configured MCP servers (none configured: `None`). A server
/// that fails to start is reported on stderr and the session goes on; its
/// tools are missing until a restart succeeds.
pub async fn client(
    root: &Path,
    args: &SessionArgs,
    settings: &Settings,
    registry: &ToolRegistry,
) -> Result<Option<McpPlugin>, String> {
    let config = config(root, args, settings)?;
    if config.is_empty() {
        return Ok(None);
    }
    let plugin = McpPlugin::connect(
        &config,
        ClientOptions::default(),
        Arc::new(registry.clone()),
    )
    .await;
    for failure in plugin.failures() {
        eprintln!(
            "tack: warning: {}",
            tack_agent::escape_block(&failure.to_string(), "  ")
        );
    }
    Ok(Some(plugin))
}
