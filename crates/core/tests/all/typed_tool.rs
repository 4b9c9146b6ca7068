//! Typed tools: schemas generated once, erased into a definition.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tack_core::context::ToolRunContext;
use tack_core::host::Capabilities;
use tack_core::host::{
    NewExecutionToken, NewOutcome, NewRunContext, NewToolError, NewToolExecution, RunEffects,
};
use tack_core::plugin::PluginError;
use tack_core::tool::{
    CallId, Content, ContentBlock, ErrorCode, ExecutionToken, Outcome, Tier, Tool, ToolDefinition,
    ToolError, ToolExecution,
};
use tokio_util::sync::CancellationToken;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// Path relative to the workspace.
    path: String,
    /// First line to read, from 1.
    offset: Option<u32>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct ReadOut {
    content: String,
    lines: u32,
}

struct FakeRead;

impl Tool for FakeRead {
    const NAME: &'static str = "read_file";
    type Args = ReadArgs;
    type Output = ReadOut;

    fn description(&self) -> &str {
        "Read a text file. Use when the user wants to see a file."
    }
    fn tier(&self) -> Tier {
        Tier::ReadOnly
    }
    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(2))
    }
    fn is_concurrency_safe(&self, args: &ReadArgs) -> bool {
        !args.path.is_empty()
    }
    async fn execute(&self, args: ReadArgs, cx: &ToolRunContext) -> Result<ReadOut, ToolError> {
        if args.path == "missing" {
            return Err(ToolError::new("no such file: missing").with_kind("ENOENT"));
        }
        cx.defer_context(format!("read {}", args.path));
        Ok(ReadOut {
            content: format!("contents of {}", args.path),
            lines: 1 + args.offset.unwrap_or(0),
        })
    }
    fn render(&self, args: &ReadArgs, output: &ReadOut) -> Content {
        Content::text(format!("{}: {}", args.path, output.content))
    }
    fn presentation_meta(&self, _args: &ReadArgs, output: &ReadOut) -> Option<Value> {
        Some(json!({"lines": output.lines}))
    }
    fn present_call(&self, args: &ReadArgs) -> Option<String> {
        Some(format!("read {}", args.path))
    }
    fn finalize_content(&self, outcome: &Outcome) -> Option<Content> {
        outcome
            .failure_info()
            .map(|f| Content::text(format!("read failed: {}", f.message())))
    }
}

fn context(args: Value) -> (ToolRunContext, RunEffects) {
    let exec = Arc::new(ToolExecution::new(
        CallId::from("c1"),
        tack_core::tool::ToolName::new("read_file").unwrap(),
        Arc::new(args),
        Tier::ReadOnly,
        ExecutionToken::issue(CallId::from("c1")),
    ));
    let effects = RunEffects::new();
    let cx = ToolRunContext::new(
        exec,
        Arc::new(Capabilities::default()),
        CancellationToken::new(),
        effects.clone(),
    );
    (cx, effects)
}

#[test]
fn schemas_are_generated_from_the_types() {
    let def = ToolDefinition::from_tool(FakeRead).unwrap();
    let input = def.input_schema();
    assert_eq!(input["type"], "object");
    assert_eq!(input["properties"]["path"]["type"], "string");
    assert_eq!(
        input["properties"]["path"]["description"],
        "Path relative to the workspace."
    );
    assert_eq!(input["required"], json!(["path"]));
    assert_eq!(input["additionalProperties"], json!(false));
    assert!(input.get("$schema").is_none() && input.get("title").is_none());
    assert_eq!(
        def.output().schema()["properties"]["lines"]["type"],
        "integer"
    );
    assert_eq!(def.tier(), Tier::ReadOnly);
    assert_eq!(def.timeout(), Some(Duration::from_secs(2)));
}

