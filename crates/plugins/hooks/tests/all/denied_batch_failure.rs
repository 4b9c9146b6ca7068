//! `PermissionDenied` (on `tools/post-execute`, for a call no one could
//! approve), `PostToolBatch` and `StopFailure` (methods a host calls).

use std::sync::Arc;

use serde_json::{Value, json};
use tack_core::host::NewOutcome;
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use tack_core::tool::{CallId, ContentBlock, ErrorCode, Outcome, ToolCall};
use tack_hooks::ToolNames;
use tokio_util::sync::CancellationToken;

use crate::harness::*;

/// An approval service that always gives `outcome`.
struct Answers(ApprovalOutcome);

#[async_trait::async_trait]
impl ApprovalService for Answers {
    async fn request(&self, _: ApprovalRequest, _: CancellationToken) -> ApprovalOutcome {
        self.0.clone()
    }
}

/// A `PreToolUse` hook that makes every `Bash` call ask, and a
/// `PermissionDenied` hook that records its input in `denied.json` and
/// answers `retry: true`.
fn asking_and_recording(dir: &std::path::Path) -> Value {
    json!({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": format!("{}/ask.sh", dir.display())}]}],
        "PermissionDenied": [{"matcher": "Bash", "hooks": [{"type": "command", "command": format!("{}/denied.sh", dir.display())}]}]
    }})
}

const ASK: &str = "#!/bin/sh\ncat >/dev/null\necho '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"ask\", \"permissionDecisionReason\": \"check it\"}}'\n";
const DENIED: &str = "#!/bin/sh\ncat > \"$TACK_PROJECT_DIR/denied.json\"\necho '{\"hookSpecificOutput\": {\"hookEventName\": \"PermissionDenied\", \"retry\": true}}'\n";

fn retry_notes(outcome: &Outcome) -> Vec<String> {
    outcome
        .deferred_context
        .iter()
        .map(|c| format!("{:?}", c.content))
        .filter(|t| t.contains("may retry"))
        .collect()
}

#[tokio::test]
async fn permission_denied_runs_when_no_one_could_approve_and_not_when_the_user_declined() {
    let scripts = [("ask.sh", ASK), ("denied.sh", DENIED)];
    for (approval, runs) in [
        (None, true),
        (
            Some(ApprovalOutcome::Unavailable {
                reason: Some("no terminal".into()),
            }),
            true,
        ),
        (
            Some(ApprovalOutcome::Denied {
                reason: Some("not now".into()),
            }),
            false,
        ),
    ] {
        let bed = match &approval {
            None => Bed::new(&scripts, asking_and_recording),
            Some(outcome) => Bed::with_approval(
                &scripts,
                asking_and_recording,
                Arc::new(Answers(outcome.clone())),
            ),
        };
        let out = bed.call("bash", json!({"command": "make deploy"})).await;
        assert_eq!(out.error_code(), Some(ErrorCode::Denied), "{approval:?}");
        let recorded = bed.path().join("denied.json");
        assert_eq!(recorded.exists(), runs, "{approval:?}");
        assert_eq!(
            retry_notes(out.outcome()).len(),
            usize::from(runs),
            "{approval:?}"
        );
        if runs {
            let input: Value =
                serde_json::from_str(&std::fs::read_to_string(&recorded).unwrap()).unwrap();
            assert_eq!(input["hook_event_name"], "PermissionDenied");
            assert_eq!(input["tool_name"], "Bash");
            assert_eq!(input["tool_input"], json!({"command": "make deploy"}));
            assert_eq!(input["tool_use_id"], "call-1");
            assert_eq!(input["reason"], out.message().unwrap(), "{input}");
        }
    }
}

#[tokio::test]
async fn permission_denied_retry_false_or_plain_output_says_nothing_to_the_model() {
    for answer in [
        "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PermissionDenied\", \"retry\": false}}'",
        "echo 'you may retry'",
        "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PermissionDenied\", \"additionalContext\": \"may retry later\"}}'",
    ] {
        let denied = format!("#!/bin/sh\ncat >/dev/null\n{answer}\n");
        let bed = Bed::new(
            &[("ask.sh", ASK), ("denied.sh", &denied)],
            asking_and_recording,
        );
        let out = bed.call("bash", json!({"command": "make deploy"})).await;
        assert_eq!(out.error_code(), Some(ErrorCode::Denied));
        assert!(
            out.outcome().deferred_context.is_empty(),
            "{answer}: {out:?}"
        );
    }
}

