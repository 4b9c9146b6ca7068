//! Claude Code's hook features, one by one, as the table in
//! `docs/cookbook/hooks.md` says tack runs them.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tack_core::tool::ErrorCode;

use crate::harness::*;

/// A hook that appends `label` to `hook.log` in its working directory.
fn logs(label: &str) -> Value {
    json!({"type": "command", "command": format!("cat >/dev/null; echo {label} >> hook.log")})
}

fn logged(bed: &Bed) -> Vec<String> {
    let mut lines: Vec<String> = std::fs::read_to_string(bed.path().join("hook.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

fn clear(bed: &Bed) {
    let _ = std::fs::remove_file(bed.path().join("hook.log"));
}

#[tokio::test]
async fn every_matcher_form_selects_as_in_claude_code() {
    let groups: Vec<Value> = [
        ("exact", "Bash"),
        ("exact-other", "BashOutput"),
        ("case", "BASH"),
        ("pipe", "Edit|Write"),
        ("comma", "Edit, Write"),
        ("exact-part", "ash"),
        ("regex-anywhere", "as+h"),
        ("regex-prefix", "^Bas"),
        ("regex-anchored", "^Write$"),
        ("star", "*"),
        ("empty", ""),
        ("tack-name", "write_file"),
        ("invalid", "(Write"),
    ]
    .iter()
    .map(|(label, matcher)| json!({"matcher": matcher, "hooks": [logs(label)]}))
    .collect();
    let bed = Bed::new(&[], |_| json!({"hooks": {"PreToolUse": groups}}));
    bed.call("bash", json!({"command": "true"})).await;
    // `ash` has no regex character, so it is an exact name: it does not
    // match `Bash`. `as+h` and `^Bas` are regexes, found anywhere.
    assert_eq!(
        logged(&bed),
        ["empty", "exact", "regex-anywhere", "regex-prefix", "star"]
    );
    clear(&bed);
    bed.call("write_file", json!({"path": "a", "content": ""}))
        .await;
    assert_eq!(
        logged(&bed),
        [
            "comma",
            "empty",
            "pipe",
            "regex-anchored",
            "star",
            "tack-name"
        ]
    );
}

#[tokio::test]
async fn if_runs_a_handler_only_for_calls_its_rule_matches() {
    let bed = Bed::new(&[], |_| {
        let guarded = |label: &str, rule: &str| {
            let mut hook = logs(label);
            hook["if"] = json!(rule);
            hook
        };
        json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            guarded("push", "Bash(git push *)"),
            guarded("rm", "Bash(rm:*)"),
            guarded("ts", "Edit(*.ts)"),
            guarded("env", "Write(./.env)"),
            guarded("any-bash", "Bash"),
        ]}]}})
    });
    for (tool, args, want) in [
        (
            "bash",
            json!({"command": "git push origin"}),
            vec!["any-bash", "push"],
        ),
        (
            "bash",
            json!({"command": "cd x && git push"}),
            vec!["any-bash", "push"],
        ),
        ("bash", json!({"command": "git status"}), vec!["any-bash"]),
        (
            "bash",
            json!({"command": "rm -rf x"}),
            vec!["any-bash", "rm"],
        ),
        ("bash", json!({"command": "rmdir x"}), vec!["any-bash"]),
        (
            "edit_file",
            json!({"path": "src/a.ts", "old_string": "a", "new_string": "b"}),
            vec!["ts"],
        ),
        (
            "write_file",
            json!({"path": "b.ts", "content": ""}),
            vec!["ts"],
        ),
        (
            "write_file",
            json!({"path": ".env", "content": ""}),
            vec!["env"],
        ),
        (
            "write_file",
            json!({"path": "sub/.env", "content": ""}),
            vec![],
        ),
    ] {
        clear(&bed);
        bed.call(tool, args.clone()).await;
        assert_eq!(logged(&bed), want, "{tool} {args}");
    }
}

#[tokio::test]
async fn args_run_the_program_without_a_shell() {
    let bed = Bed::new(
        &[(
            "deny.sh",
            "#!/bin/sh\ncat >/dev/null\necho \"denied: $1\" >&2\nexit 2\n",
        )],
        |d| {
            json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
                "type": "command",
                "command": format!("{}/deny.sh", d.display()),
                // One argument with spaces and shell characters, untouched.
                "args": ["a; b $(c) ${CLAUDE_PROJECT_DIR}"]
            }]}]}})
        },
    );
    let out = bed.call("bash", json!({"command": "true"})).await;
    let message = out.message().unwrap();
    assert_eq!(
        message,
        format!("denied: a; b $(c) {}", bed.path().display()),
        "the project directory is filled in, nothing else is expanded"
    );
}

