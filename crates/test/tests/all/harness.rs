//! The harness drives every stage of the real pipeline for one plugin and
//! reports what happened.

use std::sync::Arc;
use std::time::Duration;

use tack_core::CancellationToken;
use tack_core::async_trait;
use tack_core::plugin::{Plugin, PluginContext, PluginError};
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService, PreDecision};
use tack_core::serde_json::json;
use tack_core::tool::{ErrorCode, Tier, ToolError};
use tack_test::{Call, FakeTool, Harness, RECORDER, Stage};

type Install = dyn Fn(&mut PluginContext<'_>) -> Result<(), PluginError> + Send + Sync;

/// A plugin made of closures, so each test installs exactly what it needs.
struct Fixture {
    install: Box<Install>,
}

impl Fixture {
    fn new(
        install: impl Fn(&mut PluginContext<'_>) -> Result<(), PluginError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            install: Box::new(install),
        }
    }
}

impl Plugin for Fixture {
    fn name(&self) -> &str {
        "fixture"
    }
    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        (self.install)(cx)
    }
}

fn nothing() -> Fixture {
    Fixture::new(|_| Ok(()))
}

struct Answer(ApprovalOutcome);

#[async_trait]
impl ApprovalService for Answer {
    async fn request(&self, _: ApprovalRequest, _: CancellationToken) -> ApprovalOutcome {
        self.0.clone()
    }
}

fn asks() -> Fixture {
    Fixture::new(|cx| {
        cx.hooks()
            .pre_execute()
            .tap("asks", |_, _| async { PreDecision::ask("a human decides") });
        Ok(())
    })
}

#[tokio::test]
async fn a_plain_call_goes_through_every_stage_and_the_observers_see_its_outcome() {
    let echo = FakeTool::new("echo").body(|args, _| async move { Ok(args["text"].clone()) });
    let h = Harness::builder()
        .tool(echo.clone())
        .install(nothing())
        .unwrap();
    let r = h
        .call(Call::new("echo", json!({"text": "hi"})).id("c1"))
        .await;
    assert!(r.is_success(), "{r:?}");
    assert_eq!(r.value(), Some(&json!("hi")));
    assert_eq!(r.text(), "hi");
    assert!(r.body_ran());
    assert_eq!(echo.runs(), 1);
    assert_eq!(
        echo.last_arguments().as_deref(),
        Some(&json!({"text": "hi"}))
    );
    for stage in [
        Stage::Resolve,
        Stage::Parse,
        Stage::PreExecute,
        Stage::Guard,
        Stage::Execute,
        Stage::PostExecute,
        Stage::Result,
    ] {
        assert!(r.reached(stage), "{stage} missing from {:?}", r.stages());
    }
    assert!(!r.reached(Stage::Approval), "nobody asked");
    assert_eq!(r.decided_at(), None);
    assert!(r.observed());
    assert_eq!(r.execution().map(|e| e.call_id().as_str()), Some("c1"));
}

#[tokio::test]
async fn a_pre_execute_denial_is_reported_with_its_listener_and_the_body_never_runs() {
    let bash = FakeTool::new("bash").tier(Tier::Executes);
    let plugin = Fixture::new(|cx| {
        cx.hooks()
            .pre_execute()
            .tap("no-shell", |exec, next| async move {
                if exec.tier() == Tier::Executes {
                    return PreDecision::deny("no shell here");
                }
                next.run(exec).await
            });
        Ok(())
    });
    let h = Harness::builder()
        .tool(bash.clone())
        .install(plugin)
        .unwrap();
    let r = h.call(Call::new("bash", json!({}))).await;
    assert_eq!(r.error_code(), Some(ErrorCode::Denied));
    assert_eq!(r.message(), Some("no shell here"));
    assert_eq!(r.decided_at(), Some(Stage::PreExecute));
    assert_eq!(r.decided_by_listener(), Some("no-shell"));
    assert!(!r.reached(Stage::Execute));
    assert!(!r.body_ran());
    assert_eq!(bash.runs(), 0);
    assert!(r.observed(), "denials reach the result observers too");
}

