//! MCP servers' tools in a session: the workspace's `.mcp.json`, the
//! settings' `mcpServers` and `--mcp-config FILE`, in that order (a later
//! server of the same name replaces an earlier one).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use tack_mcp::{ClientOptions, McpClient, McpConfig};
use tack_pipeline::ToolRegistry;

use crate::args::SessionArgs;
use crate::settings::Settings;
use crate::trust::{Defining, Judge};

/// The MCP configuration of a session, and the MCP files read that define
/// servers (each with the hash of the bytes parsed).
pub fn config(
    root: &Path,
    args: &SessionArgs,
    settings: &Settings,
) -> Result<(McpConfig, Vec<Defining>), String> {
    let mut config = McpConfig::new();
    let mut defining = Vec::new();
    let workspace = root.join(".mcp.json");
    if workspace.is_file() {
        let (file, found) = read(&workspace)?;
        config.merge(file);
        defining.extend(found);
    }
    config.merge(
        McpConfig::from_servers(settings.mcp_servers.clone())
            .map_err(|e| format!("settings key `mcpServers`: {e}"))?,
    );
    if let Some(path) = &args.mcp_config {
        let (file, found) = read(path).map_err(|e| format!("--mcp-config: {e}"))?;
        config.merge(file);
        defining.extend(found);
    }
    Ok((config, defining))
}

/// Reads and parses an `.mcp.json` once: the configuration and the hash
/// judged are of the same bytes.
fn read(path: &Path) -> Result<(McpConfig, Option<Defining>), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let config = McpConfig::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let servers: BTreeMap<String, serde_json::Value> =
        serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v.get("mcpServers").cloned())
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
    Ok((config, Defining::of(path, &text, None, &servers)))
}

/// Starts the configured MCP servers (none configured: `None`). A server
/// that fails to start is reported on stderr and the session goes on; its
/// tools are missing until a restart succeeds.
pub async fn client(
    root: &Path,
    args: &SessionArgs,
    settings: &Settings,
    registry: &ToolRegistry,
) -> Result<Option<McpClient>, String> {
    let (config, files) = config(root, args, settings)?;
    // The bytes parsed are the bytes judged (the gate before the session
    // read them once already; a file swapped since is caught here).
    Judge::new(root).enforce(&files)?;
    if config.is_empty() {
        return Ok(None);
    }
    if settings.sandbox.value == tack_sandbox::SandboxMode::FullAccess {
        let settings_files = settings
            .defining
            .iter()
            .filter(|f| f.starts.iter().any(|s| s.starts_with("MCP server")));
        for file in files.iter().chain(settings_files) {
            eprintln!(
                "tack: WARNING: {} defines MCP servers and the tools can write it under --sandbox full-access; \
                 stdio servers run outside any sandbox with your rights",
                file.path.display()
            );
        }
    }
    let check = recheck(root, files.iter().chain(&settings.defining));
    let mut options = ClientOptions::default()
        .before_start(check)
        .startup_timeout(startup_timeout()?)
        .call_timeout(call_timeout()?);
    // HTTP servers that ask for OAuth: signed in to on a terminal, their
    // tokens kept in the state directory.
    options = options.authorizer(crate::mcp_sign_in::authorizer());
    if let Some(file) = crate::mcp_sign_in::token_file() {
        options = options.token_file(file);
    }
    let plugin = McpClient::connect(&config, options, Arc::new(registry.clone())).await;
    for failure in plugin.failures() {
        eprintln!(
            "tack: warning: {}",
            tack_agent::escape_block(&failure.to_string(), "  ")
        );
    }
    Ok(Some(plugin))
}

/// The environment variable that sets how long an MCP tool call may wait
/// for its answer, in milliseconds (as Claude Code reads it); `0` for no
/// limit.
pub const TOOL_TIMEOUT_VAR: &str = "MCP_TOOL_TIMEOUT";

/// The environment variable that sets how long an MCP server may take to
/// start (answer `initialize` and `tools/list`), in milliseconds (as Claude
/// Code reads it).
pub const STARTUP_TIMEOUT_VAR: &str = "MCP_TIMEOUT";

/// The deadline of one MCP tool call: `MCP_TOOL_TIMEOUT` (milliseconds,
/// `0` for none), else tack-mcp's default (10 minutes).
fn call_timeout() -> Result<Option<std::time::Duration>, String> {
    match millis(
        TOOL_TIMEOUT_VAR,
        "the MCP tool call deadline",
        "120000 (0 for none)",
    )? {
        None => Ok(Some(tack_mcp::DEFAULT_CALL_TIMEOUT)),
        Some(ms) => Ok((ms > 0).then(|| std::time::Duration::from_millis(ms))),
    }
}

/// How long a server may take to start: `MCP_TIMEOUT` (milliseconds), else
/// tack-mcp's default (30 s).
fn startup_timeout() -> Result<std::time::Duration, String> {
    match millis(
        STARTUP_TIMEOUT_VAR,
        "how long an MCP server may take to start",
        "10000",
    )? {
        None => Ok(ClientOptions::default().startup_timeout),
        Some(0) => Err(format!(
            "{STARTUP_TIMEOUT_VAR}=0: a server needs some time to start; give milliseconds, e.g. {STARTUP_TIMEOUT_VAR}=10000"
        )),
        Some(ms) => Ok(std::time::Duration::from_millis(ms)),
    }
}

/// The milliseconds in environment variable `var`, when it is set.
fn millis(var: &str, what: &str, example: &str) -> Result<Option<u64>, String> {
    let Ok(text) = std::env::var(var) else {
        return Ok(None);
    };
    text.trim()
        .parse()
        .map(Some)
        .map_err(|_| format!("{var}={text:?}: give {what} in milliseconds, e.g. {var}={example}"))
}

/// The check before each start of a stdio server (restarts after a crash
/// included): a server defined by a file inside the workspace `root` starts
/// only if every file it runs from the workspace is as the trust store
/// recorded it when the session began (present with the same contents, or
/// still missing). Servers from files outside are the user's own.
fn recheck<'a>(
    root: &Path,
    files: impl Iterator<Item = &'a Defining>,
) -> impl Fn(&str, &tack_mcp::ServerConfig) -> Result<(), String> + Send + Sync + 'static {
    let servers: BTreeMap<String, serde_json::Value> = files
        .filter(|file| crate::trust::inside(&file.path, root))
        .flat_map(|file| file.servers.clone())
        .collect();
    let recorded = if servers.is_empty() {
        Ok(BTreeMap::new())
    } else {
        Judge::new(root).recorded()
    };
    let root = root.to_owned();
    move |name: &str, _: &tack_mcp::ServerConfig| {
        let Some(server) = servers.get(name) else {
            return Ok(());
        };
        let recorded = recorded.as_ref().map_err(|e| {
            format!("what it runs cannot be checked against what you trusted ({e})")
        })?;
        let now = crate::trust::command_files::of_server(name, server, &root);
        match crate::trust::first_difference(|path| recorded.get(path).cloned(), &now) {
            None => Ok(()),
            Some((file, why)) => Err(format!(
                "{} {why}; the server is defined inside the workspace and runs outside the sandbox. Review it, then run `tack trust` and start a new session",
                file.display()
            )),
        }
    }
}
