//! End-to-end tests through the real `tack` binary in temp workspaces.
#![allow(clippy::unwrap_used)]

mod bad_input;
mod chat_editing;
mod claude_code;
mod code_mode;
mod command_line;
mod command_rules;
mod demo;
mod durable;
mod hardening;
mod hooks;
mod hooks_denied_batch_failure;
mod interrupt;
mod mcp;
mod mcp_https;
mod mcp_serve;
mod models;
mod persistence;
mod policy;
mod progress;
mod redaction;
mod replay;
// The Restate server harness tack-restate's tests use (its own ports and
// data directory; a missing server fails the tests under CI).
#[allow(dead_code)]
#[path = "../../../durable/tests/all/restate.rs"]
mod restate;
mod resume;
mod script;
mod sessions;
mod settings;
mod trust;
mod ui;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

/// `tack` in `workspace`, with the log at `workspace/../<name>.jsonl`-style
/// path returned by [`log_in`].
///
/// Its state directory (where default session logs go) is a folder under
/// the target directory, never the real home.
pub fn tack(workspace: &Path) -> Command {
    let mut cmd = Command::cargo_bin("tack").unwrap();
    cmd.current_dir(workspace)
        .env("XDG_STATE_HOME", test_state_home())
        .env("XDG_CONFIG_HOME", test_state_home().join("config"))
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR")
        .env("HOME", test_state_home().join("home"));
    cmd
}

/// The state directory of the tests' `tack` runs.
pub fn test_state_home() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("tack-cli-state")
}

/// A log path outside the workspace (so `list dir` sees only the files).
pub fn log_in(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(format!("{name}.jsonl"))
}

/// A workspace inside `dir`.
pub fn workspace(dir: &tempfile::TempDir) -> PathBuf {
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    ws
}

/// Every record of a log, as JSON.
pub fn records(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The records of one type.
pub fn of_type(log: &Path, kind: &str) -> Vec<Value> {
    records(log)
        .into_iter()
        .filter(|r| r["type"] == kind)
        .collect()
}

/// stdout of a successful run.
pub fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.assert().success().get_output().stdout.clone();
    String::from_utf8(out).unwrap()
}

/// stderr of a run that exits with `code`.
pub fn stderr_of_exit(cmd: &mut Command, code: i32) -> String {
    let out = cmd.assert().code(code).get_output().stderr.clone();
    String::from_utf8_lossy(&out).into_owned()
}
