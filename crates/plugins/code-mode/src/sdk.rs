//! The generated TypeScript SDK text.

use serde_json::Value;
use tack_core::tool::ToolDefinition;

/// How deep the schema-to-type translation goes before giving up (`unknown`).
const MAX_DEPTH: usize = 8;

/// The static usage instructions that head the SDK text (and form the
/// `run_code` description).
pub const USAGE: &str = "\
Run a JavaScript or TypeScript program. Inside it, call tools through the \
`tools` object declared below (`await tools.<name>(args)`): every call returns \
a Promise; await each call. Independent read-only calls may overlap with \
`Promise.all([...])`. A failed call rejects with a `ToolCallError` \
({ toolName, code, message }). Only what the program prints with `console.log` \
and the value it `return`s come back to you. There is no filesystem, network \
or timer access except through the tools.";

/// Deterministic TypeScript declarations for `tools`: one
/// `tools.<name>(args: Args): Promise<Output>` per definition, in lexicographic
/// name order, preceded by [`USAGE`] and the `ToolCallError` declaration.
///
/// A host calls it with the natives callable from a program
/// (`ToolRegistry::native_tools(agent)` in `tack-pipeline`) and appends the
/// text to the system prompt. The output is byte-identical for an unchanged
/// tool set; unsupported schema constructs degrade to `unknown`.
pub fn sdk_text(tools: &[ToolDefinition]) -> String {
    let mut sorted: Vec<&ToolDefinition> = tools.iter().collect();
    sorted.sort_by(|a, b| a.name().as_str().cmp(b.name().as_str()));
    let mut out = String::new();
    out.push_str("/*\n");
    out.push_str(USAGE);
    out.push_str("\n*/\n");
    out.push_str("declare class ToolCallError extends Error {\n");
    out.push_str(
        "  readonly toolName: string;\n  readonly code: string;\n  readonly message: string;\n}\n",
    );
    out.push_str("declare const tools: {\n");
    for tool in sorted {
        let description = tool.description().lines().next().unwrap_or("").trim();
        if !description.is_empty() {
            out.push_str("  /** ");
            out.push_str(&description.replace("*/", "* /"));
            out.push_str(" */\n");
        }
        out.push_str("  ");
        out.push_str(&property_key(tool.name().as_str()));
        out.push_str("(args: ");
        out.push_str(&ts_type(tool.input_schema(), tool.input_schema(), 1));
        out.push_str("): Promise<");
        out.push_str(&ts_type(tool.output().schema(), tool.output().schema(), 1));
        out.push_str(">;\n");
    }
    out.push_str("};\n");
    out
}

/// The rule a host states under the `code` presentation, where a direct call
/// of a native tool is refused (`UNKNOWN_TOOL`). Under `both` it is not
/// stated: direct calls execute there.
pub const CODE_ONLY_RULE: &str = "\
Tools are reachable only from inside `run_code`: call `run_code` with a \
program that uses `tools.<name>(args)`. Calling a tool name directly is \
refused.";

