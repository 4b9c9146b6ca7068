//! A result a `PostToolUse` hook withholds stays out of the session log file
//! and its replay, called directly or from a `run_code` program. (A hook's
//! `"decision": "block"` on `PostToolUse` is feedback, as in Claude Code: the
//! model saw the result, so the log keeps it. A hook set to fail closed that
//! fails withholds the result.)

use serde_json::json;

use super::*;

const SECRET: &str = "sk-live-9f8e7d6c5b4a";

/// Runs `turns` with a `PostToolUse` hook that withholds every `Read`
/// result; the log file's text and `tack replay`'s output.
fn run_withheld(turns: serde_json::Value, presentation: &str) -> (String, String) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("secret.txt"), format!("API_KEY={SECRET}\n")).unwrap();
    let hook = dir.path().join("withhold.sh");
    std::fs::write(
        &hook,
        "#!/bin/sh\ncat >/dev/null\necho 'secrets stay out of the transcript' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let settings = dir.path().join("settings.json");
    let hooks = json!({"hooks": {"PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": hook.display().to_string(), "failClosed": true}]}]}});
    std::fs::write(&settings, hooks.to_string()).unwrap();
    let script = dir.path().join("model.json");
    std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
    let log = log_in(&dir, "session");
    tack(&ws)
        .args([
            "run",
            "go",
            "--mode",
            "allow-all",
            "--presentation",
            presentation,
        ])
        .arg("--model")
        .arg(format!("script:{}", script.display()))
        .arg("--settings")
        .arg(&settings)
        .arg("--log")
        .arg(&log)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    let text = std::fs::read_to_string(&log).unwrap();
    let replayed = stdout_of(tack(&ws).arg("replay").arg(&log));
    (text, replayed)
}

#[test]
fn a_withheld_result_is_absent_from_the_log_and_the_replay() {
    let (log, replayed) = run_withheld(
        json!([
            {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": json!({"path": "secret.txt"}).to_string()}]},
            {"text": "ok"}
        ]),
        "native",
    );
    assert!(log.contains("fail closed"), "{log}");
    assert!(!log.contains(SECRET), "the secret reached the log:\n{log}");
    assert!(!replayed.contains(SECRET), "{replayed}");
}

#[test]
fn a_withheld_sub_call_result_is_absent_from_the_log_and_the_replay() {
    let code = "try { const r = await tools.read_file({path: 'secret.txt'}); console.log(JSON.stringify(r)); return r; } catch (e) { return e.code + ': ' + e.message; }";
    let (log, replayed) = run_withheld(
        json!([
            {"tool_calls": [{"id": "c1", "name": "run_code", "arguments": json!({"code": code}).to_string()}]},
            {"text": "ok"}
        ]),
        "code",
    );
    assert!(log.contains("fail closed"), "{log}");
    assert!(!log.contains(SECRET), "the secret reached the log:\n{log}");
    assert!(!replayed.contains(SECRET), "{replayed}");
}
