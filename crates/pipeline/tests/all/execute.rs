//! `tools/execute` wrappers and the body (EXE-*), timeouts and body failures.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;
use tack_core::hook::Order;
use tack_core::hooks::{ExecuteOutput, ToolHooks};
use tack_core::tool::{ErrorCode, ToolCall, ToolError};
use tokio_util::sync::CancellationToken;

use crate::harness::*;
use crate::listeners::*;
use crate::stage_paths::*;

// Bad input: a tool that panics.
#[tokio::test]
async fn panicking_body_is_execution_failed_naming_the_tool() {
    let h = Harness::with_tool(panicking("boom"));
    let out = h.call("c", "boom", "{}").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::ExecutionFailed);
    assert_eq!(f.message(), "tool `boom` panicked: the body blew up");
    assert!(f.dispatched());
    assert_eq!(h.stages("c"), BODY_FAILED);
    assert_eq!(h.observed("c").len(), 1);
}

#[tokio::test]
async fn panicking_body_under_a_wrapper_is_still_execution_failed() {
    let h = Harness::with_tool(panicking("boom"));
    let _wrap = h.hooks().execute().tap("pass", |req, next| next.run(req));
    let out = h.call("c", "boom", "{}").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::ExecutionFailed, "{out:?}");
    assert_eq!(f.message(), "tool `boom` panicked: the body blew up");
}

// EXE-002 / RES-007: a body error reaches post-execute and keeps its code and kind.
#[tokio::test]
async fn body_error_keeps_its_code_and_kind_and_reaches_post_execute() {
    let h = Harness::with_tool(open_tool("disk", |_a, _c| async move {
        Err(ToolError::new("disk full").with_kind("ENOSPC"))
    }));
    let log = Log::default();
    let _wrap = h.hooks().execute().tap("pass", |req, next| next.run(req));
    let _post = audit_codes(&h, &log);
    let out = h.call("c", "disk", "{}").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::ExecutionFailed);
    assert_eq!(f.message(), "disk full");
    assert_eq!(f.kind(), Some("ENOSPC"));
    assert!(f.dispatched());
    assert_eq!(out.provenance, None, "the body's own failure");
    assert_eq!(log.entries(), ["Some(ExecutionFailed)"]);
    assert_eq!(h.stages("c"), BODY_FAILED);
}

// A body that hands on the pipeline's verdict about another call (read from
// that call's outcome) does not make it this call's verdict.
#[tokio::test]
async fn a_verdict_handed_on_from_another_call_is_this_calls_execution_failure() {
    let h = Harness::with_tool(echo("guarded"));
    let _deny = h
        .hooks()
        .pre_execute()
        .tap("no-guarded", |exec, next| async move {
            if exec.name() == "guarded" {
                tack_core::policy::PreDecision::deny("`guarded` is off limits")
            } else {
                next.run(exec).await
            }
        });
    let denied = h.call("d", "guarded", r#"{"text":"x"}"#).await;
    let verdict = failure(&denied).clone();
    assert_eq!(verdict.code(), ErrorCode::Denied);
    h.add(open_tool("relay", move |_a, _c| {
        let verdict = verdict.clone();
        async move { Err(verdict) }
    }));
    let out = h.call("c", "relay", "{}").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::ExecutionFailed, "{out:?}");
    assert_eq!(f.message(), "`guarded` is off limits");
    assert!(f.dispatched());
    assert_eq!(out.provenance, None, "no listener of this call decided");
    assert_eq!(h.stages("c"), BODY_FAILED);
}

// EXE-003: a short-circuit success is validated and rendered from its value.
#[tokio::test]
async fn wrapper_short_circuit_is_validated_and_rendered_from_the_value() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let _cache = answer_execute(&h, "cache", json!("short-circuited"));
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    assert_eq!(out.value().unwrap(), &json!("short-circuited"));
    assert_eq!(text(&out), "short-circuited");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let provenance = out.provenance.as_ref().unwrap();
    assert_eq!(provenance.hook, ToolHooks::EXECUTE);
    assert_eq!(provenance.listener.as_deref(), Some("cache"));
}

// EXE-004
#[tokio::test]
async fn wrapper_value_of_the_wrong_shape_is_output_invalid() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let _cache = answer_execute(&h, "stale-cache", json!({"y": 2}));
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    assert_eq!(out.error_code(), Some(ErrorCode::OutputInvalid));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

// EXE-006 (tack: a call runs against the snapshot its name resolved to; a
// tool unregistered mid-call still finishes that call, its output checked
// against the schema it was resolved with, and later calls do not see it)
#[tokio::test]
async fn a_call_resolved_before_its_tool_was_unregistered_completes_against_its_snapshot() {
    let h = Harness::new();
    let disposer = h.add_disposable(echo("echo"));
    let _wrap = h.hooks().execute().tap("unregister", move |_req, _next| {
        disposer.dispose();
        async move { ExecuteOutput::ok(json!("x")) }
    });
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(text(&out), "x");
    let later = h.call("d", "echo", r#"{"text": "a"}"#).await;
    assert_eq!(later.error_code(), Some(ErrorCode::UnknownTool));
}

// The snapshot still checks the output: a value of the wrong shape from a
// tool unregistered mid-call is OUTPUT_INVALID, not waved through.
#[tokio::test]
async fn a_snapshot_still_checks_the_output_schema() {
    let h = Harness::new();
    let disposer = h.add_disposable(echo("echo"));
    let _wrap = h.hooks().execute().tap("unregister", move |_req, _next| {
        disposer.dispose();
        async move { ExecuteOutput::ok(json!({"not": "a string"})) }
    });
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    assert_eq!(out.error_code(), Some(ErrorCode::OutputInvalid));
}

// EXE-007 (tack: a panicking wrapper is INTERNAL naming it, fail closed;
// docs/design.md #4 post-execute still sees it)
#[tokio::test]
async fn panicking_wrapper_is_internal_and_names_the_wrapper() {
    let h = Harness::with_tool(echo("echo"));
    let log = Log::default();
    let _post = audit_codes(&h, &log);
    let _wrap = h
        .hooks()
        .execute()
        .tap("broken-wrapper", |req, next| async move {
            let out = next.run(req).await;
            if out.result().is_ok() {
                panic!("wrapper broke");
            }
            out
        });
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Internal);
    assert!(f.message().contains("broken-wrapper"), "{}", f.message());
    assert!(f.message().contains("wrapper broke"), "{}", f.message());
    assert!(f.dispatched(), "the body had run");
    assert_eq!(decided_by(&out), Some("broken-wrapper"));
    assert_eq!(log.entries(), ["Some(Internal)"]);
}