/// The system-prompt section for code mode: [`CODE_ONLY_RULE`] when
/// `code_only` (the `code` presentation), then [`sdk_text`] of `tools`.
///
/// ```
/// use tack_code_mode::{CODE_ONLY_RULE, prompt_section};
/// assert!(prompt_section(&[], true).starts_with(CODE_ONLY_RULE));
/// assert!(!prompt_section(&[], false).contains(CODE_ONLY_RULE));
/// ```
pub fn prompt_section(tools: &[ToolDefinition], code_only: bool) -> String {
    let sdk = sdk_text(tools);
    if code_only {
        format!("{CODE_ONLY_RULE}\n\n{sdk}")
    } else {
        sdk
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

fn property_key(name: &str) -> String {
    if is_identifier(name) {
        name.to_owned()
    } else {
        Value::String(name.to_owned()).to_string()
    }
}

fn union(parts: Vec<String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for part in parts {
        if !seen.contains(&part) {
            seen.push(part);
        }
    }
    if seen.iter().any(|p| p == "unknown") || seen.is_empty() {
        return "unknown".to_owned();
    }
    seen.join(" | ")
}

fn literal(value: &Value) -> String {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => value.to_string(),
        _ => "unknown".to_owned(),
    }
}

/// The TypeScript type of a JSON schema (best effort; `unknown` otherwise).
pub(crate) fn ts_type(schema: &Value, root: &Value, depth: usize) -> String {
    if depth > MAX_DEPTH {
        return "unknown".to_owned();
    }
    let Some(map) = schema.as_object() else {
        return "unknown".to_owned();
    };
    if let Some(Value::String(reference)) = map.get("$ref") {
        return match resolve(root, reference) {
            Some(target) => ts_type(target, root, depth + 1),
            None => "unknown".to_owned(),
        };
    }
    if let Some(value) = map.get("const") {
        return literal(value);
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        return union(values.iter().map(literal).collect());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = map.get(key) {
            return union(
                options
                    .iter()
                    .map(|s| ts_type(s, root, depth + 1))
                    .collect(),
            );
        }
    }
    match map.get("type") {
        Some(Value::String(kind)) => typed(kind, map, root, depth),
        Some(Value::Array(kinds)) => union(
            kinds
                .iter()
                .map(|k| {
                    k.as_str()
                        .map_or_else(|| "unknown".to_owned(), |k| typed(k, map, root, depth))
                })
                .collect(),
        ),
        _ if map.contains_key("properties") => typed("object", map, root, depth),
        _ => "unknown".to_owned(),
    }
}

fn typed(kind: &str, map: &serde_json::Map<String, Value>, root: &Value, depth: usize) -> String {
    match kind {
        "string" => "string".to_owned(),
        "integer" | "number" => "number".to_owned(),
        "boolean" => "boolean".to_owned(),
        "null" => "null".to_owned(),
        "array" => match map.get("items") {
            Some(items) => format!("Array<{}>", ts_type(items, root, depth + 1)),
            None => "Array<unknown>".to_owned(),
        },
        "object" => object_type(map, root, depth),
        _ => "unknown".to_owned(),
    }
}

fn object_type(map: &serde_json::Map<String, Value>, root: &Value, depth: usize) -> String {
    let required: Vec<&str> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields: Vec<String> = Vec::new();
    if let Some(Value::Object(props)) = map.get("properties") {
        let mut names: Vec<&String> = props.keys().collect();
        names.sort();
        for name in names {
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            let ty = props
                .get(name)
                .map_or_else(|| "unknown".to_owned(), |s| ts_type(s, root, depth + 1));
            fields.push(format!("{}{optional}: {ty}", property_key(name)));
        }
    }
    match map.get("additionalProperties") {
        Some(Value::Object(_)) => {
            let extra = map
                .get("additionalProperties")
                .map_or_else(|| "unknown".to_owned(), |s| ts_type(s, root, depth + 1));
            fields.push(format!(
                "[key: string]: {}",
                if fields.is_empty() {
                    extra
                } else {
                    "unknown".to_owned()
                }
            ));
        }
        Some(Value::Bool(false)) => {}
        _ if fields.is_empty() => return "{ [key: string]: unknown }".to_owned(),
        _ => {}
    }
    if fields.is_empty() {
        return "{}".to_owned();
    }
    format!("{{ {} }}", fields.join("; "))
}

/// A local reference (`#/$defs/..`, `#/definitions/..`) inside `root`.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn types() {
        assert_eq!(
            ts_type(&json!({"type": "string"}), &Value::Null, 1),
            "string"
        );
        assert_eq!(
            ts_type(&json!({"enum": ["a", "b"]}), &Value::Null, 1),
            "\"a\" | \"b\""
        );
        assert_eq!(
            ts_type(&json!({"type": ["string", "null"]}), &Value::Null, 1),
            "string | null"
        );
        assert_eq!(
            ts_type(
                &json!({"type": "object", "properties": {"b": {"type": "integer"}, "a-b": {}}, "required": ["b"]}),
                &Value::Null,
                1
            ),
            "{ \"a-b\"?: unknown; b: number }"
        );
        assert_eq!(ts_type(&json!({"not": {}}), &Value::Null, 1), "unknown");
        assert_eq!(ts_type(&json!(true), &Value::Null, 1), "unknown");
    }
}
