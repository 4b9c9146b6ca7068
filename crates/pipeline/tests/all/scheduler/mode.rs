//! Execution-mode classification (MODE-002 … MODE-008).

use std::sync::Arc;

use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tack_core::context::ToolRunContext;
use tack_core::hook::{AgentId, Scope};
use tack_core::tool::{OutputSpec, Tool, ToolCall, ToolDefinition, ToolError};
use tack_pipeline::{ExecutionMode, Pipeline, Presentation, Restriction, ToolRegistry};

use super::harness::*;

fn tool(name: &str, classify: Option<fn(&Value) -> bool>) -> ToolDefinition {
    let mut builder = ToolDefinition::builder(name)
        .description("A test tool.")
        .input_schema(json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "write": {"type": "boolean"}},
            "required": ["path"]
        }))
        .output(OutputSpec::new(json!({})))
        .handler(|_args, _cx| async move { Ok(json!({})) });
    if let Some(classify) = classify {
        builder = builder.concurrency_safe(classify);
    }
    builder.build().unwrap()
}

/// How `r` would run a call of `name` with `args`.
fn mode(r: &ToolRegistry, name: &str, args: &str) -> ExecutionMode {
    Pipeline::new(r.clone()).execution_mode(&ToolCall::new("c", name, args))
}

/// How `r` would run a call of `name` with `args` on behalf of `agent`.
fn mode_as(r: &ToolRegistry, name: &str, args: &str, agent: &str) -> ExecutionMode {
    Pipeline::new(r.clone()).execution_mode(&ToolCall::new("c", name, args).with_agent(agent))
}

