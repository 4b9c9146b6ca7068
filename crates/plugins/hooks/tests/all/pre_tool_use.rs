//! PreToolUse on `tools/pre-execute`.

use serde_json::{Value, json};
use tack_core::tool::ErrorCode;
use tack_hooks::ToolNames;
use tack_test::Stage;

use crate::harness::*;

/// Claude Code's documented Bash command validator, unchanged.
const BASH_VALIDATOR: &str = r#"#!/usr/bin/env python3
import json, re, sys
RULES = [(r"\bgrep\b(?!.*\|)", "Use 'rg' (ripgrep) instead of 'grep' for better performance")]
data = json.load(sys.stdin)
if data.get("tool_name") != "Bash":
    sys.exit(0)
command = data.get("tool_input", {}).get("command", "")
issues = [m for p, m in RULES if re.search(p, command)]
if issues:
    for m in issues:
        print(f"• {m}", file=sys.stderr)
    sys.exit(2)
"#;

#[tokio::test]
async fn a_python_bash_validator_blocks_with_exit_2_and_stderr_is_the_reason() {
    if !python() {
        return;
    }
    let bed = Bed::new(&[("validate.py", BASH_VALIDATOR)], |d| {
        one("PreToolUse", "Bash", format!("{}/validate.py", d.display()))
    });
    let out = bed.call("bash", json!({"command": "grep -r foo ."})).await;
    let f = out.failure().unwrap();
    assert_eq!(f.code(), ErrorCode::Denied);
    assert!(
        f.message().contains("Use 'rg' (ripgrep)"),
        "{}",
        f.message()
    );
    assert_eq!(out.provenance().unwrap().listener.as_deref(), Some("hooks"));
    assert_eq!(out.decided_at(), Some(Stage::PreExecute));
    assert!(!out.body_ran());
    assert_eq!(bed.runs(), 0);
    let ok = bed.call("bash", json!({"command": "rg foo"})).await;
    assert!(ok.is_success(), "{ok:?}");
    assert_eq!(bed.runs(), 1);
}

const ENV_GUARD: &str = r#"#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
path = data["tool_input"].get("file_path", "")
if path.endswith(".env"):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": f"writing secrets file {path} is not allowed"}}))
"#;

#[tokio::test]
async fn a_file_guard_denies_writes_to_env_files_by_absolute_file_path() {
    if !python() {
        return;
    }
    let bed = Bed::new(&[("guard.py", ENV_GUARD)], |d| {
        one(
            "PreToolUse",
            "Write|Edit",
            format!("python3 {}/guard.py", d.display()),
        )
    });
    let out = bed
        .call(
            "write_file",
            json!({"path": "config/.env", "content": "KEY=1"}),
        )
        .await;
    let f = out.failure().unwrap();
    assert_eq!(f.code(), ErrorCode::Denied);
    let absolute = bed.path().join("config/.env");
    assert_eq!(
        f.message(),
        format!("writing secrets file {} is not allowed", absolute.display())
    );
    assert_eq!(bed.runs(), 0);
    assert!(
        bed.call("write_file", json!({"path": "a.txt", "content": "x"}))
            .await
            .is_success()
    );
    // The matcher does not select bash: the guard never sees it.
    assert!(
        bed.call("bash", json!({"command": "echo .env"}))
            .await
            .is_success()
    );
}

#[tokio::test]
async fn a_shell_guard_with_exit_2_blocks_env_writes() {
    let script = r#"#!/bin/sh
input=$(cat)
case "$input" in
  *'.env"'*) echo "no .env writes" >&2; exit 2 ;;
esac
exit 0
"#;
    let bed = Bed::new(&[("guard.sh", script)], |d| {
        one("PreToolUse", "Write", format!("{}/guard.sh", d.display()))
    });
    let out = bed
        .call("write_file", json!({"path": "x.env", "content": ""}))
        .await;
    assert_eq!(out.failure().unwrap().message(), "no .env writes");
    assert_eq!(out.decided_at(), Some(Stage::PreExecute));
    assert_eq!(out.decided_by_listener(), Some("hooks"));
    assert_eq!(bed.runs(), 0);
}

const REWRITE: &str = r#"#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
cmd = data["tool_input"]["command"]
if cmd.startswith("ls") and "--color=never" not in cmd:
    new = dict(data["tool_input"], command=cmd + " --color=never")
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "updatedInput": new}}))
"#;

#[tokio::test]
async fn updated_input_rewrites_the_command_and_the_outcome_records_it() {
    if !python() {
        return;
    }
    let bed = Bed::new(&[("rw.py", REWRITE)], |d| {
        one("PreToolUse", "Bash", format!("{}/rw.py", d.display()))
    });
    let out = bed
        .call("bash", json!({"command": "ls -la", "timeout_ms": 5000}))
        .await;
    assert!(out.is_success(), "{out:?}");
    let ran = bed.seen.lock().unwrap()[0].clone();
    assert_eq!(
        ran,
        json!({"command": "ls -la --color=never", "timeout_ms": 5000})
    );
    let outcome = out.outcome();
    assert_eq!(outcome.original_arguments().unwrap()["command"], "ls -la");
    assert_eq!(
        outcome.rewritten_arguments().unwrap()["command"],
        "ls -la --color=never"
    );
    assert_eq!(
        outcome.rewritten_by().unwrap().listener.as_deref(),
        Some("hooks")
    );
}

