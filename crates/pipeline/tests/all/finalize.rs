//! `finalize_content` (FIN-*, docs/design.md #7).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tack_core::hook::AgentId;
use tack_core::policy::PreDecision;
use tack_core::tool::{ContentBlock, ErrorCode, Outcome, OutputSpec, ToolDefinition};
use tack_pipeline::Presentation;

use crate::harness::*;

type Finalizer = dyn Fn(&Outcome) -> Option<Vec<ContentBlock>> + Send + Sync;

fn finalized(name: &str, finalize: Arc<Finalizer>) -> (ToolDefinition, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let def = ToolDefinition::builder(name)
        .description("Echo with a finalizer.")
        .input_schema(echo_schema())
        .output(OutputSpec::new(json!({"type": "string"})))
        .handler(|args, _cx| async move {
            match args["text"].as_str() {
                Some("fail") => Err(tack_core::tool::ToolError::new("failed on request")),
                _ => Ok(args["text"].clone()),
            }
        })
        .finalize_content(move |outcome| {
            counter.fetch_add(1, Ordering::SeqCst);
            finalize(outcome)
        })
        .build()
        .unwrap();
    (def, calls)
}

fn truncate_to(n: usize) -> Arc<Finalizer> {
    Arc::new(move |outcome: &Outcome| {
        let text = outcome.content.joined_text();
        Some(vec![ContentBlock::text(
            text.chars().take(n).collect::<String>(),
        )])
    })
}

// FIN-005 / the finalize step: exactly once for every outcome of a known tool.
#[tokio::test]
async fn finalize_runs_exactly_once_for_every_outcome_of_a_known_tool() {
    let (def, calls) = finalized("echo", truncate_to(12));
    let h = Harness::with_tool(def);
    let _pre = h.hooks().pre_execute().tap("pre", |exec, next| async move {
        if exec.arg_str("text") == Some("deny") {
            return PreDecision::deny("denied because the text says so");
        }
        next.run(exec).await
    });
    let cases = [
        ("ok", r#"{"text": "a long successful value"}"#, None),
        ("json", "{", Some(ErrorCode::InvalidArguments)),
        (
            "schema",
            r#"{"text": 1}"#,
            Some(ErrorCode::InvalidArguments),
        ),
        ("deny", r#"{"text": "deny"}"#, Some(ErrorCode::Denied)),
        (
            "fail",
            r#"{"text": "fail"}"#,
            Some(ErrorCode::ExecutionFailed),
        ),
    ];
    for (i, (id, args, code)) in cases.into_iter().enumerate() {
        let out = h.call(id, "echo", args).await;
        assert_eq!(out.error_code(), code, "{out:?}");
        assert_eq!(calls.load(Ordering::SeqCst), i + 1, "{id}");
        assert!(text(&out).chars().count() <= 12, "{id}: {}", text(&out));
        // The failure keeps its code after finalizing.
        assert_eq!(out.is_success(), code.is_none());
    }
    // A pre-cancelled call too.
    let out = h
        .call_with("cx", "echo", r#"{"text": "a"}"#, cancelled())
        .await;
    assert_eq!(out.error_code(), Some(ErrorCode::Cancelled));
    assert_eq!(calls.load(Ordering::SeqCst), cases.len() + 1);
}

#[tokio::test]
async fn finalize_does_not_run_for_unknown_or_hidden_tools() {
    let (def, calls) = finalized("echo", truncate_to(5));
    let h = Harness::with_tool(def);
    let agent = AgentId::new("coder");
    h.registry
        .set_presentation(Some(&agent), Presentation::Code);
    h.call("u", "nope", "{}").await;
    let direct = h.call_as("d", "echo", r#"{"text": "x"}"#, "coder").await;
    assert_eq!(direct.error_code(), Some(ErrorCode::UnknownTool));
    // FIN-006: a code-mode model-direct call could never execute: no finalizer.
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

// FIN-003
#[tokio::test]
async fn finalizer_returning_none_keeps_the_content() {
    let (def, calls) = finalized("echo", Arc::new(|_: &Outcome| None));
    let h = Harness::with_tool(def);
    let out = h.call("c", "echo", r#"{"text": "kept"}"#).await;
    assert_eq!(text(&out), "kept");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

// docs/design.md #7: a panicking finalizer keeps the original result.
#[tokio::test]
async fn panicking_finalizer_keeps_the_original_result() {
    let (def, calls) = finalized("echo", Arc::new(|_: &Outcome| panic!("finalizer broke")));
    let h = Harness::with_tool(def);
    let out = h.call("c", "echo", r#"{"text": "kept"}"#).await;
    assert!(out.is_success());
    assert_eq!(text(&out), "kept");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let failed = h.call("f", "echo", r#"{"text": "fail"}"#).await;
    assert_eq!(text(&failed), "EXECUTION_FAILED: failed on request");
}

// FIN-002: the finalizer captured when the call started runs even if the tool
// is unregistered mid-pipeline.
#[tokio::test]
async fn finalizer_captured_at_start_runs_after_unregistration() {
    let h = Harness::new();
    let (def, calls) = finalized("echo", truncate_to(3));
    let disposer = h.add_disposable(def);
    let _pre = h
        .hooks()
        .pre_execute()
        .tap("unregister", move |exec, next| {
            disposer.dispose();
            next.run(exec)
        });
    let out = h.call("c", "echo", r#"{"text": "abcdef"}"#).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(text(&out).chars().count() <= 3, "{out:?}");
}
