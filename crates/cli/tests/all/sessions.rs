//! Finding sessions through the real binary: `tack sessions`, `replay
//! --last`, `run --continue`; an empty file and a file that is no log get
//! one line; a serve that was given nothing leaves no log; SIGTERM ends a
//! run whose stdout nobody reads.

use std::process::Stdio;
use std::time::{Duration, Instant};

use predicates::str::contains;

use super::*;

/// `tack` with a state directory of its own (so the listing holds only
/// this test's sessions).
fn tack_in(ws: &Path, state: &Path) -> assert_cmd::Command {
    let mut cmd = tack(ws);
    cmd.env("XDG_STATE_HOME", state);
    cmd
}

#[test]
fn sessions_lists_last_replays_and_continue_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let state = dir.path().join("state");
    std::fs::write(ws.join("a.txt"), "alpha").unwrap();
    tack_in(&ws, &state)
        .args(["sessions"])
        .assert()
        .success()
        .stderr(contains("no sessions of the workspace"));
    tack_in(&ws, &state)
        .args(["replay", "--last"])
        .assert()
        .code(1)
        .stderr(contains("no session of the workspace"));
    tack_in(&ws, &state)
        .args(["run", "--continue", "hi"])
        .assert()
        .code(1)
        .stderr(contains("--continue: no session of the workspace"));

    stdout_of(tack_in(&ws, &state).args(["run", "读文件 a.txt"]));
    // Two runs in one millisecond would sort by name; keep them apart.
    std::thread::sleep(Duration::from_millis(5));
    let second = stdout_of(tack_in(&ws, &state).args(["run", "list dir ."]));

    let listing = stdout_of(tack_in(&ws, &state).args(["sessions"]));
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 3, "{listing}");
    assert!(lines[0].starts_with("START (UTC)"), "{listing}");
    for line in &lines[1..] {
        assert!(line.contains("    1  complete"), "{listing}");
        assert!(line.contains(&ws.canonicalize().unwrap().display().to_string()));
        assert!(line.contains(" mock "), "{listing}");
    }

    // --last re-renders the second session exactly as it was shown.
    let replayed = stdout_of(tack_in(&ws, &state).args(["replay", "--last"]));
    assert_eq!(replayed, second);

    // --continue appends to that log: it now holds two prompts.
    let out = tack_in(&ws, &state)
        .args(["run", "--continue", "读文件 a.txt"])
        .assert()
        .success();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("continuing "), "{err}");
    let listing = stdout_of(tack_in(&ws, &state).args(["sessions"]));
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 3, "{listing}");
    assert!(lines[1].contains("    1  complete"), "{listing}");
    assert!(lines[2].contains("    2  complete"), "{listing}");

    // Another workspace's sessions show with --all only.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    stdout_of(tack_in(&other, &state).args(["run", "hi"]));
    let listing = stdout_of(tack_in(&ws, &state).args(["sessions"]));
    assert_eq!(listing.lines().count(), 3, "{listing}");
    let all = stdout_of(tack_in(&ws, &state).args(["sessions", "--all"]));
    assert_eq!(all.lines().count(), 4, "{all}");
    assert!(all.contains("other-"), "{all}");
}

#[test]
fn an_empty_log_is_one_line_not_a_damaged_log() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let state = dir.path().join("state");
    let log = dir.path().join("empty.jsonl");
    std::fs::write(&log, "").unwrap();
    let out = tack_in(&ws, &state)
        .arg("replay")
        .arg(&log)
        .assert()
        .code(4)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("is empty"), "{err}");
    assert!(!err.contains("tampered"), "{err}");

    // In the listing it is `empty`; --last skips it.
    let logs = state
        .join("tack/sessions")
        .join(tack_agent::workspace_key(&ws.canonicalize().unwrap()));
    std::fs::create_dir_all(&logs).unwrap();
    stdout_of(tack_in(&ws, &state).args(["run", "hi"]));
    std::fs::write(logs.join("99999999999999-1.jsonl"), "").unwrap();
    let listing = stdout_of(tack_in(&ws, &state).args(["sessions"]));
    assert!(
        listing.lines().nth(2).unwrap().contains("  empty "),
        "{listing}"
    );
    stdout_of(tack_in(&ws, &state).args(["replay", "--last"]));
}

