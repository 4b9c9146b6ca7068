//! Rewritten arguments: a `tools/pre-execute` decision replaces the call's
//! arguments; the rewrite is validated again, seen by approval, guards and the
//! body, and recorded (original, rewrite, who) in the outcome.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use parking_lot::Mutex;
use serde_json::json;
use tack_core::policy::{ApprovalOutcome, PreDecision};
use tack_core::tool::{ErrorCode, ToolExecution};
use tack_pipeline::INVALID_REWRITE;

use crate::harness::*;

fn rewrite_to(h: &Harness, name: &str, arguments: serde_json::Value) -> tack_core::hook::Disposer {
    h.hooks()
        .pre_execute()
        .tap(name, move |_exec: Arc<ToolExecution>, _next| {
            let arguments = arguments.clone();
            async move { PreDecision::allow().with_arguments(arguments) }
        })
}

#[tokio::test]
async fn the_body_runs_with_the_rewritten_arguments_and_the_outcome_records_them() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let _rw = rewrite_to(&h, "rewriter", json!({"text": "rewritten"}));
    let out = h.call("c", "echo", r#"{"text": "original"}"#).await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(text(&out), "rewritten");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let original = out
        .original_arguments()
        .expect("the outcome records the rewrite");
    assert_eq!(**original, json!({"text": "original"}));
    assert_eq!(
        **out.rewritten_arguments().unwrap(),
        json!({"text": "rewritten"})
    );
    let by = out.rewritten_by().unwrap();
    assert_eq!(by.hook, tack_core::hooks::ToolHooks::PRE_EXECUTE);
    assert_eq!(by.listener.as_deref(), Some("rewriter"));
    // The record survives serialization (what a session log writes).
    let logged = serde_json::to_value(&*out).unwrap();
    assert_eq!(logged["rewrite"]["original"]["text"], "original");
    assert_eq!(logged["rewrite"]["rewritten"]["text"], "rewritten");
    assert_eq!(logged["rewrite"]["by"]["listener"], "rewriter");
    // The result observers saw the same record.
    let record = |o: &tack_core::tool::Outcome| {
        (
            o.original_arguments().cloned(),
            o.rewritten_arguments().cloned(),
            o.rewritten_by().cloned(),
        )
    };
    assert_eq!(record(&h.observed("c")[0]), record(&out));
}

#[tokio::test]
async fn a_rewrite_that_breaks_the_schema_fails_the_call_and_never_runs_the_tool() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let _rw = rewrite_to(&h, "bad-rewriter", json!({"text": 1}));
    let out = h.call("c", "echo", r#"{"text": "original"}"#).await;
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the tool must not run");
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Internal);
    assert_eq!(f.kind(), Some(INVALID_REWRITE));
    assert_eq!(f.pointer(), Some("/text"));
    assert!(f.message().contains("`bad-rewriter`"), "{}", f.message());
    assert!(f.message().contains("not run"), "{}", f.message());
    assert_eq!(decided_by(&out), Some("bad-rewriter"));
    let rewritten = out
        .rewritten_arguments()
        .expect("the refused rewrite is recorded");
    assert_eq!(**rewritten, json!({"text": 1}));
    assert_eq!(
        **out.original_arguments().unwrap(),
        json!({"text": "original"})
    );
}

#[tokio::test]
async fn a_rewrite_that_is_not_an_object_or_adds_unknown_keys_is_refused() {
    for (bad, pointer) in [
        (json!("just text"), None),
        (json!({"text": "a", "extra": true}), Some("")),
    ] {
        let (h, runs) = Harness::with_counted_echo("echo");
        let _rw = rewrite_to(&h, "rw", bad.clone());
        let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
        assert_eq!(runs.load(Ordering::SeqCst), 0, "{bad}");
        let f = failure(&out);
        assert_eq!(f.code(), ErrorCode::Internal, "{bad}");
        assert_eq!(f.kind(), Some(INVALID_REWRITE));
        if let Some(pointer) = pointer {
            assert_eq!(f.pointer(), Some(pointer));
        }
    }
}

#[tokio::test]
async fn approval_and_guards_see_the_rewritten_arguments() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let _rw = h.hooks().pre_execute().tap("rw", |_exec, _next| async {
        PreDecision::ask("check the rewrite").with_arguments(json!({"text": "safe"}))
    });
    let approver = Approver::answering(ApprovalOutcome::AllowedOnce);
    h.provide_approval(approver.clone());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let guard_seen = seen.clone();
    let _g = h.hooks().guard("recorder", move |exec: &ToolExecution| {
        guard_seen
            .lock()
            .push(exec.arg_str("text").unwrap_or_default().to_owned());
        Ok(())
    });
    let out = h.call("c", "echo", r#"{"text": "dangerous"}"#).await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(text(&out), "safe");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let requests = approver.requests.lock();
    assert_eq!(requests.len(), 1);
    assert_eq!(*requests[0].arguments, json!({"text": "safe"}));
    assert!(
        requests[0].summary.contains("safe"),
        "{}",
        requests[0].summary
    );
    assert_eq!(*seen.lock(), ["safe"]);
}

#[tokio::test]
async fn a_guard_denies_a_rewrite_and_the_record_stays() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let _rw = rewrite_to(&h, "rw", json!({"text": "rm -rf /"}));
    let _g = h.hooks().guard("no-rm", |exec: &ToolExecution| {
        if exec.arg_str("text").is_some_and(|t| t.contains("rm -rf")) {
            Err("no rm -rf".into())
        } else {
            Ok(())
        }
    });
    let out = h.call("c", "echo", r#"{"text": "ls"}"#).await;
    assert_eq!(failure(&out).code(), ErrorCode::Denied);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert!(out.original_arguments().is_some());
}

#[tokio::test]
async fn a_deny_records_its_rewrite_but_never_checks_or_applies_it() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let _rw = h.hooks().pre_execute().tap("rw", |_exec, _next| async {
        PreDecision::deny("no").with_arguments(json!({"text": 1}))
    });
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Denied);
    assert_eq!(f.message(), "no");
    let rewritten = out
        .rewritten_arguments()
        .expect("what the deny judged is recorded");
    assert_eq!(**rewritten, json!({"text": 1}));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_stricter_outer_decision_keeps_the_inner_rewrite_and_its_author() {
    let (h, _runs) = Harness::with_counted_echo("echo");
    let _inner = rewrite_to(&h, "inner", json!({"text": "rewritten"}));
    let _outer = h
        .hooks()
        .pre_execute()
        .tap_with(
            "outer",
            tack_core::hook::Order::EARLY,
            |exec, next| async move {
                next.run(exec)
                    .await
                    .stricter(PreDecision::ask("outer asks"))
            },
        )
        .unwrap();
    h.provide_approval(Approver::answering(ApprovalOutcome::AllowedOnce));
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(text(&out), "rewritten");
    let by = out.rewritten_by().unwrap();
    assert_eq!(by.listener.as_deref(), Some("inner"));
}

#[tokio::test]
async fn a_rewrite_equal_to_the_arguments_is_no_rewrite() {
    let (h, _runs) = Harness::with_counted_echo("echo");
    let _rw = rewrite_to(&h, "rw", json!({"text": "same"}));
    let out = h.call("c", "echo", r#"{"text": "same"}"#).await;
    assert!(out.is_success());
    assert!(out.original_arguments().is_none() && out.rewritten_arguments().is_none());
}
