//! Cancellation before and after dispatch (CAN-*).

use std::sync::atomic::Ordering;

use serde_json::json;
use tack_core::hooks::{ExecuteOutput, PostDecision};
use tack_core::policy::PreDecision;
use tack_core::tool::{ErrorCode, ToolError};
use tack_pipeline::LATE_CANCELLATION_NOTE;
use tokio_util::sync::CancellationToken;

use crate::harness::*;
use crate::listeners::*;
use crate::stage_paths::*;

// CAN-001 (tack differs, docs/design.md #4: post-execute and finalize still see the outcome)
#[tokio::test]
async fn pre_cancelled_call_runs_no_policy_and_publishes_once() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let log = Log::default();
    let _pre = log_and_delegate(h.hooks().pre_execute(), "pre", &log, |_| "pre".into());
    let _post = log_and_delegate(h.hooks().post_execute(), "post", &log, |_| "post".into());
    let out = h
        .call_with("c", "echo", r#"{"text": "a"}"#, cancelled())
        .await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Cancelled);
    assert!(!f.dispatched());
    assert!(
        f.message().contains("cancelled before the tool started"),
        "{}",
        f.message()
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(log.entries(), ["post"]);
    assert_eq!(h.stages("c"), BEFORE_POLICY);
    assert_eq!(h.observed("c").len(), 1);
}

