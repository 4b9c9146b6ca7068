//! `typed_tool`: the derived schema reaches the model, a valid call returns
//! the typed output, and the schema refuses a wrong type before the body.

use crate::support;

#[test]
fn typed_tool_derives_its_schema_and_validates_calls() {
    let run = support::run_example("typed_tool", &[], None);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", run.stdout);
    let schema: serde_json::Value =
        serde_json::from_str(lines[0].strip_prefix("schema: ").expect("a schema line")).unwrap();
    let function = &schema["function"];
    assert_eq!(function["name"], "count_words");
    assert_eq!(
        function["parameters"]["required"],
        serde_json::json!(["text"])
    );
    assert_eq!(
        function["parameters"]["properties"]["text"],
        serde_json::json!({"type": "string", "description": "The text to count words in."})
    );
    assert_eq!(
        lines[1],
        r#"{"text": "the quick brown fox"} -> {"words":4}"#
    );
    assert!(
        lines[2].starts_with(r#"{"text": 4} -> INVALID_ARGUMENTS: "#)
            && lines[2].contains("`/text`"),
        "{}",
        lines[2]
    );
}