#[test]
fn no_classifier_is_exclusive() {
    // MODE-002
    let r = ToolRegistry::new();
    r.register(tool("plain", None)).unwrap();
    assert_eq!(
        mode(&r, "plain", r#"{"path": "a"}"#),
        ExecutionMode::Exclusive
    );
}

#[test]
fn the_classifier_decides_per_call_from_the_arguments() {
    // MODE-004
    let r = ToolRegistry::new();
    r.register(tool("fs", Some(|a| a["write"] != json!(true))))
        .unwrap();
    assert_eq!(mode(&r, "fs", r#"{"path": "a"}"#), ExecutionMode::Parallel);
    assert_eq!(
        mode(&r, "fs", r#"{"path": "a", "write": true}"#),
        ExecutionMode::Exclusive
    );
}

#[derive(Deserialize, JsonSchema)]
struct ReadArgs {
    #[allow(dead_code)]
    path: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct ReadOut {}

struct TypedRead(Arc<Mutex<usize>>);

impl Tool for TypedRead {
    const NAME: &'static str = "typed_read";
    type Args = ReadArgs;
    type Output = ReadOut;
    fn description(&self) -> &str {
        "Read."
    }
    fn is_concurrency_safe(&self, _args: &ReadArgs) -> bool {
        *self.0.lock() += 1;
        true
    }
    async fn execute(&self, _args: ReadArgs, _cx: &ToolRunContext) -> Result<ReadOut, ToolError> {
        Ok(ReadOut {})
    }
}

#[test]
fn invalid_or_unparseable_arguments_are_exclusive_without_asking_the_classifier() {
    // MODE-005
    let consulted = Arc::new(Mutex::new(0));
    let r = ToolRegistry::new();
    r.register(ToolDefinition::from_tool(TypedRead(consulted.clone())).unwrap())
        .unwrap();
    for bad in [r#"{"path": 1}"#, "{}", "not json", "[1]", r#"{"path": "#] {
        assert_eq!(
            mode(&r, "typed_read", bad),
            ExecutionMode::Exclusive,
            "{bad}"
        );
    }
    assert_eq!(
        *consulted.lock(),
        0,
        "the classifier never saw invalid arguments"
    );
    assert_eq!(
        mode(&r, "typed_read", r#"{"path": "a"}"#),
        ExecutionMode::Parallel
    );
    assert_eq!(*consulted.lock(), 1);
}

#[test]
fn a_panicking_or_false_classifier_is_exclusive() {
    // MODE-006 (a truthy non-boolean cannot be returned: the classifier returns `bool`)
    let r = ToolRegistry::new();
    r.register(tool("boom", Some(|_| panic!("classifier blew up"))))
        .unwrap();
    r.register(tool("no", Some(|_| false))).unwrap();
    assert_eq!(
        mode(&r, "boom", r#"{"path": "a"}"#),
        ExecutionMode::Exclusive
    );
    assert_eq!(mode(&r, "no", r#"{"path": "a"}"#), ExecutionMode::Exclusive);
}

#[test]
fn a_raw_classifier_gets_the_parsed_arguments_unchanged() {
    // MODE-007: exact numbers kept; one an f64 would round makes the call
    // exclusive (the pipeline refuses it).
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = seen.clone();
    let r = ToolRegistry::new();
    r.register(
        ToolDefinition::builder("raw")
            .description("Raw.")
            .input_schema(json!({"type": "object"}))
            .output(OutputSpec::new(json!({})))
            .concurrency_safe(move |args| {
                record.lock().push(args.to_string());
                true
            })
            .handler(|_args, _cx| async move { Ok(json!({})) })
            .build()
            .unwrap(),
    )
    .unwrap();
    let raw = r#"{"z": 1, "anything": 18446744073709551615, "a": 1.50}"#;
    assert_eq!(mode(&r, "raw", raw), ExecutionMode::Parallel);
    let saw: Value = serde_json::from_str(&seen.lock()[0]).unwrap();
    assert_eq!(saw, json!({"z": 1, "anything": u64::MAX, "a": 1.5}));
    let rounded = r#"{"anything": 123456789012345678901234567890}"#;
    assert_eq!(mode(&r, "raw", rounded), ExecutionMode::Exclusive);
    assert_eq!(seen.lock().len(), 1, "the classifier never saw it");
    // Empty argument text is `{}`, as in the pipeline.
    assert_eq!(mode(&r, "raw", ""), ExecutionMode::Parallel);
}

#[test]
fn hidden_unknown_and_code_mode_direct_calls_are_exclusive() {
    // MODE-008
    let r = ToolRegistry::new();
    let safe: fn(&Value) -> bool = |_| true;
    r.register(tool("read", Some(safe))).unwrap();
    r.register(tool("other", Some(safe))).unwrap();
    r.register_in(Scope::Agent(AgentId::new("a")), tool("mine", Some(safe)))
        .unwrap();
    let args = r#"{"path": "x"}"#;
    assert_eq!(mode(&r, "nope", args), ExecutionMode::Exclusive);
    assert_eq!(mode(&r, "bad name!", args), ExecutionMode::Exclusive);
    // Scoped to a: parallel for a, unknown (so exclusive) for b and for no agent.
    assert_eq!(mode_as(&r, "mine", args, "a"), ExecutionMode::Parallel);
    assert_eq!(mode_as(&r, "mine", args, "b"), ExecutionMode::Exclusive);
    assert_eq!(mode(&r, "mine", args), ExecutionMode::Exclusive);
    // Restricted away from b.
    r.restrict(AgentId::new("b"), Restriction::deny(["read"]))
        .unwrap();
    assert_eq!(mode_as(&r, "read", args, "b"), ExecutionMode::Exclusive);
    assert_eq!(mode_as(&r, "other", args, "b"), ExecutionMode::Parallel);
    // Code presentation: a model-direct native call is unknown, so exclusive.
    r.set_presentation(Some(&AgentId::new("c")), Presentation::Code);
    assert_eq!(mode_as(&r, "read", args, "c"), ExecutionMode::Exclusive);
}

#[test]
fn the_classifier_never_reaches_the_model() {
    let b = Bench::new();
    let schema = serde_json::to_value(&b.registry.schemas(None)[0]).unwrap();
    let mut keys: Vec<&String> = schema.as_object().unwrap().keys().collect();
    keys.sort_unstable();
    assert_eq!(keys, ["description", "name", "parameters"]);
    assert_eq!(ExecutionMode::Parallel.to_string(), "parallel");
}