#[tokio::test]
async fn ask_and_legacy_block_are_understood() {
    let ask = r#"#!/bin/sh
cat >/dev/null
echo '{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "double-check this"}}'
"#;
    let bed = Bed::new(&[("ask.sh", ask)], |d| {
        one("PreToolUse", "*", format!("{}/ask.sh", d.display()))
    });
    // No approval service: an ask is denied, saying so.
    let out = bed.call("bash", json!({"command": "ls"})).await;
    assert_eq!(out.failure().unwrap().code(), ErrorCode::Denied);
    assert_eq!(out.decided_at(), Some(Stage::Approval), "{out:?}");
    assert_eq!(bed.runs(), 0);

    let block = "#!/bin/sh\ncat >/dev/null\necho '{\"decision\": \"block\", \"reason\": \"legacy says no\"}'\n";
    let bed = Bed::new(&[("block.sh", block)], |d| {
        one("PreToolUse", "", format!("{}/block.sh", d.display()))
    });
    let out = bed.call("bash", json!({"command": "ls"})).await;
    assert_eq!(out.failure().unwrap().message(), "legacy says no");
    let approve = "#!/bin/sh\ncat >/dev/null\necho '{\"decision\": \"approve\"}'\n";
    let bed = Bed::new(&[("ok.sh", approve)], |d| {
        one("PreToolUse", "", format!("{}/ok.sh", d.display()))
    });
    assert!(
        bed.call("bash", json!({"command": "ls"}))
            .await
            .is_success()
    );
}

#[tokio::test]
async fn the_input_json_and_environment_follow_the_protocol() {
    let dump = r#"#!/bin/sh
cat > "$CLAUDE_PROJECT_DIR/input.json"
printf '%s\n%s\n' "$CLAUDE_PROJECT_DIR" "$TACK_PROJECT_DIR" > "$TACK_PROJECT_DIR/env.txt"
pwd > "$TACK_PROJECT_DIR/cwd.txt"
"#;
    let bed = Bed::new(&[("dump.sh", dump)], |d| {
        one("PreToolUse", "Bash", format!("{}/dump.sh", d.display()))
    });
    assert!(
        bed.call("bash", json!({"command": "ls"}))
            .await
            .is_success()
    );
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(bed.path().join("input.json")).unwrap())
            .unwrap();
    let root = bed.path().to_string_lossy().into_owned();
    assert_eq!(input["session_id"], "session-1");
    assert_eq!(input["transcript_path"], format!("{root}/log.jsonl"));
    assert_eq!(input["cwd"], root);
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tool_input"], json!({"command": "ls"}));
    assert_eq!(input["permission_mode"], "default");
    let env = std::fs::read_to_string(bed.path().join("env.txt")).unwrap();
    assert_eq!(env, format!("{root}\n{root}\n"));
    let cwd = std::fs::read_to_string(bed.path().join("cwd.txt")).unwrap();
    assert_eq!(
        std::fs::canonicalize(cwd.trim()).unwrap(),
        std::fs::canonicalize(bed.path()).unwrap()
    );
}

#[tokio::test]
async fn tack_names_switch_off_the_mapping() {
    let dump = "#!/bin/sh\ncat > \"$TACK_PROJECT_DIR/input.json\"\n";
    let bed = Bed::with_names(
        &[("dump.sh", dump)],
        |d| {
            one(
                "PreToolUse",
                "write_file",
                format!("{}/dump.sh", d.display()),
            )
        },
        ToolNames::Tack,
    );
    assert!(
        bed.call("write_file", json!({"path": "a", "content": ""}))
            .await
            .is_success()
    );
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(bed.path().join("input.json")).unwrap())
            .unwrap();
    assert_eq!(input["tool_name"], "write_file");
    assert_eq!(input["tool_input"], json!({"path": "a", "content": ""}));
    // With tack's names, Claude Code's name does not match.
    let bed = Bed::with_names(
        &[("dump.sh", dump)],
        |d| one("PreToolUse", "Write", format!("{}/dump.sh", d.display())),
        ToolNames::Tack,
    );
    assert!(
        bed.call("write_file", json!({"path": "a", "content": ""}))
            .await
            .is_success()
    );
    assert!(!bed.path().join("input.json").exists());
}

#[tokio::test]
async fn matching_hooks_run_in_parallel_and_identical_commands_once() {
    // `waiter` only succeeds if `maker` runs while it waits.
    let waiter = r#"#!/bin/sh
cat >/dev/null
for i in $(seq 100); do [ -f "$TACK_PROJECT_DIR/made" ] && exit 0; sleep 0.1; done
echo "maker never ran alongside" >&2; exit 2
"#;
    let maker = "#!/bin/sh\ncat >/dev/null\ntouch \"$TACK_PROJECT_DIR/made\"\necho x >> \"$TACK_PROJECT_DIR/count\"\n";
    let bed = Bed::new(&[("waiter.sh", waiter), ("maker.sh", maker)], |d| {
        let w = format!("{}/waiter.sh", d.display());
        let m = format!("{}/maker.sh", d.display());
        json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": w}, {"type": "command", "command": m}]},
            {"matcher": ".*", "hooks": [{"type": "command", "command": m}]}
        ]}})
    });
    let out = bed.call("bash", json!({"command": "ls"})).await;
    assert!(out.is_success(), "{out:?}");
    let count = std::fs::read_to_string(bed.path().join("count")).unwrap();
    assert_eq!(count.lines().count(), 1, "the identical command ran once");
}
