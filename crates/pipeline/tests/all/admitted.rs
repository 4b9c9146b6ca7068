//! The admission mechanism: `ToolRegistry::execute_admitted` and
//! `ToolDispatcher::dispatch_admitted` report the end of a call's admission
//! (resolve, parse, validate, pre-execute, approval, guards) once, whatever
//! it decided, before the body starts.

use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::json;
use tack_core::capability::ToolDispatcher;
use tack_core::policy::PreDecision;
use tack_core::tool::{ErrorCode, ToolCall, ToolExecution};
use tokio_util::sync::CancellationToken;

use crate::harness::*;
use crate::listeners::*;

type Trail = Arc<Mutex<Vec<String>>>;

/// A harness with `work`, whose body logs `body`.
fn logged_work() -> (Harness, Trail) {
    let log: Trail = Arc::default();
    let body = log.clone();
    let h = Harness::with_tool(open_tool("work", move |_args, _cx| {
        body.lock().push("body".to_owned());
        async move { Ok(json!("done")) }
    }));
    let pre = log.clone();
    h.hooks()
        .pre_execute()
        .tap("policy", move |exec: Arc<ToolExecution>, next| {
            pre.lock().push("pre-execute".to_owned());
            next.run(exec)
        });
    (h, log)
}

async fn run(
    h: &Harness,
    log: &Trail,
    call: ToolCall,
    cancel: CancellationToken,
) -> Option<ErrorCode> {
    let admitted = log.clone();
    let outcome = h
        .pipeline
        .execute_admitted(call, cancel, move || {
            admitted.lock().push("admitted".to_owned())
        })
        .await;
    outcome.error_code()
}

#[tokio::test]
async fn an_allowed_call_is_admitted_after_policy_and_before_its_body() {
    let (h, log) = logged_work();
    let code = run(
        &h,
        &log,
        ToolCall::new("c", "work", "{}"),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(code, None);
    assert_eq!(*log.lock(), ["pre-execute", "admitted", "body"]);
}

#[tokio::test]
async fn every_refusal_reports_the_end_of_admission_once() {
    let cases = [
        (
            ToolCall::new("c", "nope", "{}"),
            CancellationToken::new(),
            ErrorCode::UnknownTool,
        ),
        (
            ToolCall::new("c", "work", "[1"),
            CancellationToken::new(),
            ErrorCode::InvalidArguments,
        ),
        (
            ToolCall::new("c", "work", "{}"),
            cancelled(),
            ErrorCode::Cancelled,
        ),
    ];
    for (call, cancel, expected) in cases {
        let (h, log) = logged_work();
        let code = run(&h, &log, call, cancel).await;
        assert_eq!(code, Some(expected));
        let entries = log.lock().clone();
        assert_eq!(
            entries.iter().filter(|e| *e == "admitted").count(),
            1,
            "{expected}: {entries:?}"
        );
        assert!(
            !entries.iter().any(|e| e == "body"),
            "{expected}: {entries:?}"
        );
    }
    // A denial by policy.
    let (h, log) = logged_work();
    answer_pre(&h, "deny", PreDecision::deny("no"));
    let code = run(
        &h,
        &log,
        ToolCall::new("c", "work", "{}"),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(code, Some(ErrorCode::Denied));
    assert_eq!(log.lock().iter().filter(|e| *e == "admitted").count(), 1);
}

#[tokio::test]
async fn a_call_dropped_during_admission_drops_the_callback_uncalled() {
    let h = Harness::with_tool(open_tool("work", |_a, _c| async move { Ok(json!(null)) }));
    h.hooks()
        .pre_execute()
        .tap("stuck", |_exec: Arc<ToolExecution>, _next| async move {
            futures::future::pending::<PreDecision>().await
        });
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let run = h.pipeline.execute_admitted(
        ToolCall::new("c", "work", "{}"),
        CancellationToken::new(),
        move || {
            let _ = tx.send(());
        },
    );
    let mut run = Box::pin(run);
    assert!(futures::poll!(run.as_mut()).is_pending());
    drop(run);
    assert!(rx.await.is_err(), "dropped, never called");
}

/// A composite tool reaches the same mechanism through its run context's
/// dispatcher: the nested call is admitted before its body runs.
#[tokio::test]
async fn the_nested_dispatcher_reports_admission_before_the_nested_body() {
    let (h, log) = logged_work();
    let outer_log = log.clone();
    h.add(open_tool("composite", move |_args, cx| {
        let log = outer_log.clone();
        async move {
            let call = cx.nested_call("c:1", "work", "{}");
            let admitted = log.clone();
            let outcome = cx
                .dispatcher()
                .unwrap()
                .dispatch_admitted(
                    call,
                    cx.cancellation().clone(),
                    Box::new(move || admitted.lock().push("nested admitted".to_owned())),
                )
                .await;
            assert!(outcome.is_success(), "{outcome:?}");
            Ok(json!(null))
        }
    }));
    let out = h.call("c", "composite", "{}").await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(
        *log.lock(),
        ["pre-execute", "pre-execute", "nested admitted", "body"],
        "the composite's own pre-execute, then the nested call's"
    );
}

/// The pipeline as a dispatcher (what a host may hand to a composite tool
/// directly) reports admission the same way.
#[tokio::test]
async fn the_pipeline_as_a_dispatcher_reports_admission_before_the_body() {
    let (h, log) = logged_work();
    let admitted = log.clone();
    let dispatcher: &dyn ToolDispatcher = &h.pipeline;
    let outcome = dispatcher
        .dispatch_admitted(
            ToolCall::new("c", "work", "{}"),
            CancellationToken::new(),
            Box::new(move || admitted.lock().push("admitted".to_owned())),
        )
        .await;
    assert!(outcome.is_success(), "{outcome:?}");
    assert_eq!(*log.lock(), ["pre-execute", "admitted", "body"]);
}