#[tokio::test]
async fn an_ask_goes_to_the_approval_service() {
    let yes = Harness::builder()
        .tool(FakeTool::new("t"))
        .approval(Arc::new(Answer(ApprovalOutcome::AllowedOnce)))
        .install(asks())
        .unwrap();
    let r = yes.call(Call::new("t", json!({}))).await;
    assert!(r.is_success(), "{r:?}");
    assert!(r.reached(Stage::Approval));

    let no = Harness::builder()
        .tool(FakeTool::new("t"))
        .approval(Arc::new(Answer(ApprovalOutcome::Denied {
            reason: Some("not today".into()),
        })))
        .install(asks())
        .unwrap();
    let r = no.call(Call::new("t", json!({}))).await;
    assert_eq!(r.error_code(), Some(ErrorCode::Denied));
    assert_eq!(r.decided_at(), Some(Stage::Approval));
    assert!(!r.body_ran());
}

#[tokio::test]
async fn a_guard_denial_names_the_guard() {
    let plugin = Fixture::new(|cx| {
        cx.hooks().guard("no-secrets", |exec| {
            if exec.arg_str("path").is_some_and(|p| p.ends_with(".env")) {
                Err("secrets stay put".into())
            } else {
                Ok(())
            }
        });
        Ok(())
    });
    let read = FakeTool::new("read");
    let h = Harness::builder()
        .tool(read.clone())
        .install(plugin)
        .unwrap();
    let r = h.call(Call::new("read", json!({"path": ".env"}))).await;
    assert_eq!(r.error_code(), Some(ErrorCode::Denied));
    assert_eq!(r.decided_at(), Some(Stage::Guard));
    assert_eq!(r.decided_by_listener(), Some("no-secrets"));
    assert_eq!(read.runs(), 0);
    assert!(
        h.call(Call::new("read", json!({"path": "a.txt"})))
            .await
            .is_success()
    );
    assert_eq!(read.runs(), 1);
}

#[tokio::test]
async fn an_execute_wrapper_that_answers_for_the_body_is_reported_and_the_body_did_not_run() {
    let plugin = Fixture::new(|cx| {
        cx.hooks().execute().tap("cache", |_, _| async {
            tack_core::hooks::ExecuteOutput::ok(json!("cached"))
        });
        Ok(())
    });
    let slow = FakeTool::new("slow").returns(json!("fresh"));
    let h = Harness::builder()
        .tool(slow.clone())
        .install(plugin)
        .unwrap();
    let r = h.call(Call::new("slow", json!({}))).await;
    assert_eq!(r.value(), Some(&json!("cached")));
    assert_eq!(r.decided_at(), Some(Stage::Execute));
    assert_eq!(r.decided_by_listener(), Some("cache"));
    assert!(!r.body_ran());
    assert_eq!(slow.runs(), 0);
}

#[tokio::test]
async fn a_post_execute_block_turns_the_success_into_a_denial() {
    let plugin = Fixture::new(|cx| {
        cx.hooks()
            .post_execute()
            .tap("redact", |input, next| async move {
                next.run(input).await.block("the output held a secret")
            });
        Ok(())
    });
    let h = Harness::builder()
        .tool(FakeTool::new("cat").returns(json!("AKIA...")))
        .install(plugin)
        .unwrap();
    let r = h.call(Call::new("cat", json!({}))).await;
    assert_eq!(r.error_code(), Some(ErrorCode::Denied));
    assert_eq!(r.decided_at(), Some(Stage::PostExecute));
    assert!(
        r.body_ran(),
        "the body ran; its output was blocked afterwards"
    );
    assert!(!r.text().contains("AKIA"), "{}", r.text());
}

#[tokio::test]
async fn a_tool_error_and_bad_arguments_are_outcomes_too() {
    let h = Harness::builder()
        .tool(FakeTool::new("broken").fails(ToolError::new("disk on fire")))
        .tool(FakeTool::new("strict").schema(json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"]
        })))
        .install(nothing())
        .unwrap();
    let r = h.call(Call::new("broken", json!({}))).await;
    assert_eq!(r.error_code(), Some(ErrorCode::ExecutionFailed));
    assert_eq!(r.text(), "EXECUTION_FAILED: disk on fire");
    assert!(r.body_ran());

    let r = h.call(Call::new("strict", json!({"n": "seven"}))).await;
    assert_eq!(r.error_code(), Some(ErrorCode::InvalidArguments));
    assert!(
        r.execution().is_none(),
        "no execution for invalid arguments"
    );
    assert!(!r.reached(Stage::PreExecute));

    let r = h.call(Call::raw("strict", "{not json")).await;
    assert_eq!(r.error_code(), Some(ErrorCode::InvalidArguments));

    let r = h.call(Call::new("nope", json!({}))).await;
    assert_eq!(r.error_code(), Some(ErrorCode::UnknownTool));
}

