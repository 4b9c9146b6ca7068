//! Monotonic guards (GRD-*).

use std::sync::atomic::Ordering;

use tack_core::hook::{AgentId, Order};
use tack_core::host::Guards;
use tack_core::policy::{ApprovalOutcome, PreDecision};
use tack_core::tool::ErrorCode;

use crate::harness::*;
use crate::listeners::*;
use crate::stage_paths::*;

// GRD-001 (tack differs, docs/design.md #2: DENIED with the guard's name)
#[tokio::test]
async fn a_later_guard_denies_after_one_passes() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let log = Log::default();
    let first = log.clone();
    let _g1 = h
        .pipeline
        .guards_add_sync_for_test("abstain", move |_exec| {
            first.push("abstain");
            Ok(())
        });
    let second = log.clone();
    let _g2 = h.hooks().guard_async("global-deny", move |_exec| {
        let second = second.clone();
        async move {
            second.push("global-deny");
            Err("global denial".into())
        }
    });
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Denied);
    assert_eq!(f.message(), "global denial");
    let provenance = out.provenance.as_ref().unwrap();
    assert_eq!(provenance.hook, Guards::STAGE);
    assert_eq!(provenance.listener.as_deref(), Some("global-deny"));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(log.entries(), ["abstain", "global-deny"]);
    assert_eq!(h.stages("c"), GUARD_DENIED);
}

trait GuardsExt {
    fn guards_add_sync_for_test(
        &self,
        name: &str,
        guard: impl Fn(&tack_core::tool::ToolExecution) -> Result<(), String> + Send + Sync + 'static,
    ) -> tack_core::hook::Disposer;
}

impl GuardsExt for tack_pipeline::Pipeline {
    fn guards_add_sync_for_test(
        &self,
        name: &str,
        guard: impl Fn(&tack_core::tool::ToolExecution) -> Result<(), String> + Send + Sync + 'static,
    ) -> tack_core::hook::Disposer {
        self.hooks().guard(name.to_owned(), guard)
    }
}

// GRD-002
#[tokio::test]
async fn an_early_allowing_listener_cannot_override_a_guard() {
    let h = Harness::with_tool(echo("echo"));
    let _force = answer_pre_at(
        &h,
        "force-allow",
        Order::ranked(i32::MAX),
        PreDecision::allow(),
    );
    let _guard = h
        .pipeline
        .guards_add_sync_for_test("terminal", |_| Err("terminal policy".into()));
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    assert_eq!(out.error_code(), Some(ErrorCode::Denied));
    assert_eq!(failure(&out).message(), "terminal policy");
}

