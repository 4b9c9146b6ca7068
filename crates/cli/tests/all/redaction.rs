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

/// A `PostToolUse` hook that replaces an MCP tool's output
/// (`updatedMCPToolOutput`, as in Claude Code): the model sees the
/// replacement, and neither the log file nor its replay holds what the tool
/// returned.
#[test]
fn an_mcp_result_a_hook_replaced_is_absent_from_the_log_and_the_replay() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("keys.txt"), format!("API_KEY={SECRET}\n")).unwrap();
    let ws_arg = ws.display().to_string();
    let Some(fs) = super::mcp::server_json(
        "mcp-server-filesystem",
        "an_mcp_result_a_hook_replaced",
        &[&ws_arg],
    ) else {
        return;
    };
    let servers = dir.path().join("servers.json");
    std::fs::write(&servers, json!({"mcpServers": {"files": fs}}).to_string()).unwrap();
    let hook = dir.path().join("redact.sh");
    std::fs::write(
        &hook,
        "#!/bin/sh\ncat >/dev/null\necho '{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\", \"updatedMCPToolOutput\": \"[redacted by hook]\"}}'\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let settings = dir.path().join("settings.json");
    std::fs::write(
        &settings,
        json!({"hooks": {"PostToolUse": [{"matcher": "mcp__files__.*", "hooks": [{"type": "command", "command": hook.display().to_string()}]}]}}).to_string(),
    )
    .unwrap();
    let path = ws.join("keys.txt").display().to_string();
    let script = dir.path().join("model.json");
    std::fs::write(
        &script,
        json!({"turns": [
            {"tool_calls": [{"id": "c1", "name": "mcp__files__read_text_file", "arguments": json!({"path": path}).to_string()}]},
            {"text": "ok"}
        ]})
        .to_string(),
    )
    .unwrap();
    let log = log_in(&dir, "mcp-redacted");
    tack(&ws)
        .args(["run", "go", "--mode", "allow-all", "--model"])
        .arg(format!("script:{}", script.display()))
        .arg("--settings")
        .arg(&settings)
        .arg("--mcp-config")
        .arg(&servers)
        .arg("--log")
        .arg(&log)
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success();
    let results = of_type(&log, "tool/result");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["status"], "ok", "{:?}", results[0]);
    assert_eq!(
        results[0]["content"][0]["text"], "[redacted by hook]",
        "{:?}",
        results[0]
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        !text.contains(SECRET),
        "the secret reached the log:\n{text}"
    );
    let replayed = stdout_of(tack(&ws).arg("replay").arg(&log));
    assert!(!replayed.contains(SECRET), "{replayed}");
    assert!(
        replayed.contains("[tool:mcp__files__read_text_file] -> ok"),
        "{replayed}"
    );
}
