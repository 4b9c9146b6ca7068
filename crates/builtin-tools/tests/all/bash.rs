//! bash through the real sandbox shell.

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use tack_core::tool::{ErrorCode, Tier, ToolDefinition};
use tack_tools::Bash;
use tokio_util::sync::CancellationToken;

use crate::fixtures::workspace_with;
use crate::harness::{Workspace, assert_golden};

#[tokio::test]
async fn runs_in_the_workspace_and_reports_exit_code_and_output() {
    let ws = workspace_with("greeting.txt", "hello\n");
    let value = ws
        .value(Bash::new(), json!({"command": "cat greeting.txt"}))
        .await;
    assert_eq!(value["exit_code"], 0);
    assert_eq!(value["stdout"], "hello\n");
    assert_eq!(value["timed_out"], false);
    let text = ws
        .text(
            Bash::new(),
            json!({"command": "echo out; echo err >&2; exit 3"}),
        )
        .await;
    assert_golden("bash.txt", &text);
}

#[tokio::test]
async fn an_empty_command_is_a_clear_error() {
    let ws = Workspace::new();
    let err = ws.error(Bash::new(), json!({"command": ""})).await;
    assert_eq!(err.code(), ErrorCode::InvalidArguments);
    assert_eq!(err.kind(), Some("empty_command"));
    assert!(err.message().contains("the command is empty"), "{err}");
}

#[tokio::test]
async fn a_megabyte_of_output_is_capped_for_the_model_and_whole_in_the_value() {
    let ws = Workspace::new();
    let def = ToolDefinition::from_tool(Bash::new()).unwrap();
    // 100,000 lines of 10 characters + newline: 1.1 MB.
    let outcome = ws
        .outcome(&def, json!({"command": "yes abcdefghij | head -n 100000"}))
        .await;
    let value = outcome.value().unwrap();
    assert_eq!(
        value["stdout"].as_str().unwrap().len(),
        1_100_000,
        "the value stays whole"
    );
    assert_eq!(value["truncated"], false);
    let text = outcome.content.joined_text();
    assert!(
        text.chars().count() < 31_000,
        "capped: {} chars",
        text.chars().count()
    );
    assert!(text.starts_with("abcdefghij\n"));
    assert!(
        text.ends_with("abcdefghij\n[exit code 0]"),
        "the tail is kept"
    );
    assert!(
        text.contains("characters cut from the middle of this output"),
        "marker present"
    );
}

#[tokio::test]
async fn the_deadline_kills_a_slow_command() {
    let ws = Workspace::new();
    let value = ws
        .value(
            Bash::new(),
            json!({"command": "sleep 5", "timeout_ms": 200}),
        )
        .await;
    assert_eq!(value["timed_out"], true);
    let def = ToolDefinition::from_tool(Bash::new()).unwrap();
    let out = serde_json::from_value(value.clone()).unwrap();
    let args: tack_tools::BashArgs =
        serde_json::from_value(json!({"command": "sleep 5", "timeout_ms": 200})).unwrap();
    let text = tack_core::tool::Tool::render(&Bash::new(), &args, &out).joined_text();
    assert!(
        text.ends_with("[timed out after 200 ms and was killed]"),
        "{text}"
    );
    assert!(def.timeout().is_some());
}

#[tokio::test]
async fn cancellation_reaches_the_shell() {
    let ws = Workspace::new();
    let def = ToolDefinition::from_tool(Bash::new()).unwrap();
    let cancel = CancellationToken::new();
    let cx = ws.cx_with("bash", cancel.clone());
    let call = def.run_body(json!({"command": "sleep 30"}).into(), cx);
    let canceller = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    };
    let started = std::time::Instant::now();
    let (result, ()) = tokio::join!(call, canceller);
    let err = result.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Cancelled, "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn executes_runs_alone_and_declares_a_timeout() {
    let def = ToolDefinition::from_tool(Bash::new()).unwrap();
    assert_eq!(def.tier(), Tier::Executes);
    assert!(!def.is_concurrency_safe(&json!({"command": "ls"})));
    assert!(def.timeout().unwrap() >= Duration::from_secs(600));
    assert!(def.has_finalize_content());
    assert_eq!(
        def.present_call(&json!({"command": "cargo test"})),
        "$ cargo test"
    );
}
