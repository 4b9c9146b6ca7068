//! The agent events: UserPromptSubmit, Stop, SessionStart, SessionEnd,
//! Notification.

use serde_json::json;

use crate::harness::*;

#[tokio::test]
async fn user_prompt_submit_adds_context_or_blocks() {
    let script = r#"#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
if "password" in data["prompt"]:
    print(json.dumps({"decision": "block", "reason": "prompts must not contain passwords"}))
else:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
        "additionalContext": "The current sprint ends Friday."}}))
"#;
    if !python() {
        return;
    }
    let bed = Bed::new(&[("prompt.py", script)], |d| {
        one("UserPromptSubmit", "", format!("{}/prompt.py", d.display()))
    });
    let check = bed.hooks().user_prompt_submit("plan the work").await;
    assert_eq!(check.blocked, None);
    assert_eq!(check.context, ["The current sprint ends Friday."]);
    let check = bed
        .hooks()
        .user_prompt_submit("my password is hunter2")
        .await;
    assert_eq!(
        check.blocked.as_deref(),
        Some("prompts must not contain passwords")
    );
    // Plain text on exit 0 is context too; exit 2 blocks with stderr.
    let bed = Bed::new(&[], |_| {
        one("UserPromptSubmit", "", "echo plain context".into())
    });
    assert_eq!(
        bed.hooks().user_prompt_submit("x").await.context,
        ["plain context"]
    );
    let bed = Bed::new(&[], |_| {
        one("UserPromptSubmit", "", "echo nope >&2; exit 2".into())
    });
    assert_eq!(
        bed.hooks().user_prompt_submit("x").await.blocked.as_deref(),
        Some("nope")
    );
}

#[tokio::test]
async fn a_stop_hook_keeps_the_agent_going_once() {
    let script = r#"#!/bin/sh
input=$(cat)
case "$input" in
  *'"stop_hook_active":true'*) exit 0 ;;
esac
echo '{"decision": "block", "reason": "Run the tests before you finish."}'
"#;
    let bed = Bed::new(&[("stop.sh", script)], |d| {
        one("Stop", "", format!("{}/stop.sh", d.display()))
    });
    assert_eq!(
        bed.hooks().stop(false).await.as_deref(),
        Some("Run the tests before you finish.")
    );
    assert_eq!(bed.hooks().stop(true).await, None);
}

#[tokio::test]
async fn session_start_end_and_notification_follow_the_protocol() {
    let bed = Bed::new(&[], |_| {
        json!({"hooks": {
            "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo 'branch: main'"}]}],
            "SessionEnd": [{"hooks": [{"type": "command", "command": "cat > \"$TACK_PROJECT_DIR/end.json\""}]}],
            "Notification": [{"hooks": [{"type": "command", "command": "cat > \"$TACK_PROJECT_DIR/note.json\""}]}]
        }})
    });
    assert_eq!(bed.hooks().session_start("startup").await, ["branch: main"]);
    assert!(
        bed.hooks().session_start("resume").await.is_empty(),
        "the matcher is on the source"
    );
    bed.hooks().session_end("exit").await;
    let end: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bed.path().join("end.json")).unwrap())
            .unwrap();
    assert_eq!(end["hook_event_name"], "SessionEnd");
    assert_eq!(end["reason"], "exit");
    bed.hooks()
        .notification("permission_prompt", "tack needs your approval to run bash")
        .await;
    let note: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bed.path().join("note.json")).unwrap())
            .unwrap();
    assert_eq!(note["message"], "tack needs your approval to run bash");
}

#[tokio::test]
async fn a_command_the_pre_run_check_refuses_does_not_run_and_blocks() {
    let bed = Bed::new(&[], |d| {
        one("UserPromptSubmit", "", format!("touch {}/ran", d.display()))
    });
    let refusing =
        bed.hooks()
            .clone()
            .with_pre_run(std::sync::Arc::new(|hook: &tack_hooks::HookCommand| {
                Err(format!("`{}` is not as reviewed", hook.command))
            }));
    let check = refusing.user_prompt_submit("x").await;
    let blocked = check.blocked.unwrap();
    assert!(
        blocked.contains("was not run") && blocked.contains("is not as reviewed"),
        "{blocked}"
    );
    assert!(!bed.path().join("ran").exists(), "the refused command ran");
    // A check that passes lets it run.
    let passing = bed
        .hooks()
        .clone()
        .with_pre_run(std::sync::Arc::new(|_: &tack_hooks::HookCommand| Ok(())));
    assert_eq!(passing.user_prompt_submit("x").await.blocked, None);
    assert!(bed.path().join("ran").exists());
}

#[tokio::test]
async fn a_permission_request_allow_carries_its_updated_input_and_rules() {
    let answer = r#"cat > /dev/null; echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow", "updatedInput": {"file_path": "'"$CLAUDE_PROJECT_DIR"'/notes/b.txt", "content": "x"}, "updatedPermissions": [{"type": "addRules", "behavior": "allow", "destination": "session", "rules": [{"toolName": "Write", "ruleContent": "notes/**"}, {"toolName": "Read"}]}, {"type": "setMode", "mode": "acceptEdits"}]}}}'"#;
    let bed = Bed::new(&[], |_| one("PermissionRequest", "Write", answer.into()));
    let got = bed
        .hooks()
        .permission_request(
            "write_file",
            &json!({"path": "a.txt", "content": "y"}),
            "c1",
        )
        .await;
    let Some(tack_hooks::PermissionAnswer::AllowUpdated { input, permissions }) = got else {
        panic!("{got:?}");
    };
    // Claude Code's fields, back in tack's (a path inside the workspace
    // becomes relative again).
    assert_eq!(input, Some(json!({"path": "notes/b.txt", "content": "x"})));
    let rules: Vec<(&str, &str)> = permissions
        .iter()
        .map(|p| (p.behavior.as_str(), p.rule.as_str()))
        .collect();
    assert_eq!(rules, [("allow", "Write(notes/**)"), ("allow", "Read")]);
    let warned = bed
        .reports
        .lock()
        .unwrap()
        .iter()
        .any(|r| r.message.contains("`setMode` is not applied"));
    assert!(warned);
    // A plain allow stays a plain allow.
    let bed = Bed::new(&[], |_| {
        one(
            "PermissionRequest",
            "",
            r#"cat > /dev/null; echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}'"#.into(),
        )
    });
    assert_eq!(
        bed.hooks()
            .permission_request("bash", &json!({"command": "ls"}), "c2")
            .await,
        Some(tack_hooks::PermissionAnswer::Allow)
    );
}