// GRD-003
#[tokio::test]
async fn agent_scoped_guard_guards_only_its_agent() {
    let h = Harness::with_tool(echo("echo"));
    let _guard = h
        .hooks()
        .for_agent("a")
        .guard("a-only", |_| Err("not for a".into()));
    let run = |agent| h.call_as("c", "echo", r#"{"text": "x"}"#, agent);
    assert_eq!(run("a").await.error_code(), Some(ErrorCode::Denied));
    assert!(run("b").await.is_success());
    assert!(h.call("n", "echo", r#"{"text": "x"}"#).await.is_success());
}

// GRD-006
#[tokio::test]
async fn guards_do_not_run_after_a_denial_or_a_non_grant() {
    let h = Harness::with_tool(echo("echo"));
    h.add(echo("asked"));
    h.provide_approval(Approver::answering(ApprovalOutcome::Denied {
        reason: None,
    }));
    let log = Log::default();
    let seen = log.clone();
    let _guard = h.pipeline.guards_add_sync_for_test("watch", move |exec| {
        seen.push(exec.name());
        Err("guard reason".into())
    });
    let _pre = h
        .hooks()
        .pre_execute()
        .tap("pre", |exec, _next| async move {
            if exec.name() == "asked" {
                PreDecision::ask("confirm")
            } else {
                PreDecision::deny("pre reason")
            }
        });
    let denied = h.call("d", "echo", r#"{"text": "x"}"#).await;
    assert_eq!(failure(&denied).message(), "pre reason");
    let asked = h.call("a", "asked", r#"{"text": "x"}"#).await;
    assert_eq!(failure(&asked).message(), "the user declined tool `asked`");
    assert!(log.entries().is_empty());
}

// GRD-008 (tack differs, docs/design.md #4: post-execute sees a guard denial; a panicking guard
// fails closed with INTERNAL naming it, and post-execute sees that too)
#[tokio::test]
async fn guard_denial_is_post_visible_and_a_panicking_guard_fails_closed() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let log = Log::default();
    let _post = audit_codes(&h, &log);
    let _guard = h.pipeline.guards_add_sync_for_test("broken-guard", |exec| {
        if exec.arg_str("text") == Some("boom") {
            panic!("guard exploded");
        }
        Err("no".into())
    });
    let denied = h.call("d", "echo", r#"{"text": "x"}"#).await;
    assert_eq!(denied.error_code(), Some(ErrorCode::Denied));
    let broken = h.call("b", "echo", r#"{"text": "boom"}"#).await;
    let f = failure(&broken);
    assert_eq!(f.code(), ErrorCode::Internal);
    assert!(f.message().contains("broken-guard"), "{}", f.message());
    assert!(f.message().contains("guard exploded"), "{}", f.message());
    assert_eq!(broken.provenance.as_ref().unwrap().hook, Guards::STAGE);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(log.entries(), ["Some(Denied)", "Some(Internal)"]);
    assert_eq!(h.stages("b"), GUARD_DENIED);
}

// GRD-009 [DETAIL] (tack snapshots the guard list when a run starts: a guard
// added during a run applies from the next call on)
#[tokio::test]
async fn a_guard_added_during_a_run_applies_to_later_calls() {
    let h = Harness::with_tool(echo("echo"));
    let pipeline = h.pipeline.clone();
    let added = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
    let keep = added.clone();
    let _first = h.pipeline.guards_add_sync_for_test("first", move |_| {
        let mut keep = keep.lock();
        if keep.is_empty() {
            keep.push(pipeline.guards_add_sync_for_test("late", |_| Err("late denial".into())));
        }
        Ok(())
    });
    assert!(h.call("1", "echo", r#"{"text": "x"}"#).await.is_success());
    let second = h.call("2", "echo", r#"{"text": "x"}"#).await;
    assert_eq!(failure(&second).message(), "late denial");
}

// An empty guard denial still tells the model which guard refused which tool.
#[tokio::test]
async fn an_empty_guard_reason_is_replaced_by_one_naming_the_guard() {
    let h = Harness::with_tool(echo("echo"));
    let _guard = h
        .pipeline
        .guards_add_sync_for_test("quiet", |_| Err("".into()));
    let out = h.call("c", "echo", r#"{"text": "a"}"#).await;
    assert_eq!(out.error_code(), Some(ErrorCode::Denied));
    let message = &failure(&out).message();
    assert!(message.contains("quiet"), "{message}");
    assert!(
        message.contains("denied tool `echo` without giving a reason"),
        "{message}"
    );
}

/// The global layer's guards run first, then the agent's, each in its
/// registration order: an agent guard registered before the host's global
/// guard does not get to deny first, and the provenance names the guard
/// that denied.
#[tokio::test]
async fn global_guards_run_before_the_agents_whatever_the_registration_order() {
    let h = Harness::with_tool(echo("echo"));
    let log = Log::default();
    let guard = |name: &'static str, deny: bool| {
        let log = log.clone();
        move |_: &tack_core::tool::ToolExecution| {
            log.push(name);
            if deny {
                Err(format!("{name} denies"))
            } else {
                Ok(())
            }
        }
    };
    let hooks = h.hooks();
    let agent = hooks.for_agent("a");
    let _a1 = agent.guard("agent-first", guard("agent-first", true));
    let _g1 = hooks.guard("global-pass", guard("global-pass", false));
    let _a2 = agent.guard("agent-second", guard("agent-second", false));
    let _g2 = hooks.guard("global-deny", guard("global-deny", true));
    assert_eq!(
        hooks.guards().names(Some(&AgentId::new("a"))),
        ["global-pass", "global-deny", "agent-first", "agent-second"]
            .map(std::sync::Arc::<str>::from)
    );
    let out = h.call_as("c", "echo", r#"{"text": "x"}"#, "a").await;
    assert_eq!(failure(&out).message(), "global-deny denies");
    assert_eq!(
        out.provenance.as_ref().unwrap().listener.as_deref(),
        Some("global-deny")
    );
    assert_eq!(log.entries(), ["global-pass", "global-deny"]);

    // Without the global denial, the agent's own guards run, in their order.
    _g2.dispose();
    let out = h.call_as("d", "echo", r#"{"text": "x"}"#, "a").await;
    assert_eq!(
        out.provenance.as_ref().unwrap().listener.as_deref(),
        Some("agent-first")
    );
    assert_eq!(
        log.entries(),
        ["global-pass", "global-deny", "global-pass", "agent-first"]
    );
}
