//! Bad hooks and bad configuration: clear, reported outcomes; nothing hangs.

use serde_json::json;
use tack_core::tool::ErrorCode;
use tack_hooks::HooksConfig;
use tack_test::INVALID_REWRITE;

use crate::harness::*;

#[tokio::test]
async fn a_hanging_hook_is_killed_with_its_process_group_and_the_call_goes_on() {
    // The hook leaves a background sleeper in its group, then hangs.
    let script = r#"#!/bin/sh
sleep 300 &
echo $! > "$TACK_PROJECT_DIR/child.pid"
sleep 300
"#;
    let bed = Bed::new(&[("hang.sh", script)], |d| {
        json!({"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": format!("{}/hang.sh", d.display()), "timeout": 1}
        ]}]}})
    });
    let out = bed.call("bash", json!({"command": "ls"})).await;
    assert!(
        out.is_success(),
        "a timeout is a non-blocking error: {out:?}"
    );
    let reports = bed.reports();
    assert!(
        reports.iter().any(|r| r.contains("timed out after 1 s")),
        "{reports:?}"
    );
    let pid: i32 = std::fs::read_to_string(bed.path().join("child.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The background child was killed with the group (reaped by init soon).
    let mut gone = false;
    for _ in 0..50 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z ") {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(gone, "the hook's background process survived");
}

#[tokio::test]
async fn a_hanging_fail_closed_hook_denies() {
    let bed = Bed::new(&[], |_| {
        json!({"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": "sleep 300", "timeout": 0.5, "failClosed": true}
        ]}]}})
    });
    let out = bed.call("bash", json!({"command": "ls"})).await;
    let f = out.failure().unwrap();
    assert_eq!(f.code(), ErrorCode::Denied);
    assert!(f.message().contains("timed out"), "{}", f.message());
    assert_eq!(bed.runs(), 0);
}

#[tokio::test]
async fn other_exit_codes_are_non_blocking_unless_fail_closed() {
    let bed = Bed::new(&[], |_| {
        one("PreToolUse", "", "echo broken >&2; exit 1".into())
    });
    let out = bed.call("bash", json!({"command": "ls"})).await;
    assert!(out.is_success());
    let reports = bed.reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(
        reports[0].contains("failed with exit 1: broken"),
        "{reports:?}"
    );
    assert!(reports[0].contains("non-blocking"), "{reports:?}");

    let bed = Bed::new(&[], |_| {
        json!({"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": "exit 1", "failClosed": true}
        ]}]}})
    });
    let out = bed.call("bash", json!({"command": "ls"})).await;
    assert_eq!(out.failure().unwrap().code(), ErrorCode::Denied);
    assert_eq!(bed.runs(), 0);
}

#[tokio::test]
async fn garbage_output_is_reported_and_ignored() {
    let bed = Bed::new(&[], |_| {
        one("PreToolUse", "", "echo '{not json at all'".into())
    });
    let out = bed.call("bash", json!({"command": "ls"})).await;
    assert!(out.is_success());
    let reports = bed.reports();
    assert!(
        reports.iter().any(|r| r.contains("not a JSON object")),
        "{reports:?}"
    );
    // Plain text (not JSON) on a tool event is not an error.
    let bed = Bed::new(&[], |_| one("PreToolUse", "", "echo hello".into()));
    assert!(
        bed.call("bash", json!({"command": "ls"}))
            .await
            .is_success()
    );
}

#[tokio::test]
async fn huge_output_is_cut_and_nothing_blocks() {
    let bed = Bed::new(&[], |_| {
        one(
            "PreToolUse",
            "",
            "cat >/dev/null; head -c 20000000 /dev/zero | tr '\\0' a; echo x >&2".into(),
        )
    });
    let out = bed.call("bash", json!({"command": "ls"})).await;
    assert!(out.is_success(), "{out:?}");
    let reports = bed.reports();
    assert!(
        reports.iter().any(|r| r.contains("the rest was dropped")),
        "{reports:?}"
    );
}

#[tokio::test]
async fn a_missing_command_is_a_clear_non_blocking_error() {
    let bed = Bed::new(&[], |d| {
        one(
            "PreToolUse",
            "",
            format!("{}/does-not-exist.sh", d.display()),
        )
    });
    let out = bed.call("bash", json!({"command": "ls"})).await;
    assert!(out.is_success());
    let reports = bed.reports();
    assert!(
        reports.iter().any(|r| r.contains("exit 127")),
        "{reports:?}"
    );
}