/// Without policy and without a stage recorder admission decides without
/// looking at the signal (the body's start looks): a pre-cancelled call still
/// never runs its body, ends `CANCELLED` as not dispatched with the same
/// message, and is published once, its late-cancellation note absent.
#[tokio::test]
async fn pre_cancelled_call_without_policy_or_recorder_never_runs() {
    use std::sync::{Arc, Mutex};
    use tack_core::tool::ToolCall;
    use tack_pipeline::{Pipeline, ToolRegistry};

    let (definition, runs) = counted_echo("echo");
    let registry = ToolRegistry::new();
    let _echo = registry.register(definition).unwrap();
    let pipeline = Pipeline::new(registry);
    let published = Arc::new(Mutex::new(Vec::new()));
    let seen = published.clone();
    let _observer = pipeline.hooks().result().tap("log", move |record| {
        seen.lock().unwrap().push(record.outcome.clone());
    });
    let out = pipeline
        .execute(ToolCall::new("c", "echo", r#"{"text": "a"}"#), cancelled())
        .await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Cancelled);
    assert!(!f.dispatched());
    assert_eq!(
        f.message(),
        "the call of tool `echo` was cancelled before the tool started; nothing was done"
    );
    assert!(out.notes.is_empty(), "{:?}", out.notes);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    {
        let published = published.lock().unwrap();
        assert_eq!(published.len(), 1);
        assert!(
            Arc::ptr_eq(&published[0], &out),
            "observers saw the outcome the caller got"
        );
    }

    // The same pipeline runs the next, uncancelled call.
    let ok = pipeline
        .execute(
            ToolCall::new("d", "echo", r#"{"text": "b"}"#),
            CancellationToken::new(),
        )
        .await;
    assert!(ok.is_success(), "{ok:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(published.lock().unwrap().len(), 2);
}

/// A body sees the caller's signal through its context (moved into the
/// execution, not copied): a cancellation during the body reaches it, and the
/// pipeline reads the same signal after it.
#[tokio::test]
async fn the_body_and_the_pipeline_see_one_signal() {
    use tack_core::tool::ToolCall;
    use tack_pipeline::{Pipeline, ToolRegistry};

    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let registry = ToolRegistry::new();
    let _tool = registry
        .register(raw_tool(
            "waits",
            echo_schema(),
            json!({"type": "string"}),
            move |_args, cx| {
                let trigger = trigger.clone();
                async move {
                    assert!(!cx.is_cancelled());
                    trigger.cancel();
                    cx.cancellation().cancelled().await;
                    Ok(json!("saw it"))
                }
            },
        ))
        .unwrap();
    let pipeline = Pipeline::new(registry);
    let out = pipeline
        .execute(ToolCall::new("c", "waits", r#"{"text": "a"}"#), cancel)
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(
        out.notes,
        [LATE_CANCELLATION_NOTE],
        "the pipeline saw it too"
    );
}

// CAN-002
#[tokio::test]
async fn cancellation_during_an_async_pre_gate_prevents_dispatch() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let cancel = CancellationToken::new();
    let inside = cancel.clone();
    let _gate = h
        .hooks()
        .pre_execute()
        .tap("slow-gate", move |_exec, _next| {
            let inside = inside.clone();
            async move {
                tokio::task::yield_now().await;
                inside.cancel();
                PreDecision::allow()
            }
        });
    let out = h.call_with("c", "echo", r#"{"text": "a"}"#, cancel).await;
    assert_eq!(out.error_code(), Some(ErrorCode::Cancelled));
    assert!(!failure(&out).dispatched());
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

// Step 5 also re-checks after the guards settle.
#[tokio::test]
async fn cancellation_during_an_async_guard_prevents_dispatch() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let cancel = CancellationToken::new();
    let inside = cancel.clone();
    let _guard = h.hooks().guard_async("slow-guard", move |_exec| {
        let inside = inside.clone();
        async move {
            inside.cancel();
            Ok(())
        }
    });
    let out = h.call_with("c", "echo", r#"{"text": "a"}"#, cancel).await;
    assert_eq!(out.error_code(), Some(ErrorCode::Cancelled));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(h.stages("c"), GUARD_DENIED);
}

// CAN-004
#[tokio::test]
async fn wrapper_that_delegates_after_cancellation_does_not_start_the_body() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let cancel = CancellationToken::new();
    let inside = cancel.clone();
    let _wrap = h.hooks().execute().tap("slow-wrapper", move |req, next| {
        inside.cancel();
        next.run(req)
    });
    let out = h.call_with("c", "echo", r#"{"text": "a"}"#, cancel).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Cancelled);
    assert!(!f.dispatched());
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

// CAN-005: a wrapper's answer for a body that never ran is replaced after
// cancellation; the wrapper's deferred context is kept.
#[tokio::test]
async fn wrapper_short_circuit_after_cancellation_is_cancelled_and_keeps_context() {
    let h = Harness::with_tool(echo("echo"));
    let cancel = CancellationToken::new();
    let inside = cancel.clone();
    let _wrap = h.hooks().execute().tap("cache", move |req, _next| {
        inside.cancel();
        req.context().defer_context("served from cache");
        async move { ExecuteOutput::ok(json!("cached")) }
    });
    let out = h.call_with("c", "echo", r#"{"text": "a"}"#, cancel).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Cancelled);
    assert!(!f.dispatched());
    assert_eq!(out.deferred_context, ["served from cache"]);
}

// CAN-006 / CAN-008 (tack differs, docs/design.md #5: a completed success is kept, with a note)
#[tokio::test]
async fn success_completed_before_cancellation_is_kept_with_a_note() {
    let cancel = CancellationToken::new();
    let inside = cancel.clone();
    let h = Harness::with_tool(raw_tool(
        "work",
        json!({"type": "object"}),
        json!({"type": "string"}),
        move |_a, cx| {
            let inside = inside.clone();
            async move {
                cx.defer_context("wrote 3 files");
                // The caller gives up just as the work completes.
                inside.cancel();
                Ok(json!("done"))
            }
        },
    ));
    let out = h.call_with("c", "work", "{}", cancel).await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.value().unwrap(), &json!("done"));
    assert_eq!(out.notes, [LATE_CANCELLATION_NOTE]);
    assert_eq!(out.deferred_context, ["wrote 3 files"]);
}

// CAN-006: the caller cancels while a wrapper is still finishing.
#[tokio::test]
async fn success_kept_when_cancelled_while_a_wrapper_finishes() {
    let h = Harness::with_tool(echo("echo"));
    let cancel = CancellationToken::new();
    let _wrap = cancel_after_call(&h, "finishing", cancel.clone(), |out| out);
    let out = h.call_with("c", "echo", r#"{"text": "a"}"#, cancel).await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.notes, [LATE_CANCELLATION_NOTE]);
}

// CAN-010: failures produced after cancellation keep their own code.
#[tokio::test]
async fn failures_after_cancellation_keep_their_own_code() {
    // A tool-owned failure.
    let cancel = CancellationToken::new();
    let inside = cancel.clone();
    let h = Harness::with_tool(open_tool("fails", move |_a, _cx| {
        let inside = inside.clone();
        async move {
            inside.cancel();
            Err(ToolError::new("tool failure").with_kind("TOOL_FAILURE"))
        }
    }));
    let out = h.call_with("t", "fails", "{}", cancel).await;
    assert_eq!(out.error_code(), Some(ErrorCode::ExecutionFailed));
    assert_eq!(failure(&out).kind(), Some("TOOL_FAILURE"));

    // A wrapper failure.
    let h = Harness::with_tool(echo("echo"));
    let cancel = CancellationToken::new();
    let _wrap = cancel_after_call(&h, "wrapper", cancel.clone(), |_| {
        ExecuteOutput::err(ToolError::new("wrapper failure"))
    });
    let out = h.call_with("w", "echo", r#"{"text": "a"}"#, cancel).await;
    assert_eq!(out.error_code(), Some(ErrorCode::ExecutionFailed));
    assert_eq!(failure(&out).message(), "wrapper failure");

    // A post-policy failure.
    let h = Harness::with_tool(echo("echo"));
    let cancel = CancellationToken::new();
    let inside = cancel.clone();
    let _post = h.hooks().post_execute().tap("post", move |_input, _next| {
        inside.cancel();
        async move { PostDecision::accept().block("post failure") }
    });
    let out = h.call_with("p", "echo", r#"{"text": "a"}"#, cancel).await;
    assert_eq!(out.error_code(), Some(ErrorCode::Denied));
    assert_eq!(failure(&out).message(), "post failure");
}
