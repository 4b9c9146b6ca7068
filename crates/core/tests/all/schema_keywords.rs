//! Keywords misplaced for their schema's `type` are refused when the
//! definition is built, naming the pointer and the fix; the escape hatch
//! builds the schema as written.

use serde_json::{Value, json};
use tack_core::plugin::PluginError;
use tack_core::tool::{OutputSpec, ToolDefinition};

fn build(input: Value, output: Value) -> Result<ToolDefinition, PluginError> {
    ToolDefinition::builder("t")
        .description("Test tool.")
        .input_schema(input)
        .output(OutputSpec::new(output))
        .handler(|_args, _cx| async move { Ok(json!(null)) })
        .build()
}

fn refused(input: Value, output: Value) -> (String, String, &'static str, String) {
    match build(input, output) {
        Err(error @ PluginError::MisplacedKeyword { .. }) => {
            let message = error.to_string();
            let PluginError::MisplacedKeyword {
                pointer,
                keyword,
                which,
                ..
            } = error
            else {
                unreachable!()
            };
            (pointer.into(), keyword.into(), which, message)
        }
        other => panic!("expected MisplacedKeyword, got {other:?}"),
    }
}

#[test]
fn items_on_an_object_properties_on_an_array_min_length_on_an_integer_are_refused() {
    let (pointer, keyword, which, message) = refused(
        json!({"type": "object", "properties": {"opts": {"type": "object", "items": {"type": "string"}}}}),
        json!({}),
    );
    assert_eq!(
        (pointer.as_str(), keyword.as_str(), which),
        ("/properties/opts/items", "items", "input")
    );
    assert!(message.contains("`/properties/opts/items`"), "{message}");
    assert!(message.contains("constrains only arrays"), "{message}");
    assert!(message.contains("allow_misplaced_keywords"), "{message}");

    let (pointer, keyword, ..) = refused(
        json!({"type": "object", "properties": {"tags": {"type": "array", "properties": {"a": {}}}}}),
        json!({}),
    );
    assert_eq!(
        (pointer.as_str(), keyword.as_str()),
        ("/properties/tags/properties", "properties")
    );

    let (pointer, keyword, ..) = refused(
        json!({"type": "object", "properties": {"n": {"type": "integer", "minLength": 1}}}),
        json!({}),
    );
    assert_eq!(
        (pointer.as_str(), keyword.as_str()),
        ("/properties/n/minLength", "minLength")
    );

    // The top level of the input schema, and output schemas, are checked too.
    let (pointer, _, which, _) = refused(json!({"type": "object", "minItems": 1}), json!({}));
    assert_eq!((pointer.as_str(), which), ("/minItems", "input"));
    let (pointer, _, which, _) = refused(
        json!({"type": "object"}),
        json!({"type": "string", "maximum": 3}),
    );
    assert_eq!((pointer.as_str(), which), ("/maximum", "output"));
}

#[test]
fn keywords_that_apply_are_accepted() {
    build(
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "pattern": "^[^/]"},
                "n": {"type": ["integer", "null"], "minimum": 0},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "uniqueItems": true},
            },
            "required": ["path"],
            "additionalProperties": false
        }),
        json!({"type": "object", "properties": {"lines": {"type": "integer", "minimum": 0}}}),
    )
    .unwrap();
}

#[test]
fn the_escape_hatch_builds_the_schema_as_written() {
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "integer", "minLength": 1}}});
    let definition = ToolDefinition::builder("t")
        .description("Test tool.")
        .input_schema(schema.clone())
        .output(OutputSpec::new(json!({})))
        .handler(|_args, _cx| async move { Ok(json!(null)) })
        .allow_misplaced_keywords()
        .build()
        .unwrap();
    assert_eq!(**definition.input_schema(), schema);
}
