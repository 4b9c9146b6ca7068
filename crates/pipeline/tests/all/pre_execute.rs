//! `tools/pre-execute` (PRE-*).

use std::sync::atomic::Ordering;

use serde_json::json;
use tack_core::hook::Order;
use tack_core::hooks::{PostDecision, ToolHooks};
use tack_core::policy::PreDecision;
use tack_core::tool::ErrorCode;

use crate::harness::*;
use crate::listeners::*;
use crate::stage_paths::*;

// PRE-002
#[tokio::test]
async fn no_listener_or_delegating_listeners_allow() {
    let h = Harness::with_tool(echo("echo"));
    assert!(
        h.call("bare", "echo", r#"{"text": "a"}"#)
            .await
            .is_success()
    );
    let log = Log::default();
    for name in ["outer", "inner"] {
        log_and_delegate(h.hooks().pre_execute(), name, &log, move |_| name.into());
    }
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    assert!(out.is_success());
    assert_eq!(log.entries(), ["outer", "inner"], "registration order");
}

// PRE-002: a short-circuiting outer listener skips the rest of the chain.
#[tokio::test]
async fn short_circuiting_listener_skips_the_rest_of_the_chain() {
    let h = Harness::with_tool(echo("echo"));
    let log = Log::default();
    let _inner = log_and_delegate(h.hooks().pre_execute(), "inner", &log, |_| "inner".into());
    let _outer = answer_pre_at(
        &h,
        "outer",
        Order::EARLY,
        PreDecision::deny("outer says no"),
    );
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    assert_eq!(out.error_code(), Some(ErrorCode::Denied));
    assert!(log.entries().is_empty());
}

// PRE-003 (tack differs, docs/design.md #2: denials carry DENIED and provenance; docs/design.md #4: post-execute sees it)
#[tokio::test]
async fn denial_carries_code_reason_and_provenance_and_post_still_sees_it() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let log = Log::default();
    let _deny = answer_pre(&h, "permission", PreDecision::deny("denied by policy"));
    let _wrap = log_and_delegate(h.hooks().execute(), "wrapper", &log, |_| "wrapper".into());
    let _post = log_and_delegate(h.hooks().post_execute(), "audit", &log, |input| {
        format!("post:{:?}", input.outcome.error_code())
    });
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Denied);
    assert_eq!(f.message(), "denied by policy");
    assert!(!f.dispatched());
    assert_eq!(text(&out), "DENIED: denied by policy");
    let provenance = out.provenance.as_ref().unwrap();
    assert_eq!(provenance.hook, ToolHooks::PRE_EXECUTE);
    assert_eq!(provenance.listener.as_deref(), Some("permission"));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(
        log.entries(),
        ["post:Some(Denied)"],
        "no wrapper, post saw the denial"
    );
    assert_eq!(h.stages("c"), PRE_DENIED);
}

// docs/design.md #2: an audit listener that only adds context keeps the denial's provenance.
#[tokio::test]
async fn post_context_on_a_denial_keeps_who_denied() {
    let h = Harness::with_tool(echo("echo"));
    let _deny = answer_pre(&h, "permission", PreDecision::deny("no"));
    let _audit = answer_post(&h, "audit", PostDecision::accept().add_context("audited"));
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    assert_eq!(out.error_code(), Some(ErrorCode::Denied));
    assert_eq!(out.deferred_context, ["audited"]);
    let provenance = out.provenance.as_ref().unwrap();
    assert_eq!(provenance.hook, ToolHooks::PRE_EXECUTE, "{provenance}");
    assert_eq!(provenance.listener.as_deref(), Some("permission"));
}

// PRE-004 (tack: a panicking listener fails closed with INTERNAL naming it;
// docs/design.md #4 post-execute still sees the outcome)
#[tokio::test]
async fn panicking_pre_execute_listener_fails_closed_and_names_the_listener() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let _broken = h
        .hooks()
        .pre_execute()
        .tap("permission-hook", |_exec, _next| async move {
            if true {
                panic!("permission hook broke");
            }
            PreDecision::allow()
        });
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Internal);
    assert!(f.message().contains("permission-hook"), "{}", f.message());
    assert!(
        f.message().contains("permission hook broke"),
        "{}",
        f.message()
    );
    assert!(f.message().contains("not run"), "{}", f.message());
    assert_eq!(decided_by(&out), Some("permission-hook"));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(h.stages("c"), PRE_DENIED);
    assert_eq!(h.observed("c").len(), 1);
}

// PRE-011: listeners see frozen, valid arguments (there is no rewrite decision).
#[tokio::test]
async fn listeners_see_the_validated_arguments() {
    let h = Harness::with_tool(echo("echo"));
    let log = Log::default();
    let _pre = log_and_delegate(h.hooks().pre_execute(), "look", &log, |exec| {
        let entry = exec.arguments().to_string();
        assert_eq!(exec.arg_str("text"), Some("hi"));
        entry
    });
    let out = h.call("c", "echo", r#"{"text": "hi"}"#).await;
    assert_eq!(out.value().unwrap(), &json!("hi"));
    assert_eq!(log.entries(), [r#"{"text":"hi"}"#]);
}

// An empty denial still tells the model who denied which tool.
#[tokio::test]
async fn an_empty_denial_reason_is_replaced_by_one_naming_the_listener() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let _deny = answer_pre(&h, "permission", PreDecision::deny("  "));
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Denied);
    assert!(f.message().contains("permission"), "{}", f.message());
    assert!(
        f.message().contains("denied tool `echo`"),
        "{}",
        f.message()
    );
    assert!(
        f.message().contains("without giving a reason"),
        "{}",
        f.message()
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}
