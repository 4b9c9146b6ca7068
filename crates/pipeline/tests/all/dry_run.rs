//! `dry_run`: steps 1 to 6 without executing or notifying observers.

use std::sync::atomic::Ordering;

use tack_core::policy::PreDecision;
use tack_core::tool::{ErrorCode, ToolCall};
use tack_pipeline::DryRun;

use crate::harness::*;

fn policy(h: &Harness) {
    h.hooks()
        .pre_execute()
        .tap("policy", |exec, next| async move {
            match exec.arg_str("text") {
                Some("deny") => PreDecision::deny("no"),
                Some("ask") => PreDecision::ask("sure?"),
                _ => next.run(exec).await,
            }
        });
}

#[tokio::test]
async fn dry_run_reports_allowed_would_ask_and_refused_without_running() {
    let (h, runs) = Harness::with_counted_echo("echo");
    policy(&h);
    let approver = Approver::new(Behaviour::Never);
    h.provide_approval(approver.clone());

    let allowed = h
        .pipeline
        .dry_run(ToolCall::new("a", "echo", r#"{"text": "ok"}"#))
        .await;
    assert!(
        matches!(&allowed, DryRun::Allowed { execution } if execution.arg_str("text") == Some("ok")),
        "{allowed:?}"
    );

    let ask = h
        .pipeline
        .dry_run(ToolCall::new("b", "echo", r#"{"text": "ask"}"#))
        .await;
    match &ask {
        DryRun::WouldAsk {
            reason, provenance, ..
        } => {
            assert_eq!(reason, "sure?");
            assert_eq!(
                provenance.as_ref().unwrap().listener.as_deref(),
                Some("policy")
            );
        }
        other => panic!("expected WouldAsk, got {other:?}"),
    }
    assert!(approver.requests.lock().is_empty(), "a dry run never asks");

    for (id, name, args, code) in [
        ("c", "echo", r#"{"text": "deny"}"#, ErrorCode::Denied),
        ("d", "echo", r#"{"text": 1}"#, ErrorCode::InvalidArguments),
        ("e", "nope", "{}", ErrorCode::UnknownTool),
    ] {
        match h.pipeline.dry_run(ToolCall::new(id, name, args)).await {
            DryRun::Refused { failure, .. } => assert_eq!(failure.code(), code, "{id}"),
            other => panic!("{id}: expected Refused, got {other:?}"),
        }
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert!(h.results.lock().is_empty(), "observers are not notified");
}

#[tokio::test]
async fn dry_run_applies_guards_even_when_policy_would_ask() {
    let h = Harness::with_tool(echo("echo"));
    policy(&h);
    let _guard = h.hooks().guard("wall", |_| Err("walled".into()));
    for args in [r#"{"text": "ok"}"#, r#"{"text": "ask"}"#] {
        match h.pipeline.dry_run(ToolCall::new("x", "echo", args)).await {
            DryRun::Refused {
                failure,
                provenance,
            } => {
                assert_eq!(failure.code(), ErrorCode::Denied);
                assert_eq!(failure.message(), "walled");
                assert_eq!(provenance.unwrap().listener.as_deref(), Some("wall"));
            }
            other => panic!("expected Refused, got {other:?}"),
        }
    }
}
