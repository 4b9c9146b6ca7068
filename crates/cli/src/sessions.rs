//! Finding session logs: a workspace's logs in the state directory, the
//! latest one (`--last`, `--continue`), what each holds (`tack sessions`),
//! and a file that is empty or no log at all told apart from a damaged log.

use std::io::Read;
use std::path::{Path, PathBuf};

use tack_agent::{Event, LogReadError, read_log, state_home_from_env, workspace_key};

/// The folder of every workspace's session logs.
pub fn sessions_root() -> Result<PathBuf, String> {
    let state = state_home_from_env().ok_or_else(|| {
        "cannot find the session logs: neither XDG_STATE_HOME nor HOME is set to an absolute path"
            .to_owned()
    })?;
    Ok(state.join("tack").join("sessions"))
}

/// The folder of `workspace`'s session logs (canonical workspace path).
pub fn workspace_dir(workspace: &Path) -> Result<PathBuf, String> {
    Ok(sessions_root()?.join(workspace_key(workspace)))
}

/// The `.jsonl` files of `dir`, oldest first (by the start time in their
/// names, `UNIX_MS-PID.jsonl`, then by name).
pub fn logs_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut logs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && p.is_file())
        .collect();
    logs.sort_by_key(|p| (start_ms(p).unwrap_or(0), p.clone()));
    logs
}

/// The start time in a default log's name, in ms since the epoch.
pub fn start_ms(path: &Path) -> Option<u64> {
    let stem = path.file_stem()?.to_str()?;
    stem.split('-').next()?.parse().ok()
}

/// The latest session log of `workspace` that holds at least one record.
///
/// # Errors
///
/// No state directory, or no such log (the message says where it looked).
pub fn latest(workspace: &Path) -> Result<PathBuf, String> {
    let dir = workspace_dir(workspace)?;
    logs_in(&dir)
        .into_iter()
        .rev()
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 0))
        .ok_or_else(|| {
            format!(
                "no session of the workspace {} yet (looked in {}); start one with `tack run`",
                workspace.display(),
                dir.display()
            )
        })
}

/// Whether `path` can be read as a log at all: it is not empty, and its
/// first line is a log record (`{"seq":…`). One line says what is wrong.
pub fn check_is_log(path: &Path) -> Result<(), String> {
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(4096).read_to_end(&mut head))
        .map_err(|e| format!("cannot read the session log {}: {e}", path.display()))?;
    if head.is_empty() {
        return Err(format!(
            "the session log {} is empty: its session stopped before the first record was written; there is nothing in it",
            path.display()
        ));
    }
    if !head.starts_with(b"{\"seq\":") {
        return Err(format!(
            "{} is not a tack session log (its first line is not a log record); `tack sessions` lists the logs",
            path.display()
        ));
    }
    Ok(())
}

/// What `tack sessions` shows of one log.
pub struct Summary {
    /// The file.
    pub path: PathBuf,
    /// When it started (ms since the epoch), from its first record or name.
    pub start_ms: Option<u64>,
    /// Prompts in it.
    pub turns: usize,
    /// The model of its last start.
    pub model: Option<String>,
    /// `complete`, `mid-turn`, `empty`, `not a log`, `damaged`.
    pub status: &'static str,
}

/// Reads and verifies one log for the listing.
pub fn summarize(path: &Path) -> Summary {
    let mut summary = Summary {
        path: path.to_owned(),
        start_ms: start_ms(path),
        turns: 0,
        model: None,
        status: "complete",
    };
    if let Err(e) = check_is_log(path) {
        summary.status = if e.contains("is empty") {
            "empty"
        } else {
            "not a log"
        };
        return summary;
    }
    match read_log(path) {
        Ok(contents) => {
            if let Some(first) = contents.records.first() {
                summary.start_ms = Some(first.ts);
            }
            for record in &contents.records {
                match &record.event {
                    Event::User { .. } => summary.turns += 1,
                    Event::SessionStart { model, .. } => summary.model = Some(model.clone()),
                    _ => {}
                }
            }
            let ends_turn = contents
                .records
                .last()
                .is_some_and(|r| matches!(r.event, Event::TurnEnd { .. }));
            if summary.turns > 0 && !ends_turn {
                summary.status = "mid-turn";
            }
        }
        Err(LogReadError::Invalid { .. }) => summary.status = "damaged",
        Err(_) => summary.status = "unreadable",
    }
    summary
}

/// Removes `path` if nothing was ever written to it (a session that ended
/// before its first record); a log with records is kept.
pub fn remove_if_empty(path: &Path) {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0) {
        let _ = std::fs::remove_file(path);
    }
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of ms since the epoch.
pub fn utc_time(ms: u64) -> String {
    let time = crate::utc_time::UtcTime::from_millis(ms);
    format!("{} {}", time.date(), time.time_of_day())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_utc_calendar_dates() {
        assert_eq!(utc_time(0), "1970-01-01 00:00:00");
        assert_eq!(utc_time(951_782_400_000), "2000-02-29 00:00:00");
        assert_eq!(utc_time(1_767_225_599_000), "2025-12-31 23:59:59");
    }
}
