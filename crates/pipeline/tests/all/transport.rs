//! The code-mode transport: the one tool allowed the reserved name `run_code`.

use serde_json::json;
use tack_core::hook::AgentId;
use tack_core::plugin::PluginError;
use tack_core::plugin::ToolRegistrar;
use tack_core::tool::{ErrorCode, ToolCall};
use tack_pipeline::{Pipeline, Presentation, ToolRegistry};
use tokio_util::sync::CancellationToken;

use crate::harness::*;

#[tokio::test]
async fn the_transport_is_shown_by_presentation_and_callable_where_shown() {
    let registry = ToolRegistry::new();
    let _echo = registry.register(echo("echo")).unwrap();
    let _run_code = registry.register_code_transport(echo("run_code")).unwrap();
    let coder = AgentId::new("coder");
    let both = AgentId::new("both");
    registry.set_presentation(Some(&coder), Presentation::Code);
    registry.set_presentation(Some(&both), Presentation::Both);

    assert_eq!(tool_names(&registry, None), ["echo"]);
    assert_eq!(tool_names(&registry, Some(&coder)), ["run_code"]);
    assert_eq!(tool_names(&registry, Some(&both)), ["echo", "run_code"]);
    let natives: Vec<String> = registry
        .native_tools(Some(&coder))
        .iter()
        .map(|t| t.definition().name().to_string())
        .collect();
    assert_eq!(natives, ["echo"], "what a code-mode SDK describes");

    let args = json!({"text": "hi"}).to_string();
    let direct = Pipeline::new(registry.clone())
        .execute(
            ToolCall::new("c1", "run_code", args.clone()),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(
        direct.error_code(),
        Some(ErrorCode::UnknownTool),
        "not shown under native"
    );
    let coded = Pipeline::new(registry.clone())
        .execute(
            ToolCall::new("c2", "run_code", args).with_agent(coder.clone()),
            CancellationToken::new(),
        )
        .await;
    assert!(coded.is_success(), "{coded:?}");
}

#[test]
fn only_one_transport_and_only_under_its_name() {
    let registry = ToolRegistry::new();
    let err = registry
        .register_code_transport(echo("not_run_code"))
        .unwrap_err();
    assert!(matches!(err, PluginError::ReservedTool { .. }), "{err}");
    let _first = registry.register_code_transport(echo("run_code")).unwrap();
    let err = ToolRegistrar::register_code_transport(&registry, echo("run_code")).unwrap_err();
    assert!(matches!(err, PluginError::DuplicateTool { .. }), "{err}");
    let err = registry.register(echo("run_code")).unwrap_err();
    assert!(matches!(err, PluginError::ReservedTool { .. }), "{err}");
}

#[test]
fn disposing_the_transport_removes_it() {
    let registry = ToolRegistry::new();
    registry.set_presentation(None, Presentation::Both);
    let transport = registry.register_code_transport(echo("run_code")).unwrap();
    assert_eq!(tool_names(&registry, None), ["run_code"]);
    transport.dispose();
    assert!(tool_names(&registry, None).is_empty());
}

/// CODE-003: a caller that already cancelled hears that first, even for a
/// direct native call that code presentation refuses.
#[tokio::test]
async fn a_pre_cancelled_direct_call_in_code_mode_is_cancelled() {
    let registry = ToolRegistry::new();
    let _echo = registry.register(echo("echo")).unwrap();
    registry.set_presentation(None, Presentation::Code);
    let cancel = cancelled();
    let args = json!({"text": "hi"}).to_string();
    let outcome = Pipeline::new(registry.clone())
        .execute(ToolCall::new("c1", "echo", args.clone()), cancel)
        .await;
    assert_eq!(outcome.error_code(), Some(ErrorCode::Cancelled));
    assert!(!outcome.failure_info().unwrap().dispatched());
    let refused = Pipeline::new(registry.clone())
        .execute(ToolCall::new("c2", "echo", args), CancellationToken::new())
        .await;
    assert_eq!(refused.error_code(), Some(ErrorCode::UnknownTool));
    assert!(refused.content[0].as_text().unwrap().contains("run_code"));
}
