//! `tack sessions`: the session logs of a workspace (or of all), oldest
//! first, with when each started, its prompts, its state and its model.

use std::process::ExitCode;

use crate::args::SessionsArgs;
use crate::output::print_text;
use crate::session::workspace;
use crate::sessions::{Summary, logs_in, sessions_root, summarize, utc_time, workspace_dir};

/// Lists the logs.
pub fn sessions(args: &SessionsArgs) -> Result<ExitCode, String> {
    let mut found: Vec<(String, Summary)> = Vec::new();
    if args.all {
        let root = sessions_root()?;
        let mut dirs: Vec<_> = std::fs::read_dir(&root)
            .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        dirs.sort();
        for dir in dirs {
            let key = dir
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            found.extend(logs_in(&dir).iter().map(|p| (key.clone(), summarize(p))));
        }
        if found.is_empty() {
            eprintln!("tack: no sessions yet (looked in {})", root.display());
            return Ok(ExitCode::SUCCESS);
        }
    } else {
        let root = workspace(args.workspace.as_deref())?;
        let dir = workspace_dir(&root)?;
        let shown = root.display().to_string();
        found.extend(logs_in(&dir).iter().map(|p| (shown.clone(), summarize(p))));
        if found.is_empty() {
            eprintln!(
                "tack: no sessions of the workspace {} yet (looked in {}; --all lists every workspace's)",
                root.display(),
                dir.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
    }
    let wide = found.iter().map(|(w, _)| w.len()).max().unwrap_or(0).max(9);
    print_text(&format!(
        "{:<19}  {:>5}  {:<9}  {:<wide$}  {:<24}  LOG",
        "START (UTC)", "TURNS", "STATUS", "WORKSPACE", "MODEL"
    ));
    for (ws, s) in &found {
        let start = s.start_ms.map_or_else(|| "-".to_owned(), utc_time);
        let model = tack_agent::escape_line(s.model.as_deref().unwrap_or("-"));
        print_text(&format!(
            "{start:<19}  {:>5}  {:<9}  {ws:<wide$}  {model:<24}  {}",
            s.turns,
            s.status,
            s.path.display()
        ));
    }
    Ok(ExitCode::SUCCESS)
}
