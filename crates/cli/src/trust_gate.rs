//! Before a session starts: the files it would read that define hooks or
//! MCP servers, and the refusal when one inside the workspace is not
//! trusted.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::args::SessionArgs;
use crate::settings::Settings;
use crate::trust::{Defining, Judge};

/// Every file a session with `args` would read that defines hooks or MCP
/// servers, with the workspace and settings.
///
/// # Errors
///
/// The workspace, a settings file or an MCP configuration is unusable.
pub fn session_files(args: &SessionArgs) -> Result<(PathBuf, Settings, Vec<Defining>), String> {
    let root = crate::session::workspace(args.workspace.as_deref())?;
    let settings = Settings::load(&root, args)?;
    let (_, mcp_files) = crate::mcp::config(&root, args, &settings)?;
    let mut files = settings.defining.clone();
    files.extend(mcp_files);
    Ok((root, settings, files))
}

/// Before a session starts: refuses (printing why, with the usage-error
/// exit code) when a file inside the workspace defining hooks or MCP
/// servers is not trusted. The session checks again the bytes it uses.
///
/// # Errors
///
/// The workspace, settings or trust store are unusable.
pub fn gate(args: &SessionArgs) -> Result<Option<ExitCode>, String> {
    let (root, _, files) = session_files(args)?;
    match Judge::new(&root).refusal(&files)? {
        None => Ok(None),
        Some(refusal) => {
            eprintln!("tack: error: {}", tack_agent::escape_block(&refusal, "  "));
            Ok(Some(ExitCode::from(crate::exit::USAGE)))
        }
    }
}
