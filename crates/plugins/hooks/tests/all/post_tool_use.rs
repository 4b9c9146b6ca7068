//! PostToolUse on `tools/post-execute`.

use serde_json::json;
use tack_core::tool::ErrorCode;
use tack_test::Stage;

use crate::harness::*;

#[tokio::test]
async fn additional_context_becomes_deferred_context() {
    let script = r#"#!/bin/sh
cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "The build cache was cleared."}}'
"#;
    let bed = Bed::new(&[("ctx.sh", script)], |d| {
        one("PostToolUse", "Bash", format!("{}/ctx.sh", d.display()))
    });
    let out = bed.call("bash", json!({"command": "make clean"})).await;
    assert!(out.is_success());
    assert_eq!(out.outcome().deferred_context.len(), 1);
    assert_eq!(
        out.outcome().deferred_context[0].text(),
        "The build cache was cleared."
    );
    assert_eq!(out.outcome().deferred_context[0].source(), Some("hooks"));
}

#[tokio::test]
async fn exit_2_and_decision_block_give_the_model_feedback_after_the_tool_ran() {
    for script in [
        "#!/bin/sh\ncat >/dev/null\necho 'tests must pass before committing' >&2\nexit 2\n",
        "#!/bin/sh\ncat >/dev/null\necho '{\"decision\": \"block\", \"reason\": \"tests must pass before committing\"}'\n",
    ] {
        let bed = Bed::new(&[("fb.sh", script)], |d| {
            one("PostToolUse", "Bash", format!("{}/fb.sh", d.display()))
        });
        let out = bed.call("bash", json!({"command": "git commit"})).await;
        assert_eq!(bed.runs(), 1, "the tool already ran");
        assert!(out.is_success(), "the result is kept: {out:?}");
        let context: Vec<String> = out
            .outcome()
            .deferred_context
            .iter()
            .map(|c| c.text())
            .collect();
        assert_eq!(context.len(), 1, "{context:?}");
        assert!(
            context[0].contains("tests must pass before committing"),
            "{context:?}"
        );
        assert!(context[0].contains("Bash"), "{context:?}");
    }
}

const FORMATTER: &str = r#"#!/usr/bin/env python3
# An auto-formatter: strips trailing whitespace from the edited file.
import json, sys
data = json.load(sys.stdin)
path = data["tool_input"]["file_path"]
with open(path) as f:
    lines = f.read().splitlines()
with open(path, "w") as f:
    f.write("\n".join(l.rstrip() for l in lines) + "\n")
"#;

#[tokio::test]
async fn an_auto_formatter_runs_on_the_edited_file() {
    if !python() {
        return;
    }
    let bed = Bed::new(&[("fmt.py", FORMATTER)], |d| {
        one(
            "PostToolUse",
            "Edit|Write",
            format!("{}/fmt.py", d.display()),
        )
    });
    std::fs::write(
        bed.path().join("main.rs"),
        "fn main() {}   \n  let x = 1;  \n",
    )
    .unwrap();
    let out = bed
        .call(
            "edit_file",
            json!({"path": "main.rs", "old_string": "a", "new_string": "b"}),
        )
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(bed.path().join("main.rs")).unwrap(),
        "fn main() {}\n  let x = 1;\n"
    );
}

#[tokio::test]
async fn post_tool_use_input_carries_the_tool_response() {
    let dump = "#!/bin/sh\ncat > \"$TACK_PROJECT_DIR/post.json\"\n";
    let bed = Bed::new(&[("dump.sh", dump)], |d| {
        one("PostToolUse", "", format!("{}/dump.sh", d.display()))
    });
    assert!(
        bed.call("bash", json!({"command": "ls"}))
            .await
            .is_success()
    );
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bed.path().join("post.json")).unwrap())
            .unwrap();
    assert_eq!(input["hook_event_name"], "PostToolUse");
    assert_eq!(input["tool_response"], json!({"ran": {"command": "ls"}}));
}

#[tokio::test]
async fn a_fail_closed_post_hook_that_errors_withholds_the_result() {
    let bed = Bed::new(&[], |_| {
        json!({"hooks": {"PostToolUse": [{"hooks": [
            {"type": "command", "command": "exit 1", "failClosed": true}
        ]}]}})
    });
    let out = bed.call("bash", json!({"command": "cat secrets"})).await;
    assert_eq!(bed.runs(), 1);
    let f = out.failure().expect("blocked");
    assert!(f.message().contains("fail closed"), "{}", f.message());
    assert!(out.body_ran());
    assert_eq!(out.decided_at(), Some(Stage::PostExecute), "{out:?}");
    assert_ne!(f.code(), ErrorCode::InvalidArguments);
}
