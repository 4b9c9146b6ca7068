//! Schema bombs: a schema nested past the limit is refused at build time with
//! a clear error, on an ordinary test thread, whatever its depth and however
//! the tool is defined; nothing recurses over it (not even its drop).

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tack_core::context::ToolRunContext;
use tack_core::host::schema_depth;
use tack_core::plugin::PluginError;
use tack_core::tool::{OutputSpec, Tool, ToolDefinition, ToolError};

/// `{"type": kind, key: inner}`, moving `inner` in (`json!` would copy it by
/// serializing it, which recurses).
fn wrap(kind: &str, key: &str, inner: Value) -> Value {
    let mut map = Map::new();
    map.insert("type".to_owned(), Value::from(kind));
    map.insert(key.to_owned(), inner);
    Value::Object(map)
}

/// An object schema whose property `a` nests `levels` object schemas deep
/// (two JSON levels each), built without recursion.
fn nested_schema(levels: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..levels {
        let mut properties = Map::new();
        properties.insert("a".to_owned(), schema);
        schema = wrap("object", "properties", Value::Object(properties));
    }
    schema
}

/// A schema of exactly `depth` JSON levels (`depth` >= 1).
fn schema_of_depth(depth: usize) -> Value {
    let mut schema = nested_schema((depth - 1) / 2);
    if depth % 2 == 0 {
        schema = wrap("object", "not", schema);
    }
    assert_eq!(schema_depth(&schema), depth);
    schema
}

fn with_input(schema: Value) -> Result<ToolDefinition, PluginError> {
    ToolDefinition::builder("deep")
        .description("A tool with a deep schema.")
        .input_schema(schema)
        .output(OutputSpec::new(json!({})))
        .handler(|_, _| async { Ok(json!(null)) })
        .build()
}

fn with_output(schema: Value) -> Result<ToolDefinition, PluginError> {
    ToolDefinition::builder("deep")
        .description("A tool with a deep output schema.")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(schema))
        .handler(|_, _| async { Ok(json!(null)) })
        .build()
}

#[test]
fn a_schema_at_the_limit_builds() {
    with_input(schema_of_depth(ToolDefinition::MAX_SCHEMA_DEPTH)).unwrap();
    with_output(schema_of_depth(ToolDefinition::MAX_SCHEMA_DEPTH)).unwrap();
}

#[test]
fn input_schemas_past_the_limit_are_refused_at_any_depth() {
    for depth in [ToolDefinition::MAX_SCHEMA_DEPTH + 1, 600, 10_000, 100_000] {
        let err = with_input(schema_of_depth(depth)).unwrap_err();
        assert_eq!(
            err,
            PluginError::SchemaTooDeep {
                plugin: None,
                tool: "deep".into(),
                which: "input",
                limit: ToolDefinition::MAX_SCHEMA_DEPTH
            }
        );
        let text = err.to_string();
        assert!(text.contains("input schema of tool `deep`"), "{text}");
        assert!(text.contains("deeper than 64 levels"), "{text}");
        assert!(text.contains("flatten it"), "{text}");
    }
}

#[test]
fn output_schemas_past_the_limit_are_refused_at_any_depth() {
    for depth in [ToolDefinition::MAX_SCHEMA_DEPTH + 1, 600, 10_000, 100_000] {
        let err = with_output(schema_of_depth(depth)).unwrap_err();
        assert!(
            matches!(
                err,
                PluginError::SchemaTooDeep {
                    which: "output",
                    ..
                }
            ),
            "{err}"
        );
    }
}

#[test]
fn deep_arrays_are_measured_like_objects() {
    let mut items = json!({"type": "string"});
    for _ in 0..100_000 {
        items = wrap("array", "prefixItems", Value::Array(vec![items]));
    }
    let err = with_output(items).unwrap_err();
    assert!(matches!(err, PluginError::SchemaTooDeep { .. }), "{err}");
}

#[test]
fn a_builder_or_output_dropped_with_a_deep_schema_does_not_overflow() {
    let builder = ToolDefinition::builder("deep").input_schema(nested_schema(100_000));
    drop(builder);
    let output = OutputSpec::new(nested_schema(100_000));
    assert_eq!(output.schema(), &Value::Null);
    drop(output);
}

#[test]
fn the_limit_holds_whatever_else_is_wrong_with_the_definition() {
    // No handler, a bad name: the deep schema is still freed safely.
    let err = ToolDefinition::builder("bad name")
        .input_schema(nested_schema(100_000))
        .output(OutputSpec::new(nested_schema(100_000)))
        .build()
        .unwrap_err();
    assert!(
        matches!(err, PluginError::InvalidToolNameCharacter { .. }),
        "{err}"
    );
}

/// A type whose hand-written `JsonSchema` nests `LEVELS` object levels deep.
#[derive(Serialize, Deserialize)]
struct Deep<const LEVELS: usize>;

impl<const LEVELS: usize> JsonSchema for Deep<LEVELS> {
    fn schema_name() -> Cow<'static, str> {
        format!("Deep{LEVELS}").into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        match nested_schema(LEVELS) {
            Value::Object(map) => Schema::from(map),
            _ => unreachable!("nested_schema is an object"),
        }
    }
}

struct DeepTool<const IN: usize, const OUT: usize>;

impl<const IN: usize, const OUT: usize> Tool for DeepTool<IN, OUT> {
    const NAME: &'static str = "deep_typed";
    type Args = Deep<IN>;
    type Output = Deep<OUT>;
    fn description(&self) -> &str {
        "A typed tool with hand-written deep schemas."
    }
    async fn execute(&self, _: Deep<IN>, _: &ToolRunContext) -> Result<Deep<OUT>, ToolError> {
        Ok(Deep)
    }
}

#[test]
fn typed_tools_with_deep_schemas_are_refused() {
    let err = ToolDefinition::from_tool(DeepTool::<100_000, 1>).unwrap_err();
    assert!(
        matches!(err, PluginError::SchemaTooDeep { which: "input", .. }),
        "{err}"
    );
    let err = ToolDefinition::from_tool(DeepTool::<1, 10_000>).unwrap_err();
    assert!(
        matches!(
            err,
            PluginError::SchemaTooDeep {
                which: "output",
                ..
            }
        ),
        "{err}"
    );
    ToolDefinition::from_tool(DeepTool::<3, 3>).unwrap();
}

/// A chain of references compiles into a chain of validators, as deep as a
/// nesting: it counts against the same limit.
#[test]
fn a_long_chain_of_references_is_refused() {
    let links = 10_000;
    let mut defs = Map::new();
    for i in 0..links {
        defs.insert(
            format!("d{i}"),
            json!({ "$ref": format!("#/$defs/d{}", i + 1) }),
        );
    }
    defs.insert(format!("d{links}"), json!({"type": "string"}));
    let mut schema = Map::new();
    schema.insert("type".to_owned(), json!("object"));
    schema.insert("$defs".to_owned(), Value::Object(defs));
    schema.insert(
        "properties".to_owned(),
        json!({"a": {"$ref": "#/$defs/d0"}}),
    );
    let err = with_input(Value::Object(schema)).unwrap_err();
    assert!(
        matches!(err, PluginError::SchemaTooDeep { which: "input", .. }),
        "{err}"
    );
}