#[tokio::test]
async fn agent_tools_are_visible_to_their_agent_only() {
    let h = Harness::builder()
        .agent_tool("reviewer", FakeTool::new("review"))
        .install(nothing())
        .unwrap();
    assert!(
        h.call(Call::new("review", json!({})).agent("reviewer"))
            .await
            .is_success()
    );
    let r = h.call(Call::new("review", json!({})).agent("writer")).await;
    assert_eq!(r.error_code(), Some(ErrorCode::UnknownTool));
}

#[tokio::test]
async fn uninstalling_removes_the_plugin_and_reinstalling_brings_it_back() {
    let plugin = Fixture::new(|cx| {
        cx.hooks()
            .pre_execute()
            .tap("deny-all", |_, _| async { PreDecision::deny("closed") });
        Ok(())
    });
    let mut h = Harness::builder()
        .tool(FakeTool::new("t"))
        .install(plugin)
        .unwrap();
    assert!(h.is_installed());
    assert!(!h.call(Call::new("t", json!({}))).await.is_success());
    h.uninstall();
    assert!(!h.is_installed());
    assert_eq!(h.hooks().pre_execute().listener_count(), 0);
    assert!(h.call(Call::new("t", json!({}))).await.is_success());
    h.install().unwrap();
    assert!(!h.call(Call::new("t", json!({}))).await.is_success());
    assert_eq!(h.plugin().name(), "fixture");
}

#[tokio::test]
async fn a_failing_install_is_an_error_and_leaves_nothing_behind() {
    let err = Harness::new(Fixture::new(|cx| {
        cx.hooks()
            .pre_execute()
            .tap("half", |_, _| async { PreDecision::allow() });
        Err(PluginError::install("fixture", "no config file"))
    }))
    .unwrap_err();
    assert!(err.to_string().contains("no config file"), "{err}");
}

#[tokio::test]
async fn the_harness_keeps_only_its_recorder_as_a_listener_of_its_own() {
    let h = Harness::new(nothing()).unwrap();
    assert_eq!(h.hooks().pre_execute().listener_count(), 0);
    assert_eq!(h.hooks().execute().listener_count(), 0);
    assert_eq!(h.hooks().post_execute().listener_count(), 0);
    assert_eq!(
        h.hooks().result().listener_names(None),
        [Arc::<str>::from(RECORDER)]
    );
}

#[tokio::test(start_paused = true)]
async fn the_callers_cancellation_reaches_the_body() {
    let tool = FakeTool::new("wait").body(|_, cx| async move {
        cx.cancellation().cancelled().await;
        Err(ToolError::cancelled("stopped"))
    });
    let h = Harness::builder()
        .tool(tool.clone())
        .install(nothing())
        .unwrap();
    let r = h
        .call_cancelled_when(
            Call::new("wait", json!({})),
            tokio::time::sleep(Duration::from_secs(5)),
        )
        .await;
    assert_eq!(r.error_code(), Some(ErrorCode::Cancelled));
    assert!(r.body_ran());
    assert!(r.failure().is_some_and(|f| f.dispatched()));
}

#[tokio::test]
async fn a_post_execute_listener_sees_the_outcome_so_far() {
    let plugin = Fixture::new(|cx| {
        cx.hooks()
            .post_execute()
            .tap("note", |input, next| async move {
                let ok = input.outcome.is_success();
                let decision = next.run(input).await;
                if ok {
                    decision.add_context("checked")
                } else {
                    decision
                }
            });
        Ok(())
    });
    let h = Harness::builder()
        .tool(FakeTool::new("t"))
        .install(plugin)
        .unwrap();
    let r = h.call(Call::new("t", json!({}))).await;
    assert!(r.is_success());
    assert_eq!(r.outcome().deferred_context.len(), 1);
}

#[tokio::test]
async fn a_test_can_add_its_listeners_before_the_plugin() {
    let plugin = Fixture::new(|cx| {
        cx.hooks().execute().tap_with(
            "inner",
            tack_core::hook::Order::after("outer"),
            |req, next| next.run(req),
        )?;
        Ok(())
    });
    let mut h = Harness::builder().uninstalled(plugin).unwrap();
    assert!(!h.is_installed());
    assert!(h.install().is_err(), "`outer` is not there yet");
    let _outer = h.hooks().execute().tap("outer", |req, next| next.run(req));
    h.install().unwrap();
    assert_eq!(
        h.hooks().execute().listener_names(None),
        [Arc::<str>::from("outer"), Arc::from("inner")]
    );
}
