//! `PermissionDenied`, `PostToolBatch` and `StopFailure` hooks through the
//! real binary: real shell scripts in a `--settings` file, a scripted model
//! (or a local HTTP endpoint that refuses), and what each script read on
//! stdin and what its answer changed.

use serde_json::{Value, json};

use super::hooks::{Case, call, hook};
use super::*;

/// What a recording script wrote: one JSON object per line, one per run.
fn seen(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A script that appends its stdin (one line) to `seen` and then runs `then`.
fn recorder(case: &Case, name: &str, seen: &Path, then: &str) -> String {
    case.script(
        name,
        &format!(
            "#!/bin/sh\n{{ cat; echo; }} >> '{}'\n{then}\n",
            seen.display()
        ),
    )
}

/// Where the first record of `kind` is in the log (panics if none).
fn position(log: &Path, kind: &str) -> usize {
    records(log)
        .iter()
        .position(|r| r["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} record"))
}

#[test]
fn permission_denied_hears_a_call_no_one_could_approve_and_retry_reaches_the_model() {
    let case = Case::new();
    let seen_at = case.dir.path().join("seen.jsonl");
    let script = recorder(
        &case,
        "denied.sh",
        &seen_at,
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": true}}'"#,
    );
    let settings = case.settings("s.json", &hook("PermissionDenied", "Bash", &script));
    // Mode `ask` without a terminal: the `bash` call needs approval and no
    // one can be asked, so it is denied in the user's place.
    case.run_in_mode(
        "ask",
        &json!([call("bash", json!({"command": "echo hi"})), {"text": "ok"}]),
        &[&settings],
    )
    .success();
    let results = case.results();
    assert_eq!(results[0]["error"]["code"], "DENIED", "{results:?}");
    let seen = seen(&seen_at);
    assert_eq!(seen.len(), 1, "{seen:?}");
    let input = &seen[0];
    assert_eq!(input["hook_event_name"], "PermissionDenied");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tool_input"]["command"], "echo hi");
    assert_eq!(input["tool_use_id"], "c1");
    assert_eq!(input["permission_mode"], "default");
    assert!(
        input["reason"]
            .as_str()
            .is_some_and(|r| r.contains("no approver is available")),
        "{input}"
    );
    assert_eq!(input["reason"], results[0]["error"]["message"], "{input}");
    assert!(input["session_id"].is_string() && input["cwd"].is_string());
    // `retry: true`: the model reads, after the denial, that it may retry.
    let contexts = of_type(&case.log, "context/deferred");
    assert_eq!(contexts.len(), 1, "{contexts:?}");
    assert_eq!(contexts[0]["call_id"], "c1");
    let text = contexts[0]["context"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("may retry the denied `Bash` call c1"),
        "{text}"
    );
}

#[test]
fn permission_denied_matches_the_tool_name_and_its_exit_2_changes_nothing() {
    let case = Case::new();
    let bash_seen = case.dir.path().join("bash.jsonl");
    let write_seen = case.dir.path().join("write.jsonl");
    let bash = recorder(&case, "bash.sh", &bash_seen, "echo 'let it go' >&2; exit 2");
    let write = recorder(
        &case,
        "write.sh",
        &write_seen,
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": true}}'"#,
    );
    let settings = case.settings(
        "s.json",
        &json!({"hooks": {"PermissionDenied": [
            {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": write}]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": bash}]}
        ]}}),
    );
    case.run_in_mode(
        "ask",
        &json!([call("bash", json!({"command": "echo hi"})), {"text": "ok"}]),
        &[&settings],
    )
    .success();
    assert_eq!(case.results()[0]["error"]["code"], "DENIED");
    assert_eq!(seen(&bash_seen).len(), 1, "the Bash group runs");
    assert!(
        seen(&write_seen).is_empty(),
        "the Write|Edit group does not"
    );
    // Exit 2 neither undoes the denial nor says anything to the model: it
    // is reported as a warning and ignored.
    assert!(of_type(&case.log, "context/deferred").is_empty());
    let reports = of_type(&case.log, "hook/report");
    assert!(
        reports.iter().any(|r| r["hook"] == "PermissionDenied"
            && r["blocked"] == false
            && r["message"]
                .as_str()
                .is_some_and(|m| m.contains("blocks nothing") && m.contains("let it go"))),
        "{reports:?}"
    );
}

