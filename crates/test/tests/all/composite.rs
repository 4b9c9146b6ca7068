//! Composite tools under the harness: nested calls through the same
//! pipeline, the `run_code` slot and per-agent presentation, and execution
//! modes as a classifier.
#![allow(clippy::unwrap_used)]

use tack_core::CancellationToken;
use tack_core::plugin::{Plugin, PluginContext, PluginError};
use tack_core::policy::PreDecision;
use tack_core::serde_json::json;
use tack_core::tool::{ErrorCode, ToolCall};
use tack_test::{Call, ExecutionMode, FakeTool, Harness, Presentation, Stage};

/// Denies every call of `echo`.
struct NoEcho;

impl Plugin for NoEcho {
    fn name(&self) -> &str {
        "no-echo"
    }
    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        cx.hooks()
            .pre_execute()
            .tap("no-echo", |exec, next| async move {
                if exec.name() == "echo" {
                    return PreDecision::deny("no echo here");
                }
                next.run(exec).await
            });
        Ok(())
    }
}

/// A composite tool: calls each tool named in `calls` (`{"calls": [..]}`)
/// through its run context's dispatcher, ids `<its id>:<n>`, and returns
/// their error codes (`null` for a success).
fn composite(name: &str) -> FakeTool {
    FakeTool::new(name).body(|args, cx| async move {
        let dispatcher = cx.dispatcher().unwrap();
        let mut codes = Vec::new();
        for (n, tool) in args["calls"].as_array().unwrap().iter().enumerate() {
            let id = format!("{}:{n}", cx.call_id().as_str());
            let call = cx.nested_call(id, tool.as_str().unwrap(), "{}");
            let outcome = dispatcher.dispatch(call, cx.cancellation().clone()).await;
            codes.push(outcome.error_code().map(|c| json!(c.as_str())));
        }
        Ok(json!(codes))
    })
}

/// A plugin that registers `run_code` as the code transport: it calls the
/// tools named in `calls`, like [`composite`].
struct Transport;

impl Plugin for Transport {
    fn name(&self) -> &str {
        "transport"
    }
    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        let definition = composite("run_code").definition()?;
        cx.register_code_transport(definition)
    }
}

#[tokio::test]
async fn nested_calls_are_reported_under_the_call_that_made_them_and_nowhere_else() {
    let echo = FakeTool::new("echo").returns(json!("hi"));
    let h = Harness::builder()
        .tool(composite("both"))
        .tool(echo.clone())
        .tool(FakeTool::new("other"))
        .install(NoEcho)
        .unwrap();
    let calls = json!({"calls": ["other", "echo", "nope"]});
    // Two composite calls at once: each report holds its own nested calls.
    let (a, b) = tokio::join!(
        h.call(Call::new("both", calls.clone()).id("a")),
        h.call(Call::new("both", calls).id("b")),
    );
    for (report, id) in [(&a, "a"), (&b, "b")] {
        assert_eq!(
            report.value(),
            Some(&json!([null, "DENIED", "UNKNOWN_TOOL"])),
            "{report:?}"
        );
        let nested = report.nested();
        let ids: Vec<&str> = nested.iter().map(|r| r.call_id()).collect();
        assert_eq!(
            ids,
            [format!("{id}:0"), format!("{id}:1"), format!("{id}:2")]
        );
        // Each nested report is complete: stages, who decided, the body.
        assert!(nested[0].is_success() && nested[0].body_ran());
        assert!(nested[0].reached(Stage::PostExecute));
        assert!(nested[0].observed());
        assert_eq!(nested[1].tool(), "echo");
        assert_eq!(nested[1].decided_at(), Some(Stage::PreExecute));
        assert_eq!(nested[1].decided_by_listener(), Some("no-echo"));
        assert!(!nested[1].body_ran());
        assert_eq!(nested[2].error_code(), Some(ErrorCode::UnknownTool));
        assert!(nested[2].execution().is_none());
        // The parent token ties each reached execution to the outer call.
        let outer = report.execution().unwrap().token().clone();
        for nested in &nested[..2] {
            assert_eq!(nested.execution().unwrap().parent(), Some(&outer));
        }
    }
    assert_eq!(echo.runs(), 0);
    // A plain call made afterwards has none.
    let plain = h.call(Call::new("other", json!({}))).await;
    assert!(plain.nested().is_empty(), "{plain:?}");
}

