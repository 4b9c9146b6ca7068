//! Scope, shadowing, restrictions and code presentation (VIS-*).

use serde_json::json;
use tack_core::hook::AgentId;
use tack_core::host::NewExecutionToken;
use tack_core::policy::PreDecision;
use tack_core::tool::{ErrorCode, ToolCall};
use tack_pipeline::{Presentation, RUN_CODE, RestrictError, Restriction};
use tokio_util::sync::CancellationToken;

use crate::harness::*;
use crate::listeners::*;
use crate::stage_paths::*;

// VIS-001
#[tokio::test]
async fn scoped_tool_is_visible_and_executable_only_for_its_agent() {
    let h = Harness::new();
    let a = AgentId::new("a");
    let _mine = h.add_for(&a, echo("mine"));
    assert_eq!(h.names(Some(&a)), ["mine"]);
    assert!(h.names(Some(&AgentId::new("b"))).is_empty());
    assert!(h.names(None).is_empty());

    let run = |id, agent| h.call_for(id, "mine", r#"{"text": "x"}"#, agent);
    assert!(run("a1", Some("a")).await.is_success());
    let b = run("b1", Some("b")).await;
    let none = run("n1", None).await;
    let missing = h.call("m1", "nope", "{}").await;
    for hidden in [&b, &none] {
        assert_eq!(hidden.error_code(), Some(ErrorCode::UnknownTool));
        // Same message shape as a tool that does not exist.
        assert_eq!(
            failure(hidden).message().replace("mine", "NAME"),
            failure(&missing).message().replace("nope", "NAME")
        );
        assert_eq!(hidden.provenance, missing.provenance);
    }
    // Hidden and missing take the same path.
    assert_eq!(h.stages("b1"), h.stages("m1"));
}

// VIS-002
#[tokio::test]
async fn scoped_tool_shadows_a_global_one_in_either_order() {
    for scoped_first in [true, false] {
        let h = Harness::new();
        let a = AgentId::new("a");
        let scoped = || {
            raw_tool(
                "echo",
                echo_schema(),
                json!({"type": "string"}),
                |_a, _c| async move { Ok(json!("scoped")) },
            )
        };
        let _d1;
        let _d2;
        if scoped_first {
            _d1 = h.add_for(&a, scoped());
            _d2 = h.registry.register(echo("echo")).unwrap();
        } else {
            _d2 = h.registry.register(echo("echo")).unwrap();
            _d1 = h.add_for(&a, scoped());
        }
        assert_eq!(h.names(Some(&a)), ["echo"], "listed exactly once");
        let in_scope = h.call_as("a", "echo", r#"{"text": "global"}"#, "a").await;
        assert_eq!(in_scope.value().unwrap(), &json!("scoped"));
        let outside = h.call("g", "echo", r#"{"text": "global"}"#).await;
        assert_eq!(outside.value().unwrap(), &json!("global"));
    }
}

// VIS-004 (tack has no parent/child scopes: an agent sees the global layer
// plus its own; another agent's layer is never inherited)
#[test]
fn agent_sees_globals_and_its_own_layer_but_no_other_agent_layer() {
    let h = Harness::new();
    let (a, b) = (AgentId::new("a"), AgentId::new("b"));
    h.add(echo("shared"));
    let _a = h.add_for(&a, echo("only_a"));
    let _b = h.add_for(&b, echo("only_b"));
    assert_eq!(h.names(Some(&a)), ["only_a", "shared"]);
    assert_eq!(h.names(Some(&b)), ["only_b", "shared"]);
    assert_eq!(h.names(None), ["shared"]);
}

// VIS-007
#[test]
fn restrictions_intersect_and_lift_independently() {
    let h = Harness::new();
    for name in ["a", "b", "c"] {
        h.add(echo(name));
    }
    let agent = AgentId::new("x");
    let allow = h
        .registry
        .restrict(&agent, Restriction::allow(["a", "b"]))
        .unwrap();
    let _deny = h
        .registry
        .restrict(&agent, Restriction::deny(["b"]))
        .unwrap();
    assert_eq!(h.names(Some(&agent)), ["a"]);
    assert!(h.registry.get("b", Some(&agent)).is_none());
    allow.dispose();
    assert_eq!(h.names(Some(&agent)), ["a", "c"]);
    // Other agents are not restricted.
    assert_eq!(h.names(Some(&AgentId::new("y"))), ["a", "b", "c"]);
}

// VIS-009 (tack: restrict always names its agent, so "unscoped" cannot be expressed)
#[test]
fn restrict_fails_loud_on_empty_and_unknown_names() {
    let h = Harness::new();
    let agent = AgentId::new("x");
    assert_eq!(
        h.registry
            .restrict(&agent, Restriction::default())
            .unwrap_err(),
        RestrictError::Empty
    );
    let err = h
        .registry
        .restrict(&agent, Restriction::deny(["typo"]))
        .unwrap_err();
    assert!(err.to_string().contains("typo"), "{err}");
    assert!(err.to_string().contains("(none)"), "{err}");

    h.add(echo("read"));
    h.add(echo("grep"));
    let _own = h.add_for(&agent, echo("report"));
    // The agent's own tool is not inheritable.
    let err = h
        .registry
        .restrict(&agent, Restriction::allow(["report", "read"]))
        .unwrap_err();
    match &err {
        RestrictError::UnknownTools {
            unknown,
            inheritable,
            ..
        } => {
            assert_eq!(unknown, &["report"]);
            assert_eq!(inheritable, &["grep", "read"], "sorted");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        err.to_string()
            .contains("names tools it does not inherit: report; the global tools are: grep, read"),
        "{err}"
    );
}

// VIS-012
#[test]
fn agent_own_tools_are_exempt_from_its_restriction() {
    let h = Harness::with_tool(echo("read"));
    h.add(echo("write"));
    let agent = AgentId::new("child");
    let _own = h.add_for(&agent, echo("report"));
    let _mask = h
        .registry
        .restrict(&agent, Restriction::allow(["read"]))
        .unwrap();
    assert_eq!(h.names(Some(&agent)), ["read", "report"]);
}

#[tokio::test]
async fn a_restricted_tool_is_unknown_like_a_missing_one() {
    let (h, runs) = Harness::with_counted_echo("secret");
    let agent = AgentId::new("x");
    let _mask = h
        .registry
        .restrict(&agent, Restriction::deny(["secret"]))
        .unwrap();
    let out = h.call_as("c", "secret", r#"{"text": "x"}"#, "x").await;
    assert_eq!(out.error_code(), Some(ErrorCode::UnknownTool));
    assert!(
        failure(&out).message().starts_with("unknown tool `secret`"),
        "{out:?}"
    );
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(h.stages("c"), UNRESOLVED);
}

// VIS-013
#[tokio::test]
async fn agent_scoped_pre_execute_listener_gates_only_its_agent() {
    let h = Harness::with_tool(echo("echo"));
    let log = Log::default();
    let seen = log.clone();
    let _gate =
        h.hooks()
            .pre_execute()
            .for_agent(AgentId::new("a"))
            .tap("a-gate", move |exec, _next| {
                seen.push(
                    exec.agent()
                        .map(|a| a.as_str().to_owned())
                        .unwrap_or_default(),
                );
                async move { PreDecision::deny("agent a may not echo") }
            });
    let run = |agent| h.call_for("c", "echo", r#"{"text": "x"}"#, agent);
    assert_eq!(run(Some("a")).await.error_code(), Some(ErrorCode::Denied));
    assert!(run(Some("b")).await.is_success());
    assert!(run(None).await.is_success());
    assert_eq!(log.entries(), ["a"]);
}

// Code presentation: model-direct calls of native tools are unknown, naming run_code.
#[tokio::test]
async fn native_tool_called_directly_in_code_mode_is_unknown_and_names_run_code() {
    let (h, runs) = Harness::with_counted_echo("echo");
    let log = Log::default();
    let _pre = log_and_delegate(h.hooks().pre_execute(), "pre-log", &log, |_| "pre".into());
    let agent = AgentId::new("coder");
    h.registry
        .set_presentation(Some(&agent), Presentation::Code);
    let direct = h.call_as("d", "echo", r#"{"text": "x"}"#, "coder").await;
    assert_eq!(direct.error_code(), Some(ErrorCode::UnknownTool));
    assert!(failure(&direct).message().contains(RUN_CODE), "{direct:?}");
    assert_eq!(h.stages("d"), UNRESOLVED, "before any policy");
    assert!(log.entries().is_empty());
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 0);

    // With a parent token (a nested call from run_code) the tool runs.
    let parent = tack_core::tool::ExecutionToken::issue("outer".into());
    let nested = h
        .pipeline
        .execute(
            ToolCall::new("n", "echo", r#"{"text": "x"}"#)
                .with_agent("coder")
                .with_parent(parent),
            CancellationToken::new(),
        )
        .await;
    assert!(nested.is_success(), "{nested:?}");
    // Other agents keep native presentation.
    let other = h.call_as("o", "echo", r#"{"text": "x"}"#, "other").await;
    assert!(other.is_success(), "{other:?}");
}

#[tokio::test]
async fn a_malformed_tool_name_is_unknown_like_any_missing_one() {
    let h = Harness::new();
    let out = h.call("c", "no such/tool!", "{}").await;
    assert_eq!(out.error_code(), Some(ErrorCode::UnknownTool));
    assert!(
        failure(&out)
            .message()
            .starts_with("unknown tool `no such/tool!`: call one of the tools you were given"),
        "{out:?}"
    );
    assert_eq!(h.stages("c"), UNRESOLVED);
    assert_eq!(h.observed("c").len(), 1);
    // A huge hostile name: unknown too, and quoted short.
    let huge = format!("`{}", "x".repeat(100_000));
    let out = h.call("d", &huge, "{}").await;
    assert_eq!(out.error_code(), Some(ErrorCode::UnknownTool));
    assert!(
        failure(&out).message().len() < 400,
        "{}",
        failure(&out).message()
    );
    assert_eq!(h.stages("d"), UNRESOLVED);
}

#[tokio::test]
async fn both_presentation_still_allows_direct_calls() {
    let h = Harness::with_tool(echo("echo"));
    let agent = AgentId::new("both");
    h.registry
        .set_presentation(Some(&agent), Presentation::Both);
    assert_eq!(h.registry.presentation(Some(&agent)), Presentation::Both);
    let out = h.call_as("c", "echo", r#"{"text": "x"}"#, "both").await;
    assert!(out.is_success(), "{out:?}");
    // A registry-wide code default applies to agents without their own setting.
    h.registry.set_presentation(None, Presentation::Code);
    let out = h.call("d", "echo", r#"{"text": "x"}"#).await;
    assert_eq!(out.error_code(), Some(ErrorCode::UnknownTool));
    assert!(failure(&out).message().contains(RUN_CODE));
}