#[tokio::test]
async fn the_erased_handler_runs_the_typed_body() {
    let def = ToolDefinition::from_tool(FakeRead).unwrap();
    let args = json!({"path": "a.txt", "offset": 2});
    let (cx, effects) = context(args.clone());
    let value = def
        .handler()
        .call(Arc::new(args.clone()), cx)
        .await
        .unwrap();
    assert_eq!(value, json!({"content": "contents of a.txt", "lines": 3}));
    assert_eq!(effects.take_deferred(), ["read a.txt"]);

    let rendered = def.output().render_value(&args, &value).unwrap();
    assert_eq!(
        rendered,
        vec![ContentBlock::text("a.txt: contents of a.txt")]
    );
    assert_eq!(
        def.output().presentation_value(&args, &value).unwrap(),
        Some(json!({"lines": 3}))
    );
    assert_eq!(def.present_call(&args), "read a.txt");
}

#[tokio::test]
async fn body_errors_and_argument_mismatches_are_tool_errors() {
    let def = ToolDefinition::from_tool(FakeRead).unwrap();
    let (cx, _) = context(json!({}));
    let err = def
        .handler()
        .call(Arc::new(json!({"path": "missing"})), cx.clone())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ExecutionFailed);
    assert_eq!(err.kind(), Some("ENOENT"));

    let err = def
        .handler()
        .call(Arc::new(json!({"path": 3})), cx)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArguments);
    assert!(err.message().contains("read_file"), "{err}");
}

#[test]
fn classifier_and_finalizer_come_from_the_typed_tool() {
    let def = ToolDefinition::from_tool(FakeRead).unwrap();
    assert!(def.is_concurrency_safe(&json!({"path": "a"})));
    assert!(!def.is_concurrency_safe(&json!({"path": ""})));
    assert!(
        !def.is_concurrency_safe(&json!({"path": 1})),
        "arguments that do not parse are exclusive"
    );

    let failed = Outcome::failure(
        CallId::from("c"),
        "read_file",
        tack_core::tool::ToolError::from_code(ErrorCode::ExecutionFailed, "boom"),
    );
    assert_eq!(
        def.finalize_content(&failed),
        Some(Content::text("read failed: boom"))
    );
}

struct ScalarArgs;
impl Tool for ScalarArgs {
    const NAME: &'static str = "scalar";
    type Args = u32;
    type Output = u32;
    fn description(&self) -> &str {
        "Takes a bare number."
    }
    async fn execute(&self, args: u32, _cx: &ToolRunContext) -> Result<u32, ToolError> {
        Ok(args)
    }
}

#[test]
fn args_that_are_not_an_object_are_refused() {
    let err = ToolDefinition::from_tool(ScalarArgs).unwrap_err();
    assert!(
        matches!(err, PluginError::InputSchemaNotObjectType { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("`\"type\": \"integer\"`"), "{err}");
}

#[derive(Serialize, Deserialize)]
struct Unschematic;

impl JsonSchema for Unschematic {
    fn schema_name() -> Cow<'static, str> {
        "Unschematic".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        panic!("cannot describe this type")
    }
}

struct BadOutput;
impl Tool for BadOutput {
    const NAME: &'static str = "bad_output";
    type Args = ReadArgs;
    type Output = Unschematic;
    fn description(&self) -> &str {
        "Its output type has no schema."
    }
    async fn execute(&self, _: ReadArgs, _cx: &ToolRunContext) -> Result<Unschematic, ToolError> {
        Ok(Unschematic)
    }
}

#[test]
fn an_output_schema_that_cannot_be_generated_is_an_error_not_a_panic() {
    let err = ToolDefinition::from_tool(BadOutput).unwrap_err();
    assert_eq!(
        err,
        PluginError::SchemaGeneration {
            plugin: None,
            tool: "bad_output".into(),
            which: "output",
            message: "cannot describe this type".into()
        }
    );
}

struct BadName;
impl Tool for BadName {
    const NAME: &'static str = "bad name!";
    type Args = ReadArgs;
    type Output = u32;
    fn description(&self) -> &str {
        "Badly named."
    }
    async fn execute(&self, _: ReadArgs, _cx: &ToolRunContext) -> Result<u32, ToolError> {
        Ok(0)
    }
}

#[test]
fn an_invalid_typed_name_is_an_error() {
    let err = ToolDefinition::from_tool(BadName).unwrap_err();
    assert!(
        matches!(err, PluginError::InvalidToolNameCharacter { .. }),
        "{err}"
    );
}

/// Arguments that record the order their keys arrive in.
struct KeyOrder(Vec<String>);

impl<'de> Deserialize<'de> for KeyOrder {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = KeyOrder;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<KeyOrder, A::Error> {
                let mut keys = Vec::new();
                while let Some((key, _)) = map.next_entry::<String, serde::de::IgnoredAny>()? {
                    keys.push(key);
                }
                Ok(KeyOrder(keys))
            }
        }
        deserializer.deserialize_map(Keys)
    }
}