#[tokio::test]
async fn an_updated_input_that_breaks_the_schema_fails_the_call_and_never_runs_it() {
    let script = r#"#!/bin/sh
cat >/dev/null
echo '{"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": 42}}}'
"#;
    let bed = Bed::new(&[("bad.sh", script)], |d| {
        one("PreToolUse", "Bash", format!("{}/bad.sh", d.display()))
    });
    let out = bed.call("bash", json!({"command": "ls"})).await;
    assert_eq!(bed.runs(), 0);
    let f = out.failure().unwrap();
    assert_eq!(f.code(), ErrorCode::Internal);
    assert_eq!(f.kind(), Some(INVALID_REWRITE));
    assert_eq!(f.pointer(), Some("/command"));
    assert!(f.message().contains("listener `hooks`"), "{}", f.message());
    assert_eq!(out.outcome().rewritten_arguments().unwrap()["command"], 42);
}

#[test]
fn bad_configuration_is_skipped_with_a_warning_naming_the_key_and_the_rest_is_used() {
    let good = json!({"type": "command", "command": "kept"});
    let cases = [
        (
            json!({"hooks": {"PreToolUze": [], "Stop": [{"hooks": [good]}]}}),
            "hooks.PreToolUze",
            "not an event tack knows",
        ),
        (
            json!({"hooks": {"PreToolUse": [{"matcher": "Bash(", "hooks": []}], "Stop": [{"hooks": [good]}]}}),
            "hooks.PreToolUse[0].matcher",
            "matches nothing",
        ),
        (
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command"}, good]}]}}),
            "hooks.Stop[0].hooks[0].command",
            "is missing",
        ),
        (
            json!({"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "x"}, good]}]}}),
            "hooks.Stop[0].hooks[0]",
            "cannot run a `prompt` hook",
        ),
        (
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "kept", "timeout": -1}]}]}}),
            "hooks.Stop[0].hooks[0].timeout",
            "the default 60 s is used",
        ),
        (
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "kept", "statusMessage": "x", "color": 1}]}]}}),
            "hooks.Stop[0].hooks[0].color",
            "not a key of a command hook",
        ),
        (
            json!({"hooks": {"SubagentStop": [{"hooks": [good]}], "Stop": [{"hooks": [good]}]}}),
            "hooks.SubagentStop",
            "tack has no such moment",
        ),
        (
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "kept", "if": "Bash(git *)"}]}]}}),
            "hooks.Stop[0].hooks[0].if",
            "tool events only",
        ),
        (
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "ps1", "shell": "powershell"}, good]}]}}),
            "hooks.Stop[0].hooks[0].shell",
            "the hook is skipped",
        ),
        (
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "kept", "asyncRewake": true}]}]}}),
            "hooks.Stop[0].hooks[0].asyncRewake",
            "does not wake an idle session",
        ),
        (
            json!({"hooks": {"Stop": [{"matcher": "x", "hooks": [good]}]}}),
            "hooks.Stop[0].matcher",
            "has no matcher in Claude Code",
        ),
        (
            json!({"hooks": {"PostToolBatch": [{"matcher": "Bash", "hooks": [good]}], "Stop": [{"hooks": [good]}]}}),
            "hooks.PostToolBatch[0].matcher",
            "PostToolBatch has no matcher in Claude Code; it is ignored and the hooks run for every PostToolBatch",
        ),
        (
            json!({"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://x"}, good]}], "PreCompact": []}}),
            "hooks.PreCompact",
            "tack has no such moment",
        ),
    ];
    for (settings, at, what) in cases {
        let config = HooksConfig::from_settings(&settings, None).unwrap();
        let warnings = config.warnings().join("\n");
        assert!(
            warnings.contains(&format!("`{at}`")) && warnings.contains(what),
            "{settings}: {warnings}"
        );
        let kept: Vec<&str> = config
            .groups(tack_hooks::HookEvent::Stop)
            .flat_map(|g| g.hooks.iter().map(|h| h.command.as_str()))
            .collect();
        assert_eq!(kept, ["kept"], "{settings}");
    }
    // A timeout far above a day is kept (cut to a year), not refused.
    let long = HooksConfig::from_settings(
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 1e12}]}]}}),
        None,
    )
    .unwrap();
    let hook = &long
        .groups(tack_hooks::HookEvent::Stop)
        .next()
        .unwrap()
        .hooks[0];
    assert_eq!(hook.timeout, tack_hooks::MAX_TIMEOUT);
    assert!(long.warnings().is_empty(), "{:?}", long.warnings());
}
