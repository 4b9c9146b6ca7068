//! `tack tools`.

use std::process::ExitCode;

use tack_agent::PluginSet;
use tack_core::host::{ToolFormat, export_tools};
use tack_pipeline::ToolRegistry;
use tack_tools::BuiltinTools;

use crate::args::ToolsArgs;
use crate::session::workspace;
use crate::settings::Settings;

/// Prints the schemas of the builtin tools and of the configured MCP
/// servers' tools (the servers are started, as `tack run` starts them, and
/// stopped again; stderr names how many tools each brought). `--format mcp`
/// prints the tools as `tack mcp serve` lists them.
pub async fn tools(args: &ToolsArgs) -> Result<ExitCode, String> {
    let format: ToolFormat = args.format.into();
    // The workspace's untrusted MCP servers are refused as `run` refuses them.
    if let Some(refused) = crate::trust_gate::gate(&args.session)? {
        return Ok(refused);
    }
    let root = workspace(args.session.workspace.as_deref())?;
    let settings = Settings::load(&root, &args.session)?;
    let registry = ToolRegistry::new();
    // `run_code` too, shown as the settings' (or `--presentation`'s) way
    // of offering the tools says.
    let offered = crate::presentation::offer(&settings, &registry);
    let mcp = crate::mcp::client(&root, &args.session, &settings, &registry).await?;
    let servers: Vec<String> = mcp
        .as_ref()
        .map(|m| m.server_names().into_iter().map(str::to_owned).collect())
        .unwrap_or_default();
    let mut plugins = PluginSet::over(offered.pipeline)
        .with(BuiltinTools)
        .with(offered.code_mode);
    if let Some(mcp) = mcp {
        plugins = plugins.with(mcp);
    }
    let _installed = plugins
        .build()
        .map_err(|e| format!("cannot install the tools: {e}"))?;
    for server in &servers {
        let prefix = tack_mcp::server_prefix(server);
        let count = registry
            .visible(None)
            .iter()
            .filter(|t| t.definition().name().as_str().starts_with(&prefix))
            .count();
        eprintln!("tack: {count} tools from MCP server `{server}` ({prefix}*)");
    }
    let value = if format == ToolFormat::Mcp {
        let mut definitions: Vec<_> = registry
            .visible(None)
            .iter()
            .map(|t| t.definition().clone())
            .collect();
        definitions.sort_by(|a, b| a.name().as_str().cmp(b.name().as_str()));
        serde_json::Value::Array(definitions.iter().map(tack_mcp::tool_json).collect())
    } else {
        export_tools(&registry.schemas(None), format)
    };
    let text = serde_json::to_string_pretty(&value)
        .map_err(|e| format!("cannot print the schemas: {e}"))?;
    crate::output::print_text(&text);
    Ok(ExitCode::SUCCESS)
}
