//! `tack replay`.

use std::process::ExitCode;

use tack_agent::read_log;

use crate::args::ReplayArgs;
use crate::output::{EventPrinter, stdout_style};
use crate::session::builtin_registry;

/// Re-renders a session log.
pub fn replay(args: &ReplayArgs) -> Result<ExitCode, String> {
    let contents = read_log(&args.log).map_err(|e| e.to_string())?;
    for warning in &contents.warnings {
        eprintln!("tack: warning: {warning}");
    }
    let installed = builtin_registry()?;
    let printer = EventPrinter::new(installed.registry.clone(), stdout_style(), args.json);
    for record in &contents.records {
        printer.print(record);
    }
    Ok(ExitCode::SUCCESS)
}
