//! Ctrl-C (a real SIGINT to the real binary): the turn is cancelled, the
//! running command ends `CANCELLED`, the log records it, exit code 130.

use std::process::Stdio;
use std::time::{Duration, Instant};

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
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(
        took < Duration::from_secs(20),
        "the sleep was not waited out: {took:?}"
    );
    assert!(stderr.contains("cancelling the turn"), "{stderr}");
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