#[test]
fn permission_denied_does_not_run_for_a_deny_rule_or_a_pre_tool_use_hook() {
    // As in Claude Code: a rule's or a hook's denial is not one made in
    // the user's place.
    let case = Case::new();
    let seen_at = case.dir.path().join("seen.jsonl");
    let script = recorder(&case, "denied.sh", &seen_at, "");
    let mut settings = hook("PermissionDenied", "", &script);
    settings["permissions"] = json!({"deny": ["Bash(rm:*)"]});
    settings["hooks"]["PreToolUse"] = json!([{"matcher": "Write", "hooks": [{"type": "command", "command": "echo no >&2; exit 2"}]}]);
    let settings = case.settings("s.json", &settings);
    case.run(
        &json!([
            {"tool_calls": [
                {"id": "c1", "name": "bash", "arguments": json!({"command": "rm x"}).to_string()},
                {"id": "c2", "name": "write_file", "arguments": json!({"path": "a", "content": "x"}).to_string()}
            ]},
            {"text": "ok"}
        ]),
        &[&settings],
    )
    .success();
    let results = case.results();
    assert_eq!(results[0]["error"]["code"], "DENIED", "{results:?}");
    assert_eq!(results[1]["error"]["code"], "DENIED", "{results:?}");
    assert!(seen(&seen_at).is_empty());
}

#[test]
fn post_tool_batch_gets_the_whole_batch_once_and_its_context_comes_before_the_next_model_call() {
    let case = Case::new();
    std::fs::write(case.ws.join("notes.txt"), "remember the milk\n").unwrap();
    let seen_at = case.dir.path().join("seen.jsonl");
    let script = recorder(
        &case,
        "batch.sh",
        &seen_at,
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PostToolBatch", "additionalContext": "Run the tests before you finish."}}'"#,
    );
    // A matcher means nothing on PostToolBatch (as in Claude Code): warned
    // about, and the hooks run for every batch.
    let settings = case.settings("s.json", &hook("PostToolBatch", "NoSuchTool", &script));
    case.run(
        &json!([
            {"tool_calls": [
                {"id": "c1", "name": "bash", "arguments": json!({"command": "echo one"}).to_string()},
                {"id": "c2", "name": "read_file", "arguments": json!({"path": "notes.txt"}).to_string()}
            ]},
            {"text": "ok"}
        ]),
        &[&settings],
    )
    .success()
    .stderr(predicates::str::contains(
        "PostToolBatch has no matcher in Claude Code",
    ));
    let seen = seen(&seen_at);
    assert_eq!(seen.len(), 1, "once for the batch, not per call: {seen:?}");
    let input = &seen[0];
    assert_eq!(input["hook_event_name"], "PostToolBatch");
    let calls = input["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{input}");
    assert_eq!(calls[0]["tool_name"], "Bash");
    assert_eq!(calls[0]["tool_input"]["command"], "echo one");
    assert_eq!(calls[0]["tool_use_id"], "c1");
    assert_eq!(calls[1]["tool_name"], "Read");
    assert_eq!(calls[1]["tool_use_id"], "c2");
    let path = calls[1]["tool_input"]["file_path"].as_str().unwrap();
    assert!(
        path.starts_with('/') && path.ends_with("/notes.txt"),
        "{input}"
    );
    // `tool_response` is the text the model reads as the result.
    let results = case.results();
    for (call, result) in calls.iter().zip(&results) {
        assert_eq!(
            call["tool_response"], result["content"][0]["text"],
            "{call} {result}"
        );
    }
    assert!(
        calls[1]["tool_response"]
            .as_str()
            .unwrap()
            .contains("remember the milk")
    );
    // The context follows the results and comes before the model's answer.
    let contexts = of_type(&case.log, "context/hook");
    assert_eq!(contexts.len(), 1, "{contexts:?}");
    assert_eq!(contexts[0]["hook"], "PostToolBatch");
    assert_eq!(
        contexts[0]["context"]["content"][0]["text"],
        "Run the tests before you finish."
    );
    let log = records(&case.log);
    let last_result = log
        .iter()
        .rposition(|r| r["type"] == "tool/result")
        .unwrap();
    let context = position(&case.log, "context/hook");
    assert!(last_result < context && context < position(&case.log, "assistant"));
}

