//! Ask → approval service (PRE-007, PRE-008, PRE-013, CAN-002).

use std::sync::atomic::Ordering;

use serde_json::json;
use tack_core::policy::{ApprovalOutcome, PreDecision};
use tack_core::tool::{ErrorCode, ToolCall};
use tack_pipeline::APPROVAL_STAGE;
use tokio_util::sync::CancellationToken;

use crate::harness::*;
use crate::listeners::*;
use crate::stage_paths::*;

fn asking(
    approver: Option<std::sync::Arc<Approver>>,
) -> (Harness, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let (h, runs) = Harness::with_counted_echo("echo");
    if let Some(approver) = approver {
        h.provide_approval(approver);
    }
    answer_pre(&h, "gate", PreDecision::ask("echo has side effects"));
    (h, runs)
}

#[tokio::test]
async fn allowed_once_runs_the_call_and_the_request_carries_the_arguments_and_a_summary() {
    let approver = Approver::answering(ApprovalOutcome::AllowedOnce);
    let (h, runs) = asking(Some(approver.clone()));
    let out = h.call("c", "echo", r#"{"text": "secret"}"#).await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let requests = approver.requests.lock();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].call_id.as_str(), "c");
    assert_eq!(requests[0].tool, "echo");
    assert_eq!(requests[0].reason, "echo has side effects");
    // What is approved is what runs: the frozen, validated arguments.
    assert_eq!(*requests[0].arguments, json!({"text": "secret"}));
    assert_eq!(requests[0].summary, "echo: secret");
    assert_eq!(h.stages("c"), APPROVED);
}

// "Always for this session" is its own outcome, and a grant.
#[tokio::test]
async fn allowed_always_runs_the_call() {
    let approver = Approver::answering(ApprovalOutcome::AllowedAlways);
    let (h, runs) = asking(Some(approver.clone()));
    let out = h.call("c", "echo", r#"{"text": "x"}"#).await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(h.stages("c"), APPROVED);
}

// A summary stays one short line, whatever the model put in the arguments.
#[tokio::test]
async fn the_summary_escapes_control_characters_and_is_cut() {
    let approver = Approver::answering(ApprovalOutcome::Denied { reason: None });
    let (h, _runs) = asking(Some(approver.clone()));
    let text = format!("ok\r\u{1b}[2K[tool:bash] -> ok{}", "x".repeat(300));
    let args = json!({ "text": text }).to_string();
    let _ = h.call("c", "echo", &args).await;
    let requests = approver.requests.lock();
    let summary = &requests[0].summary;
    assert!(
        summary.starts_with(r"echo: ok\r\u{1b}[2K[tool:bash] -> ok"),
        "{summary}"
    );
    assert!(!summary.chars().any(char::is_control), "{summary}");
    assert_eq!(
        summary.chars().count(),
        tack_core::policy::ApprovalRequest::SUMMARY_MAX_CHARS
    );
    assert!(summary.ends_with('…'), "{summary}");
}

// PRE-007 (tack differs, docs/design.md #2: each non-grant is DENIED with its own message and provenance)
#[tokio::test]
async fn each_non_grant_is_a_distinct_denial() {
    let cases = [
        (
            ApprovalOutcome::Denied { reason: None },
            "the user declined tool `echo`",
            "denied",
        ),
        (
            ApprovalOutcome::Denied {
                reason: Some("not now".into()),
            },
            "the user declined tool `echo`: not now",
            "denied",
        ),
        (
            ApprovalOutcome::Cancelled,
            "the approval request for tool `echo` was cancelled",
            "cancelled",
        ),
        (
            ApprovalOutcome::Unavailable { reason: None },
            "tool `echo` needs approval, but no approver is available to ask",
            "unavailable",
        ),
    ];
    for (answer, message, by) in cases {
        let (h, runs) = asking(Some(Approver::answering(answer)));
        let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
        let f = failure(&out);
        assert_eq!(f.code(), ErrorCode::Denied);
        assert_eq!(f.message(), message);
        assert!(!f.message().contains("you "), "does not blame the user");
        let provenance = out.provenance.as_ref().unwrap();
        assert_eq!(provenance.hook, APPROVAL_STAGE);
        assert_eq!(provenance.listener.as_deref(), Some(by));
        assert_eq!(runs.load(Ordering::SeqCst), 0);
        assert_eq!(h.stages("c"), APPROVAL_DENIED);
    }
}

// PRE-007: no approval service installed.
#[tokio::test]
async fn ask_without_an_approval_service_is_denied() {
    let (h, runs) = asking(None);
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Denied);
    assert!(
        f.message().contains("no approver is available"),
        "{}",
        f.message()
    );
    assert!(
        f.message().contains("no approval service is installed"),
        "{}",
        f.message()
    );
    assert_eq!(decided_by(&out), Some("no approver"));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

// Bad input: an approval service that panics. PRE-013 (tack: fail closed as DENIED)
#[tokio::test]
async fn panicking_approval_service_is_a_denial() {
    for behaviour in [Behaviour::Panic, Behaviour::PanicEagerly] {
        let (h, runs) = asking(Some(Approver::new(behaviour)));
        let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
        let f = failure(&out);
        assert_eq!(f.code(), ErrorCode::Denied, "{out:?}");
        assert!(
            f.message().contains("the approval service failed"),
            "{}",
            f.message()
        );
        assert!(
            f.message().contains("the approver blew up"),
            "{}",
            f.message()
        );
        assert_eq!(decided_by(&out), Some("panicked"));
        assert_eq!(runs.load(Ordering::SeqCst), 0);
        assert_eq!(h.stages("c"), APPROVAL_DENIED);
        assert_eq!(h.observed("c").len(), 1);
    }
}

// Bad input: an approval service that never answers before cancellation. PRE-008
#[tokio::test(start_paused = true)]
async fn approval_that_never_answers_ends_cancelled_when_the_caller_cancels() {
    let approver = Approver::new(Behaviour::Never);
    let (h, runs) = asking(Some(approver.clone()));
    // Let the call reach the approver, then cancel.
    let out = h
        .call_cancelled_when(ToolCall::new("c", "echo", r#"{"text": "a"}"#), || {
            !approver.requests.lock().is_empty()
        })
        .await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Cancelled);
    assert!(!f.dispatched());
    assert!(f.message().contains("nothing was done"), "{}", f.message());
    assert_eq!(out.provenance.as_ref().unwrap().hook, APPROVAL_STAGE);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(h.stages("c"), APPROVAL_DENIED);
    assert_eq!(h.observed("c").len(), 1);
}

// PRE-008: a grant that arrives after the caller cancelled does not run the body.
#[tokio::test]
async fn a_grant_after_cancellation_does_not_run_the_body() {
    let (h, runs) = Harness::with_counted_echo("echo");
    h.provide_approval(Approver::answering(ApprovalOutcome::AllowedOnce));
    let cancel = CancellationToken::new();
    let inside = cancel.clone();
    let _gate = h.hooks().pre_execute().tap("gate", move |_exec, _next| {
        // The caller gives up while the question is being put.
        inside.cancel();
        async move { PreDecision::ask("confirm") }
    });
    let out = h.call_with("c", "echo", r#"{"text": "a"}"#, cancel).await;
    assert_eq!(out.error_code(), Some(ErrorCode::Cancelled));
    assert!(!failure(&out).dispatched());
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

// An approver's rewrite (`AllowedRewritten`) runs, checked and recorded, and
// `tools/pre-execute` judges it again.
#[tokio::test]
async fn allowed_rewritten_runs_the_approvers_arguments_checked_and_judged_again() {
    let rewritten = |text: serde_json::Value| {
        Approver::answering(ApprovalOutcome::AllowedRewritten {
            arguments: json!({ "text": text }),
            by: "hook".into(),
        })
    };
    // Checked and recorded.
    let (h, runs) = Harness::with_counted_echo("echo");
    h.provide_approval(rewritten(json!("changed")));
    let seen = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
    let judged = seen.clone();
    h.hooks().pre_execute().tap("gate", move |exec, _next| {
        let text = exec.arguments()["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        judged.lock().push(text.clone());
        std::future::ready(match text.as_str() {
            "forbidden" => PreDecision::deny("not that"),
            _ => PreDecision::ask("echo has side effects"),
        })
    });
    let out = h.call("c", "echo", r#"{"text": "asked"}"#).await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(text(&out), "changed");
    let original = out.original_arguments().expect("recorded");
    assert_eq!(**original, json!({"text": "asked"}));
    assert_eq!(
        **out.rewritten_arguments().unwrap(),
        json!({"text": "changed"})
    );
    assert_eq!(*seen.lock(), ["asked", "changed"], "judged again");

    // A rewrite tools/pre-execute denies does not run.
    h.provide_approval(rewritten(json!("forbidden")));
    let out = h.call("d", "echo", r#"{"text": "asked"}"#).await;
    assert_eq!(out.error_code(), Some(ErrorCode::Denied), "{out:?}");
    assert!(failure(&out).message().contains("not that"));
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // An invalid rewrite never runs.
    h.provide_approval(rewritten(json!(5)));
    let out = h.call("e", "echo", r#"{"text": "asked"}"#).await;
    assert_eq!(out.error_code(), Some(ErrorCode::Internal), "{out:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}
