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
    for line in settings.sandbox_paths.describe() {
        print_text(&line);
    }
    for warning in &settings.warnings {
        print_text(&format!("warning: {warning}"));
    }
    match crate::guard_plugins::sandbox(&settings, &root, args) {
        Ok(sandbox) => print_text(&crate::sandbox_layer::describe(
            &sandbox,
            settings.sandbox_layer.value,
        )),
        Err(refusal) => print_text(&format!("commands: {refusal}")),
    }
    for file in &settings.hooks {
        for event in tack_hooks::HookEvent::ALL {
            for group in file.config.groups(event) {
                for hook in &group.hooks {
                    print_text(&format!(
                        "hook {event} [{}] `{}` (timeout {}s{}) ({})",
                        if group.matcher.is_empty() {
                            "*"
                        } else {
                            &group.matcher
                        },
                        tack_agent::escape_line(&hook.command_line()),
                        hook.timeout.as_secs_f64(),
                        if hook.fail_closed {
                            ", fail closed"
                        } else {
                            ""
                        },
                        file.path.display()
                    ));
                }
            }
        }
    }
    let (_, mcp_files) = crate::mcp::config(&root, args, &settings)?;
    let mut judge = crate::trust::Judge::new(&root);
    for file in settings.defining.iter().chain(&mcp_files) {
        let state = judge
            .state(file)
            .map_or_else(|e| format!("unknown: {e}"), |s| s.describe());
        print_text(&format!(
            "starts programs outside the sandbox: {} ({state})",
            file.path.display()
        ));
        for caveat in file.runs(&root).caveats {
            print_text(&format!("  cannot know: {caveat}"));
        }
    }
    match crate::hooks::checked(&settings.hooks, &root, settings.sandbox.value) {
        Ok((_, warnings)) => warnings.iter().for_each(|w| print_text(w)),
        Err(refusal) => print_text(&format!("hooks refused: {refusal}")),
    }
    let prompt = SystemPrompt::build(args.agent.system_prompt.as_deref(), &root)?;
    print_text(&format!(
        "system prompt: {} ({} characters)",
        prompt.sources.join(" + "),
        prompt.text.chars().count()
    ));
    Ok(ExitCode::SUCCESS)
}
