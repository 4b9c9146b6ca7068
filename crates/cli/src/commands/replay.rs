//! `tack replay`.

use std::process::ExitCode;

use tack_agent::{LogReadError, escape_block, read_log};

use crate::args::ReplayArgs;
use crate::exit;
use crate::output::{EventPrinter, print_text, stdout_style};
use crate::session::{builtin_registry, workspace};

/// Verifies a session log and re-renders it; a log that fails verification
/// is reported (every break with its line number) and not replayed. An
/// empty file, or one that is no log at all, is one line of error.
pub async fn replay(args: &ReplayArgs) -> Result<ExitCode, String> {
    let path = match &args.log {
        Some(path) => path.clone(),
        None => {
            let path = crate::sessions::latest(&workspace(args.workspace.as_deref())?)?;
            eprintln!("tack: replaying {}", path.display());
            path
        }
    };
    // Empty, or no log at all: one line (not a list of broken lines).
    if let Err(e) = crate::sessions::check_is_log(&path) {
        eprintln!("tack: error: {}", escape_block(&e, "  "));
        return Ok(ExitCode::from(exit::INVALID_LOG));
    }
    let contents = match read_log(&path) {
        Ok(contents) => contents,
        Err(e @ LogReadError::Invalid { .. }) => {
            eprintln!("tack: error: {}", escape_block(&e.to_string(), "  "));
            return Ok(ExitCode::from(exit::INVALID_LOG));
        }
        Err(e) => return Err(e.to_string()),
    };
    for warning in &contents.warnings {
        eprintln!("tack: warning: {}", escape_block(warning, "  "));
    }
    if args.json {
        for line in &contents.lines {
            print_text(line);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let installed = builtin_registry()?;
    if let Some(addr) = args.ui {
        let title = path.display().to_string();
        let registry = installed.pipeline.registry().clone();
        crate::page::replay(addr, registry, &contents.records, &title).await?;
        return Ok(ExitCode::SUCCESS);
    }
    let printer = EventPrinter::new(installed.pipeline.registry().clone(), stdout_style(), false);
    for record in &contents.records {
        printer.print(record);
    }
    Ok(ExitCode::SUCCESS)
}
