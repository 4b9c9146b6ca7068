//! `tack plugins`.

use std::process::ExitCode;

use tack_core::host::plugin_factories;

/// Lists the plugins submitted through `inventory`.
pub fn plugins() -> Result<ExitCode, String> {
    let factories = plugin_factories().map_err(|e| e.to_string())?;
    let width = factories.iter().map(|f| f.name().len()).max().unwrap_or(0);
    for factory in factories {
        crate::output::print_text(&format!(
            "{:width$}  {}",
            factory.name(),
            factory.description()
        ));
    }
    Ok(ExitCode::SUCCESS)
}