impl JsonSchema for KeyOrder {
    fn schema_name() -> Cow<'static, str> {
        "KeyOrder".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        schemars::json_schema!({"type": "object"})
    }
}

struct Order;

impl Tool for Order {
    const NAME: &'static str = "order";
    type Args = KeyOrder;
    type Output = Vec<String>;
    fn description(&self) -> &str {
        "List the argument keys in the order they were sent. Use to test."
    }
    async fn execute(
        &self,
        args: KeyOrder,
        _cx: &ToolRunContext,
    ) -> Result<Vec<String>, ToolError> {
        Ok(args.0)
    }
}

#[tokio::test]
async fn the_body_deserializes_from_the_exact_text() {
    let def = ToolDefinition::from_tool(Order).unwrap();
    let (value, cx) = order_call(r#"{"z": 1, "a": 2, "m": 3}"#);
    // The model's order, which the parsed value (a sorted map) does not keep.
    let out = def.handler().call(value, cx).await.unwrap();
    assert_eq!(out, json!(["z", "a", "m"]));
}

/// A context for one call of `order` with `text` as its arguments.
fn order_call(text: &str) -> (Arc<Value>, ToolRunContext) {
    let arguments = tack_core::host::Arguments::parse(text).unwrap();
    let value = arguments.value().clone();
    let exec = Arc::new(ToolExecution::new(
        CallId::from("c1"),
        tack_core::tool::ToolName::new("order").unwrap(),
        arguments,
        Tier::Executes,
        ExecutionToken::issue(CallId::from("c1")),
    ));
    let cx = ToolRunContext::new(
        exec,
        Arc::new(Capabilities::default()),
        CancellationToken::new(),
        RunEffects::new(),
    );
    (value, cx)
}

#[tokio::test]
async fn a_typed_tools_thread_copy_holds_nothing_of_the_original_handler() {
    use tack_core::host::ThreadCopy;
    let def = ToolDefinition::from_tool(Order).unwrap();
    let before = Arc::strong_count(def.handler());
    let copy = def.thread_copy();
    // A handler of its own (the typed tool's copier), not a wrapper around
    // the shared one: the copy's calls write no count the original's share.
    assert_eq!(Arc::strong_count(def.handler()), before);
    assert!(!Arc::ptr_eq(copy.handler(), def.handler()));
    assert_eq!(copy.name(), def.name());
    let (value, cx) = order_call(r#"{"b": 1, "a": 2}"#);
    let out = copy.handler().call(value, cx).await.unwrap();
    assert_eq!(out, json!(["b", "a"]));

    // A closure handler has no copier: its copy wraps the shared handler.
    let closure = ToolDefinition::builder("echo")
        .description("Repeat the arguments.")
        .input_schema(json!({"type": "object"}))
        .output(tack_core::tool::OutputSpec::new(json!({})))
        .handler(|args: Arc<Value>, _cx| async move { Ok((*args).clone()) })
        .build()
        .unwrap();
    let before = Arc::strong_count(closure.handler());
    let wrapped = closure.thread_copy();
    assert_eq!(Arc::strong_count(closure.handler()), before + 1);
    drop(wrapped);
    assert_eq!(Arc::strong_count(closure.handler()), before);
}
