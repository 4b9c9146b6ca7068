//! Signals (real ones, to the real binary): SIGINT (Ctrl-C), SIGTERM and
//! SIGHUP cancel the turn, the running command ends `CANCELLED`, the log
//! records it, and the exit code is 128 + the signal's number.

use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::*;

/// Waits until `log` holds a record of `kind`, or panics after 30 s.
fn wait_for(log: &Path, kind: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if log.exists() && !of_type(log, kind).is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no `{kind}` record in {}", log.display());
}

#[test]
fn ctrl_c_cancels_the_running_turn_and_is_logged() {
    cancels_the_running_turn(Signal::SIGINT, 130, "Ctrl-C");
}

#[test]
fn sigterm_cancels_the_running_turn_and_is_logged() {
    cancels_the_running_turn(Signal::SIGTERM, 143, "SIGTERM");
}

#[test]
fn sighup_cancels_the_running_turn_and_is_logged() {
    cancels_the_running_turn(Signal::SIGHUP, 129, "SIGHUP");
}

fn cancels_the_running_turn(signal: Signal, code: i32, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        r#"{"turns": [
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": "{\"command\": \"sleep 30\"}"}]},
        {"text": "never asked"}
    ]}"#,
    )
    .unwrap();
    let log = log_in(&dir, "interrupt");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tack"))
        .current_dir(&ws)
        .env("XDG_STATE_HOME", test_state_home())
        .args(["run", "wait", "--mode", "allow-all", "--model"])
        .arg(format!("script:{}", script.display()))
        .arg("--log")
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&log, "tool/call");
    // Give the command a moment to start inside the sandbox.
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, signal).unwrap();
    let out = child.wait_with_output().unwrap();
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{stdout}\n{stderr}");
    assert!(
        took < Duration::from_secs(20),
        "the sleep was not waited out: {took:?}"
    );
    assert!(
        stderr.contains(&format!("{name}: cancelling the turn")),
        "{stderr}"
    );
    assert!(stdout.contains("[tool:bash] -> ERR CANCELLED"), "{stdout}");
    assert!(
        stdout.contains("[stopped] the turn was cancelled"),
        "{stdout}"
    );
    assert!(!stdout.contains("never asked"), "{stdout}");
    let results = of_type(&log, "tool/result");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["error"]["code"], "CANCELLED");
    let end = of_type(&log, "turn/end");
    assert_eq!(end[0]["reason"], "cancelled");
    // The log replays like the live run.
    let replay = stdout_of(tack(&ws).args(["replay"]).arg(&log));
    assert_eq!(replay, stdout);
}

/// `chat` goes on after a Ctrl-C, but SIGTERM ends the session once the
/// turn is cancelled, even with more input waiting.
#[test]
fn sigterm_ends_a_chat_after_cancelling_its_turn() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        r#"{"turns": [
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": "{\"command\": \"sleep 30\"}"}]},
        {"text": "never asked"}
    ]}"#,
    )
    .unwrap();
    let log = log_in(&dir, "chat-term");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tack"))
        .current_dir(&ws)
        .env("XDG_STATE_HOME", test_state_home())
        .args(["chat", "--mode", "allow-all", "--model"])
        .arg(format!("script:{}", script.display()))
        .arg("--log")
        .arg(&log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Two prompts; stdin stays open, so only the signal can end the chat.
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"wait\nlist dir .\n").unwrap();
    wait_for(&log, "tool/call");
    std::thread::sleep(Duration::from_millis(200));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, Signal::SIGTERM).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the chat went on after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    assert_eq!(status.code(), Some(143));
    assert_eq!(
        of_type(&log, "tool/result")[0]["error"]["code"],
        "CANCELLED"
    );
    assert_eq!(of_type(&log, "turn/end")[0]["reason"], "cancelled");
    assert_eq!(
        of_type(&log, "user").len(),
        1,
        "the second prompt never ran"
    );
}
