//! Permission modes, approvals and timeouts.

use super::*;

#[test]
fn read_only_denies_a_command() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let log = log_in(&dir, "ro");
    let out = stdout_of(
        tack(&ws)
            .args(["run", "--mode", "read-only", "run touch pwned", "--log"])
            .arg(&log),
    );
    assert!(out.contains("[tool:bash] -> ERR DENIED:"), "{out}");
    assert!(out.contains("read-only"), "{out}");
    assert!(!ws.join("pwned").exists());
    let result = &of_type(&log, "tool/result")[0];
    assert_eq!(result["error"]["code"], "DENIED");
    assert!(result["provenance"].is_object(), "{result}");
}

#[test]
fn ask_without_a_terminal_says_no_approver_is_available() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let log = log_in(&dir, "ask");
    let out = stdout_of(
        tack(&ws)
            .args(["run", "run touch pwned", "--log"])
            .arg(&log),
    );
    assert!(out.contains("no approver is available"), "{out}");
    assert!(out.contains("--mode allow-all"), "{out}");
    assert!(!ws.join("pwned").exists());
    let requests = of_type(&log, "approval/request");
    assert_eq!(requests[0]["request"]["tool"], "bash");
    let outcomes = of_type(&log, "approval/outcome");
    assert_eq!(outcomes[0]["outcome"]["outcome"], "unavailable");
    // Order: call, request, outcome, result.
    let types: Vec<String> = records(&log)
        .iter()
        .map(|r| r["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        types,
        [
            "session/start",
            "user",
            "tool/call",
            "approval/request",
            "approval/outcome",
            "tool/result",
            "assistant",
            "turn/end"
        ]
    );
}

#[test]
fn allow_all_runs_commands() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let out = stdout_of(tack(&ws).args(["run", "--mode", "allow-all", "运行 echo hello"]));
    assert!(out.contains("[tool:bash] -> ok"), "{out}");
    assert!(out.contains("hello"), "{out}");
}

#[test]
fn a_hung_command_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let log = log_in(&dir, "timeout");
    let out = stdout_of(
        tack(&ws)
            .args([
                "run",
                "--mode",
                "allow-all",
                "--tool-timeout",
                "0.3",
                "run sleep 5",
                "--log",
            ])
            .arg(&log),
    );
    assert!(out.contains("[tool:bash] -> ERR TIMEOUT:"), "{out}");
    assert_eq!(of_type(&log, "tool/result")[0]["error"]["code"], "TIMEOUT");
}

#[test]
fn a_read_only_sandbox_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let out = stdout_of(tack(&ws).args([
        "run",
        "--mode",
        "allow-all",
        "--sandbox",
        "read-only",
        "write a.txt: hi",
    ]));
    assert!(out.contains("[tool:write_file] -> ERR"), "{out}");
    assert!(!ws.join("a.txt").exists());
}