#[test]
fn a_file_that_is_no_log_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let file = dir.path().join("notes.txt");
    let text: String = (0..40).map(|i| format!("line {i}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let out = tack(&ws)
        .arg("replay")
        .arg(&file)
        .assert()
        .code(4)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("is not a tack session log"), "{err}");
    // A damaged log is still reported in full, exit 4.
    let log = log_in(&dir, "s");
    stdout_of(tack(&ws).args(["run", "hi", "--log"]).arg(&log));
    let edited = std::fs::read_to_string(&log)
        .unwrap()
        .replace("\"hi\"", "\"ho\"");
    std::fs::write(&log, edited).unwrap();
    tack(&ws)
        .arg("replay")
        .arg(&log)
        .assert()
        .code(4)
        .stderr(contains("fails verification"));
}

#[test]
fn a_serve_given_no_call_leaves_no_log() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let log = log_in(&dir, "serve");
    // A client that starts the session, asks nothing, and leaves.
    let session = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "",
    ]
    .join("\n");
    tack(&ws)
        .args(["mcp", "serve", "--log"])
        .arg(&log)
        .write_stdin(session)
        .assert()
        .success();
    assert!(!log.exists(), "an empty log was left behind");
    // One that leaves before starting it.
    tack(&ws)
        .args(["mcp", "serve", "--log"])
        .arg(&log)
        .write_stdin("")
        .assert()
        .code(1);
    assert!(!log.exists(), "an empty log was left behind");
}

/// SIGTERM ends `tack run` even while it is blocked writing to a stdout
/// that nobody reads (a real pipe whose reader never reads).
#[test]
fn sigterm_ends_a_run_blocked_on_a_full_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let script = dir.path().join("script.json");
    // An answer far larger than a pipe's buffer.
    let answer = "x".repeat(4 << 20);
    std::fs::write(
        &script,
        serde_json::json!({"turns": [{"text": answer}]}).to_string(),
    )
    .unwrap();
    let log = log_in(&dir, "blocked");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tack"))
        .current_dir(&ws)
        .env("XDG_STATE_HOME", test_state_home())
        .args(["run", "talk", "--model"])
        .arg(format!("script:{}", script.display()))
        .arg("--log")
        .arg(&log)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Held, never read.
    let _unread = child.stdout.take().unwrap();
    // The answer is logged before it is printed: once it is in the log,
    // the print is under way, and it cannot finish.
    let deadline = Instant::now() + Duration::from_secs(60);
    while of_type_if_any(&log, "assistant").is_empty() {
        assert!(Instant::now() < deadline, "the answer was never logged");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert!(child.try_wait().unwrap().is_none(), "it ended by itself");
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    // A guard against hanging the test run, not a timing assertion.
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tack did not end after SIGTERM while its stdout was blocked");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(143));
}

/// The records of one type, none while the log does not exist yet or its
/// last line is still being written.
fn of_type_if_any(log: &Path, kind: &str) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["type"] == kind)
        .collect()
}

/// A run stopped while its MCP servers start leaves no log: the servers
/// start before the log is created.
#[test]
fn a_run_stopped_while_mcp_servers_start_leaves_no_log() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let pid_file = dir.path().join("server.pid");
    // A server that starts and never answers.
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"mute": {
            "command": "sh",
            "args": ["-c", format!("echo $$ > '{}'; exec sleep 60", pid_file.display())]
        }}})
        .to_string(),
    )
    .unwrap();
    let log = log_in(&dir, "stopped");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tack"))
        .current_dir(&ws)
        .env("XDG_STATE_HOME", test_state_home())
        .args(["run", "hi", "--mcp-config"])
        .arg(&config)
        .arg("--log")
        .arg(&log)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let server = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
        {
            break nix::unistd::Pid::from_raw(pid);
        }
        assert!(Instant::now() < deadline, "the MCP server never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = child.wait().unwrap();
    let _ = nix::sys::signal::kill(server, nix::sys::signal::Signal::SIGKILL);
    assert!(!status.success());
    assert!(
        !log.exists(),
        "a log was left: {:?}",
        std::fs::metadata(&log)
    );
}