#[tokio::test]
async fn the_code_transport_is_shown_and_callable_by_presentation_only() {
    let echo = FakeTool::new("echo").returns(json!("hi"));
    let h = Harness::builder()
        .tool(echo.clone())
        .agent_presentation("coder", Presentation::Code)
        .agent_presentation("both", Presentation::Both)
        .install(Transport)
        .unwrap();
    let names = |agent: &str| -> Vec<String> {
        h.schemas(Some(&agent.into()))
            .into_iter()
            .map(|s| s.name)
            .collect()
    };
    assert_eq!(names("coder"), ["run_code"]);
    assert_eq!(names("both"), ["echo", "run_code"]);
    assert_eq!(names("native"), ["echo"]);
    // What a program could call, whatever the presentation.
    for agent in ["coder", "both", "native"] {
        let natives: Vec<String> = h
            .native_tools(Some(&agent.into()))
            .iter()
            .map(|t| t.name().to_string())
            .collect();
        assert_eq!(natives, ["echo"], "{agent}");
    }

    // Under `code`: no direct native call, the body never runs ...
    let direct = h.call(Call::new("echo", json!({})).agent("coder")).await;
    assert_eq!(direct.error_code(), Some(ErrorCode::UnknownTool));
    assert!(!direct.reached(Stage::PreExecute));
    assert_eq!(echo.runs(), 0);
    // ... but a call from inside the transport runs.
    let run = h
        .call(Call::new("run_code", json!({"calls": ["echo"]})).agent("coder"))
        .await;
    assert_eq!(run.value(), Some(&json!([null])), "{run:?}");
    assert_eq!(run.nested()[0].value(), Some(&json!("hi")));
    assert_eq!(echo.runs(), 1);

    // Under `native` the transport is not there; under `both` both work.
    let native = h
        .call(Call::new("run_code", json!({"calls": []})).agent("native"))
        .await;
    assert_eq!(native.error_code(), Some(ErrorCode::UnknownTool));
    let both = h.call(Call::new("echo", json!({})).agent("both")).await;
    assert!(both.is_success(), "{both:?}");

    // A presentation changed at run time holds from the next call.
    h.set_presentation(Some(&"native".into()), Presentation::Code);
    assert_eq!(h.presentation(Some(&"native".into())), Presentation::Code);
    let direct = h.call(Call::new("echo", json!({})).agent("native")).await;
    assert_eq!(direct.error_code(), Some(ErrorCode::UnknownTool));
}

#[tokio::test]
async fn execution_modes_follow_the_tool_its_arguments_and_the_agent() {
    let read = FakeTool::new("read")
        .schema(json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}))
        .concurrency_safe(true);
    let builder = Harness::builder()
        .tool(read)
        .tool(FakeTool::new("write"))
        .agent_tool("reviewer", FakeTool::new("peek").concurrency_safe(true));
    let modes = builder.execution_modes();
    let classify = modes.classifier();
    let h = builder.install(NoEcho).unwrap();

    let cases = [
        ("read", r#"{"path": "a"}"#, None, ExecutionMode::Parallel),
        // Arguments that do not validate, or do not parse: exclusive.
        ("read", r#"{"path": 1}"#, None, ExecutionMode::Exclusive),
        ("read", "{not json", None, ExecutionMode::Exclusive),
        // No classifier, or a tool the caller cannot see: exclusive.
        ("write", "{}", None, ExecutionMode::Exclusive),
        ("peek", "{}", None, ExecutionMode::Exclusive),
        ("peek", "{}", Some("reviewer"), ExecutionMode::Parallel),
    ];
    for (name, arguments, agent, mode) in cases {
        let mut call = Call::raw(name, arguments);
        let mut tool_call = ToolCall::new("c", name, arguments);
        if let Some(agent) = agent {
            call = call.agent(agent);
            tool_call = tool_call.with_agent(agent);
        }
        assert_eq!(h.execution_mode(&call), mode, "{call:?}");
        assert_eq!(modes.mode(&tool_call), mode, "{call:?}");
        assert_eq!(classify(&tool_call), mode == ExecutionMode::Parallel);
    }

    // The classifier holds the harness weakly: once it is gone, nothing is
    // parallel (and the plugin's copy kept nothing alive).
    drop(h);
    let read = ToolCall::new("c", "read", r#"{"path": "a"}"#);
    assert_eq!(modes.mode(&read), ExecutionMode::Exclusive);
    assert!(!classify(&read));
}

#[tokio::test]
async fn a_nested_call_after_the_harness_is_dropped_fails_instead_of_running() {
    let echo = FakeTool::new("echo");
    let h = Harness::builder()
        .tool(echo.clone())
        .install(NoEcho)
        .unwrap();
    // The dispatcher tool bodies get, kept past the harness.
    let dispatcher = h.capabilities().snapshot().dispatcher.clone().unwrap();
    let ok = dispatcher
        .dispatch(
            ToolCall::new("early", "echo", "{}"),
            CancellationToken::new(),
        )
        .await;
    // (NoEcho denies it: the dispatcher runs the plugin's policy too.)
    assert_eq!(ok.error_code(), Some(ErrorCode::Denied), "{ok:?}");
    drop(h);
    let late = dispatcher
        .dispatch(
            ToolCall::new("late", "echo", "{}"),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(late.error_code(), Some(ErrorCode::Internal), "{late:?}");
    assert!(
        late.failure_info()
            .unwrap()
            .message()
            .contains("harness was dropped"),
        "{late:?}"
    );
    assert_eq!(echo.runs(), 0);
}
