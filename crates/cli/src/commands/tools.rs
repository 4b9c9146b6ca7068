//! `tack tools`.

use std::process::ExitCode;

use tack_core::tool::{ToolFormat, export_tools};

use crate::args::ToolsArgs;
use crate::session::builtin_registry;

/// Prints the builtin tools' schemas.
pub fn tools(args: &ToolsArgs) -> Result<ExitCode, String> {
    let format: ToolFormat = args.format.parse().map_err(|e| format!("--format: {e}"))?;
    let installed = builtin_registry()?;
    let schemas = installed.pipeline.registry().schemas(None);
    let text = serde_json::to_string_pretty(&export_tools(&schemas, format))
        .map_err(|e| format!("cannot print the schemas: {e}"))?;
    crate::output::print_text(&text);
    Ok(ExitCode::SUCCESS)
}