#[test]
fn post_tool_batch_exit_2_or_block_stops_the_agent_before_the_model_is_asked_again() {
    for (then, reason) in [
        (
            "echo 'Review the diff first.' >&2; exit 2",
            "Review the diff first.",
        ),
        (
            r#"echo '{"decision": "block", "reason": "The build is red."}'"#,
            "The build is red.",
        ),
        (
            r#"echo '{"continue": false, "stopReason": "Out of budget."}'"#,
            "Out of budget.",
        ),
    ] {
        let case = Case::new();
        let seen_at = case.dir.path().join("seen.jsonl");
        let script = recorder(&case, "batch.sh", &seen_at, then);
        let settings = case.settings("s.json", &hook("PostToolBatch", "", &script));
        case.run(
            &json!([
                call("bash", json!({"command": "echo hi"})),
                {"text": "the model was asked again"}
            ]),
            &[&settings],
        )
        .success();
        assert_eq!(seen(&seen_at).len(), 1, "{then}");
        assert!(
            of_type(&case.log, "assistant").is_empty(),
            "{then}: the model must not be asked again"
        );
        let end = of_type(&case.log, "turn/end");
        assert_eq!(end[0]["reason"], "concluded", "{then}: {end:?}");
        // The reason stays in the conversation for when it goes on.
        let contexts = of_type(&case.log, "context/hook");
        assert_eq!(contexts.len(), 1, "{then}: {contexts:?}");
        assert_eq!(contexts[0]["hook"], "PostToolBatch");
        assert_eq!(contexts[0]["context"]["content"][0]["text"], reason);
        let reports = of_type(&case.log, "hook/report");
        assert!(
            reports
                .iter()
                .any(|r| r["hook"] == "PostToolBatch" && r["blocked"] == true),
            "{then}: {reports:?}"
        );
    }
}

#[test]
fn stop_failure_gets_the_model_error_and_its_matcher_selects_the_kind() {
    let case = Case::new();
    let auth_seen = case.dir.path().join("auth.jsonl");
    let rate_seen = case.dir.path().join("rate.jsonl");
    let stop_seen = case.dir.path().join("stop.jsonl");
    // Exit 2 and output change nothing on StopFailure.
    let auth = recorder(
        &case,
        "auth.sh",
        &auth_seen,
        r#"echo '{"decision": "block", "reason": "x", "continue": false}'; echo 'retry!' >&2; exit 2"#,
    );
    let rate = recorder(&case, "rate.sh", &rate_seen, "");
    let stop = recorder(&case, "stop.sh", &stop_seen, "");
    let settings = case.settings(
        "s.json",
        &json!({"hooks": {
            "StopFailure": [
                {"matcher": "rate_limit", "hooks": [{"type": "command", "command": rate}]},
                {"matcher": "authentication_failed", "hooks": [{"type": "command", "command": auth}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": stop}]}]
        }}),
    );
    let body = r#"{"error": {"message": "invalid x-api-key"}}"#;
    let refused = format!(
        "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let (base, _) = super::models::serve(vec![refused]);
    let out = tack(&case.ws)
        .env("OPENAI_BASE_URL", format!("{base}/v1"))
        .env("OPENAI_API_KEY", "sk-wrong")
        .args(["run", "hi", "-m", "openai:m", "--settings"])
        .arg(&settings)
        .arg("--log")
        .arg(&case.log)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(1);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("HTTP 401"), "{err}");
    let seen = seen(&auth_seen);
    assert_eq!(seen.len(), 1, "{err}");
    let input = &seen[0];
    assert_eq!(input["hook_event_name"], "StopFailure");
    assert_eq!(input["error"], "authentication_failed");
    assert!(
        input["error_details"]
            .as_str()
            .is_some_and(|d| d.starts_with("401 ") && d.contains("invalid x-api-key")),
        "{input}"
    );
    assert!(
        input["last_assistant_message"]
            .as_str()
            .is_some_and(|m| m.contains("HTTP 401")),
        "{input}"
    );
    assert!(input["session_id"].is_string() && input["transcript_path"].is_string());
    assert!(
        seen_is_empty(&rate_seen),
        "the rate_limit group must not run"
    );
    assert!(
        seen_is_empty(&stop_seen),
        "StopFailure runs instead of Stop"
    );
    // Its exit 2 is reported as a warning and blocks nothing; its JSON is
    // not read (no stop reported).
    let reports = of_type(&case.log, "hook/report");
    assert!(
        reports
            .iter()
            .all(|r| r["hook"] != "StopFailure" || r["blocked"] == false),
        "{reports:?}"
    );
    assert!(
        reports.iter().any(|r| r["hook"] == "StopFailure"
            && r["message"]
                .as_str()
                .is_some_and(|m| m.contains("blocks nothing"))),
        "{reports:?}"
    );
}

fn seen_is_empty(path: &Path) -> bool {
    seen(path).is_empty()
}
