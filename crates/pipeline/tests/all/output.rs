//! Output schema validation and render (OUT-*).

use serde_json::json;
use tack_core::tool::{Content, ContentBlock, ErrorCode, OutputSpec, ToolDefinition};

use crate::harness::*;
use crate::stage_paths::*;

// OUT-001
#[tokio::test]
async fn success_value_is_validated_and_rendered() {
    let h = Harness::with_tool(echo("echo"));
    let out = h.call("c", "echo", r#"{"text": "hi"}"#).await;
    assert!(out.is_success());
    assert_eq!(out.value().unwrap(), &json!("hi"));
    assert_eq!(out.content, [ContentBlock::text("hi")]);
}

// Bad input: a tool that returns a value violating its output schema. OUT-003
#[tokio::test]
async fn value_violating_the_output_schema_is_output_invalid() {
    let h = Harness::with_tool(raw_tool(
        "wrong_output",
        json!({"type": "object"}),
        json!({"type": "string"}),
        |_a, _c| async move { Ok(json!(42)) },
    ));
    let out = h.call("c", "wrong_output", "{}").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::OutputInvalid);
    assert!(
        f.message()
            .starts_with("tool `wrong_output` returned invalid output"),
        "{}",
        f.message()
    );
    assert!(f.message().contains("\"string\""), "{}", f.message());
    assert!(f.dispatched());
    assert!(out.value().is_none());
    assert_eq!(h.stages("c"), COMPLETED);
}

#[tokio::test]
async fn nested_output_violation_names_the_pointer() {
    let h = Harness::with_tool(raw_tool(
        "shape",
        json!({"type": "object"}),
        json!({"type": "object", "properties": {"items": {"type": "array", "items": {"type": "integer"}}}}),
        |_a, _c| async move { Ok(json!({"items": [1, "two"]})) },
    ));
    let out = h.call("c", "shape", "{}").await;
    assert_eq!(out.error_code(), Some(ErrorCode::OutputInvalid));
    assert_eq!(failure(&out).pointer(), Some("/items/1"));
}

// OUT-004: a renderer or meta projector that panics, or a renderer that fails.
#[tokio::test]
async fn panicking_or_failing_renderer_or_meta_is_output_invalid() {
    let h = Harness::new();
    let with = |name: &str, spec: OutputSpec| {
        ToolDefinition::builder(name)
            .description("d")
            .input_schema(json!({"type": "object"}))
            .output(spec)
            .handler(|_a, _c| async move { Ok(json!("v")) })
            .build()
            .unwrap()
    };
    h.add(with(
        "render",
        OutputSpec::new(json!({})).render(|_a, _v| -> Content { panic!("render broke") }),
    ));
    h.add(with(
        "meta",
        OutputSpec::new(json!({})).presentation_meta(|_a, _v| panic!("meta broke")),
    ));
    h.add(with(
        "refuses",
        OutputSpec::new(json!({}))
            .try_render(|_a, _v| -> Result<Content, String> { Err("not this value".into()) }),
    ));
    let out = h.call("r", "render", "{}").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::OutputInvalid);
    assert_eq!(
        f.message(),
        "tool `render` could not render its output or project its presentation meta: \
         output.render panicked: render broke"
    );
    assert_eq!(f.kind(), Some("render_panicked"));
    assert!(out.value().is_none());
    let out = h.call("m", "meta", "{}").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::OutputInvalid);
    assert!(f.message().contains("presentation meta"), "{}", f.message());
    assert!(
        f.message()
            .ends_with("output.presentation_meta panicked: meta broke"),
        "{}",
        f.message()
    );
    // A renderer's own error: its message, and a kind of its own.
    let out = h.call("x", "refuses", "{}").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::OutputInvalid);
    assert!(f.message().ends_with(": not this value"), "{}", f.message());
    assert_eq!(f.kind(), Some("render_failed"));
}

// Presentation meta is carried for UIs, beside the model content.
#[tokio::test]
async fn presentation_meta_is_carried_beside_the_content() {
    let h = Harness::with_tool(
        ToolDefinition::builder("edit")
            .description("d")
            .input_schema(json!({"type": "object"}))
            .output(
                OutputSpec::new(json!({})).presentation_meta(|_a, v| Ok(Some(json!({"diff": v})))),
            )
            .handler(|_a, _c| async move { Ok(json!("+1 -0")) })
            .build()
            .unwrap(),
    );
    let out = h.call("c", "edit", "{}").await;
    assert_eq!(out.presentation, Some(json!({"diff": "+1 -0"})));
}
