//! `tack config`.

use std::process::ExitCode;

use crate::args::SessionArgs;
use crate::output::print_text;
use crate::prompt::SystemPrompt;
use crate::session::workspace;
use crate::settings::Settings;

/// Prints the effective settings and where each value came from.
pub fn config(args: &SessionArgs) -> Result<ExitCode, String> {
    let root = workspace(args.workspace.as_deref())?;
    let settings = Settings::load(&root, args)?;
    print_text(&format!("workspace = {}", root.display()));
    for line in settings.describe() {
        print_text(&line);
    }
    let prompt = SystemPrompt::build(args.system_prompt.as_deref(), &root)?;
    print_text(&format!(
        "system prompt: {} ({} characters)",
        prompt.sources.join(" + "),
        prompt.text.chars().count()
    ));
    Ok(ExitCode::SUCCESS)
}