fn batch() -> (Vec<ToolCall>, Vec<Arc<Outcome>>) {
    let calls = vec![
        ToolCall::new("c1", "bash", r#"{"command": "cargo test"}"#),
        ToolCall::new("c2", "write_file", r#"{"path": "a.txt", "content": "x"}"#),
    ];
    let outcomes = vec![
        Arc::new(Outcome::success(
            CallId::from("c1"),
            "bash",
            json!({"exit_code": 0}),
            vec![ContentBlock::text("test result: ok")],
        )),
        Arc::new(Outcome::failure(
            CallId::from("c2"),
            "write_file",
            <tack_core::tool::ToolError as tack_core::host::NewToolError>::from_code(
                ErrorCode::Denied,
                "no writes",
            ),
        )),
    ];
    (calls, outcomes)
}

#[tokio::test]
async fn post_tool_batch_sees_every_call_with_the_text_the_model_reads() {
    let record = "#!/bin/sh\ncat > \"$TACK_PROJECT_DIR/batch.json\"\necho '{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolBatch\", \"additionalContext\": \"lint next\"}}'\n";
    for names in [ToolNames::ClaudeCode, ToolNames::Tack] {
        let bed = Bed::with_names(
            &[("batch.sh", record)],
            |d| one("PostToolBatch", "", format!("{}/batch.sh", d.display())),
            names,
        );
        let (calls, outcomes) = batch();
        let check = bed.hooks().post_tool_batch(&calls, &outcomes).await;
        assert_eq!(check.context, ["lint next"]);
        assert_eq!(check.stop, None);
        let input: Value =
            serde_json::from_str(&std::fs::read_to_string(bed.path().join("batch.json")).unwrap())
                .unwrap();
        let seen = &input["tool_calls"];
        assert_eq!(seen[0]["tool_use_id"], "c1");
        assert_eq!(seen[0]["tool_input"]["command"], "cargo test");
        assert_eq!(seen[0]["tool_response"], "test result: ok");
        assert_eq!(seen[1]["tool_response"], "DENIED: no writes");
        if names == ToolNames::Tack {
            assert_eq!(seen[0]["tool_name"], "bash");
            assert_eq!(seen[1]["tool_input"]["path"], "a.txt");
        } else {
            assert_eq!(seen[0]["tool_name"], "Bash");
            assert_eq!(seen[1]["tool_name"], "Write");
            assert!(
                seen[1]["tool_input"]["file_path"]
                    .as_str()
                    .is_some_and(|p| p.starts_with('/') && p.ends_with("a.txt")),
                "{input}"
            );
        }
    }
}

#[tokio::test]
async fn post_tool_batch_stops_on_exit_2_block_continue_false_and_fail_closed_errors() {
    for (command, fail_closed, reason) in [
        (
            "echo 'fix the build' >&2; exit 2",
            false,
            "fix the build".to_owned(),
        ),
        (
            "echo '{\"decision\": \"block\", \"reason\": \"tests are red\"}'",
            false,
            "tests are red".to_owned(),
        ),
        (
            "echo '{\"continue\": false, \"stopReason\": \"budget spent\"}'",
            false,
            "budget spent".to_owned(),
        ),
        (
            "exit 1",
            true,
            "the PostToolBatch hook `exit 1` failed with exit 1, and it is set to fail closed"
                .to_owned(),
        ),
    ] {
        let bed = Bed::new(
            &[],
            |_| json!({"hooks": {"PostToolBatch": [{"hooks": [{"type": "command", "command": command, "failClosed": fail_closed}]}]}}),
        );
        let (calls, outcomes) = batch();
        let check = bed.hooks().post_tool_batch(&calls, &outcomes).await;
        assert_eq!(check.stop.as_deref(), Some(reason.as_str()), "{command}");
        assert!(check.context.is_empty());
    }
    // An error of a hook that fails open stops nothing.
    let bed = Bed::new(&[], |_| one("PostToolBatch", "", "exit 1".into()));
    let (calls, outcomes) = batch();
    assert_eq!(
        bed.hooks().post_tool_batch(&calls, &outcomes).await.stop,
        None
    );
}

#[tokio::test]
async fn stop_failure_matches_the_error_kind_and_sends_the_error_fields() {
    let bed = Bed::new(&[], |_| {
        json!({"hooks": {"StopFailure": [
            {"matcher": "rate_limit|overloaded", "hooks": [{"type": "command", "command": "cat > \"$TACK_PROJECT_DIR/limit.json\"; echo '{\"systemMessage\": \"paged the on-call\"}'"}]},
            {"matcher": "server_error", "hooks": [{"type": "command", "command": "cat > \"$TACK_PROJECT_DIR/server.json\"; exit 2"}]}
        ]}})
    });
    bed.hooks()
        .stop_failure(
            "rate_limit",
            "429 slow down",
            "the model endpoint answered HTTP 429",
        )
        .await;
    assert!(!bed.path().join("server.json").exists());
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(bed.path().join("limit.json")).unwrap())
            .unwrap();
    assert_eq!(input["hook_event_name"], "StopFailure");
    assert_eq!(input["error"], "rate_limit");
    assert_eq!(input["error_details"], "429 slow down");
    assert_eq!(
        input["last_assistant_message"],
        "the model endpoint answered HTTP 429"
    );
    // Its output is not read (as in Claude Code): no systemMessage shown.
    assert!(
        !bed.reports()
            .iter()
            .any(|r| r.contains("paged the on-call")),
        "{:?}",
        bed.reports()
    );
    // Exit 2 blocks nothing: reported as a warning.
    bed.hooks()
        .stop_failure("server_error", "500", "HTTP 500")
        .await;
    assert!(bed.path().join("server.json").exists());
    let reports = bed.reports();
    assert!(
        reports
            .iter()
            .any(|r| r.starts_with("StopFailure hook") && r.contains("blocks nothing")),
        "{reports:?}"
    );
}