// EXE-009 / EXE-010 / EXE-011: a wrapper's child signal reaches the body; the
// caller's cancellation still reaches it; the wrapper's own cancel does not
// cancel the caller.
#[tokio::test]
async fn wrapper_child_signal_is_fused_with_the_caller_signal() {
    let log = Log::default();
    let body = log.clone();
    let h = Harness::with_tool(open_tool("watch", move |_a, cx| {
        let body = body.clone();
        async move {
            cx.cancellation().cancelled().await;
            body.push("body saw cancellation");
            Ok(json!("stopped"))
        }
    }));
    let children = Arc::new(parking_lot::Mutex::new(Vec::<CancellationToken>::new()));
    let keep = children.clone();
    let _wrap = h.hooks().execute().tap("child", move |req, next| {
        let (req, child) = req.child_cancellation();
        keep.lock().push(child);
        next.run(req)
    });

    // The caller cancels: the body's (child) signal fires.
    let out = h
        .call_cancelled_when(ToolCall::new("c1", "watch", "{}"), || {
            !children.lock().is_empty()
        })
        .await;
    assert!(
        out.is_success(),
        "docs/design.md #5: the completed body's result is kept: {out:?}"
    );
    assert_eq!(log.entries(), ["body saw cancellation"]);

    // The wrapper cancels its child: the body stops, the caller is untouched.
    let caller = CancellationToken::new();
    let out = h
        .call_and_interrupt(
            ToolCall::new("c2", "watch", "{}"),
            caller.clone(),
            || children.lock().len() >= 2,
            || children.lock()[1].cancel(),
        )
        .await;
    assert!(out.is_success());
    assert!(!caller.is_cancelled());
    assert!(
        out.notes.is_empty(),
        "no caller cancellation, no note: {out:?}"
    );
}

// EXE-011: without a wrapper the body gets the caller's signal.
#[tokio::test]
async fn without_a_wrapper_the_body_gets_the_caller_signal() {
    let started = Log::default();
    let body = started.clone();
    let h = Harness::with_tool(open_tool("watch", move |_a, cx| {
        body.push("started");
        async move {
            cx.cancellation().cancelled().await;
            Err(ToolError::cancelled("stopped on request"))
        }
    }));
    let out = h
        .call_cancelled_when(ToolCall::new("c", "watch", "{}"), || {
            !started.entries().is_empty()
        })
        .await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Cancelled);
    assert!(f.dispatched(), "the body had started");
}

/// A `tools/execute` wrapper like the timeout plugin's.
fn timeout_wrapper(h: &Harness, budget: Duration) {
    h.hooks()
        .execute()
        .tap_with(
            "timeout",
            Order::EARLY,
            move |req, next| async move {
                let (req, child) = req.child_cancellation();
                tokio::select! {
                    out = next.run(req) => out,
                    () = tokio::time::sleep(budget) => {
                        child.cancel();
                        ExecuteOutput::err(ToolError::timeout(format!("tool call timed out after {} ms", budget.as_millis()),
                        ))
                    }
                }
            },
        )
        .unwrap();
}

// TIMEOUT: a hung body is ended by a wrapper.
#[tokio::test(start_paused = true)]
async fn hung_body_ends_in_timeout_from_the_wrapper() {
    let h = Harness::with_tool(hanging("hang"));
    h.add(echo("fast"));
    timeout_wrapper(&h, Duration::from_millis(100));
    let out = h.call("c", "hang", "{}").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Timeout);
    assert_eq!(f.message(), "tool call timed out after 100 ms");
    assert!(f.dispatched());
    assert_eq!(decided_by(&out), Some("timeout"));
    assert_eq!(h.stages("c"), BODY_FAILED);
    // TMO-002: a fast tool keeps its own result.
    let fast = h.call("f", "fast", r#"{"text": "ok"}"#).await;
    assert_eq!(fast.value().unwrap(), &json!("ok"));
}

// TMO-007 / CAN-010: a timeout that fired first stands when the caller cancels later.
#[tokio::test(start_paused = true)]
async fn timeout_stands_when_the_caller_cancels_afterwards() {
    let h = Harness::with_tool(hanging("slow"));
    let caller = CancellationToken::new();
    timeout_wrapper(&h, Duration::from_millis(50));
    // An outer wrapper cancels the caller's token after the deadline answered.
    let _outer = cancel_after_call_at(
        &h,
        "late-cancel",
        Order::ranked(1000),
        caller.clone(),
        |out| out,
    );
    let out = h.call_with("c", "slow", "{}", caller).await;
    assert_eq!(out.error_code(), Some(ErrorCode::Timeout), "{out:?}");
}