#[tokio::test]
async fn shell_once_and_async() {
    let bed = Bed::new(&[], |_| {
        json!({"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "shell": "bash", "command": "cat >/dev/null; [[ -n $BASH_VERSION ]] && echo bash >> hook.log"},
            {"type": "command", "once": true, "command": "cat >/dev/null; echo once >> hook.log"},
            {"type": "command", "async": true, "command": "cat >/dev/null; sleep 2; echo async >> hook.log; exit 2"}
        ]}]}})
    });
    let first = bed.call("bash", json!({"command": "true"})).await;
    assert!(first.is_success(), "an async hook cannot block: {first:?}");
    assert!(
        !logged(&bed).contains(&"async".to_owned()),
        "the call did not wait for the async hook"
    );
    bed.call("bash", json!({"command": "true"})).await;
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let log = logged(&bed);
    assert_eq!(log.iter().filter(|l| *l == "bash").count(), 2, "{log:?}");
    assert_eq!(log.iter().filter(|l| *l == "once").count(), 1, "{log:?}");
    assert_eq!(log.iter().filter(|l| *l == "async").count(), 2, "{log:?}");
}

#[tokio::test]
async fn a_hook_tack_cannot_run_makes_its_calls_ask_instead_of_running_unchecked() {
    let bed = Bed::new(&[], |_| {
        json!({"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [
            {"type": "prompt", "prompt": "Is this write safe? $ARGUMENTS"}
        ]}]}})
    });
    assert!(
        bed.hooks().config().warnings()[0].contains("ask for your approval"),
        "{:?}",
        bed.hooks().config().warnings()
    );
    let write = bed
        .call("write_file", json!({"path": "a", "content": ""}))
        .await;
    assert_eq!(write.error_code(), Some(ErrorCode::Denied), "{write:?}");
    // It went to the approver (here there is none, so it is denied).
    assert_eq!(
        write.decided_at(),
        Some(tack_test::Stage::Approval),
        "{write:?}"
    );
    assert!(!write.body_ran());
    let bash = bed.call("bash", json!({"command": "true"})).await;
    assert!(bash.is_success(), "other tools are not affected: {bash:?}");
}

#[tokio::test]
async fn output_fields_additional_context_continue_defer_system_message_suppress_output() {
    let answer = |json: Value| json!({"type": "command", "command": format!("cat >/dev/null; echo '{json}'")});
    let bed = Bed::new(&[], |_| {
        json!({"hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [answer(json!({
                    "suppressOutput": true,
                    "systemMessage": "checked by the guard",
                    "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "prefer rg"}
                }))]},
                {"matcher": "Write", "hooks": [answer(json!({"continue": false, "stopReason": "stop here"}))]},
                {"matcher": "Edit", "hooks": [answer(json!({
                    "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "defer", "permissionDecisionReason": "later"}
                }))]}
            ]
        }})
    });
    let stops = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = stops.clone();
    bed.hooks().set_turn_stopper(Arc::new(move |why: &str| {
        sink.lock().unwrap().push(why.to_owned())
    }));

    let bash = bed.call("bash", json!({"command": "true"})).await;
    assert!(bash.is_success());
    let context: Vec<String> = bash
        .outcome()
        .deferred_context
        .iter()
        .map(|c| c.text())
        .collect();
    assert_eq!(context, ["prefer rg"]);
    assert!(
        bed.reports()
            .iter()
            .any(|r| r.contains("checked by the guard")),
        "{:?}",
        bed.reports()
    );
    assert!(stops.lock().unwrap().is_empty());

    let write = bed
        .call("write_file", json!({"path": "a", "content": ""}))
        .await;
    assert_eq!(write.error_code(), Some(ErrorCode::Denied));
    assert!(write.message().unwrap().contains("stop here"));
    assert_eq!(*stops.lock().unwrap(), ["stop here"]);

    let edit = bed
        .call(
            "edit_file",
            json!({"path": "a", "old_string": "x", "new_string": "y"}),
        )
        .await;
    assert_eq!(edit.error_code(), Some(ErrorCode::Denied));
    assert!(edit.message().unwrap().contains("deferred"), "{edit:?}");
    assert_eq!(stops.lock().unwrap().len(), 2);
    assert_eq!(bed.runs(), 1, "only the bash call ran");
}
