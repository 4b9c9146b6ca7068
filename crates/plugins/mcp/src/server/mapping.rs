//! tack's tools and outcomes as MCP tools and results.

use serde_json::{Map, Value, json};
use tack_core::tool::{ContentBlock, Outcome, Tier, ToolDefinition};

/// The MCP `annotations` of a tool of tier `tier`: `readOnlyHint` for
/// read-only tools, `destructiveHint: false` for tools that only write the
/// workspace, `openWorldHint` for network tools, `idempotentHint` for
/// read-only tools (a served tool declared idempotent also gets it).
///
/// ```
/// use tack_core::tool::Tier;
/// let a = tack_mcp::annotations_for(Tier::ReadOnly);
/// assert_eq!(a["readOnlyHint"], true);
/// assert_eq!(tack_mcp::annotations_for(Tier::Network)["openWorldHint"], true);
/// ```
pub fn annotations_for(tier: Tier) -> Value {
    let read_only = tier == Tier::ReadOnly;
    json!({
        "readOnlyHint": read_only,
        "destructiveHint": !read_only && tier != Tier::Writes,
        "idempotentHint": read_only,
        "openWorldHint": tier == Tier::Network,
    })
}

/// Whether `schema` may be an MCP `outputSchema` (an object schema).
pub(crate) fn object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// A tool as an MCP `Tool` (JSON) — the one MCP export of a tack tool,
/// for `tools/list` and for hosts that print MCP tool lists: name, a
/// `title` made from the name, description, `inputSchema` in the shape
/// generic clients handle ([`client_schema`]), `outputSchema` when the
/// output schema describes an object, annotations from the tier.
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::{OutputSpec, ToolDefinition};
/// let tool = ToolDefinition::builder("read_file")
///     .description("Read a file.")
///     .input_schema(json!({"type": "object",
///         "properties": {"limit": {"type": ["integer", "null"], "format": "uint64", "default": null}}}))
///     .output(OutputSpec::new(json!({})))
///     .handler(|_args, _cx| async move { Ok(json!(null)) })
///     .build()
///     .unwrap();
/// let mcp = tack_mcp::tool_json(&tool);
/// assert_eq!(mcp["title"], "Read file");
/// assert_eq!(mcp["inputSchema"]["properties"]["limit"], json!({"type": "integer"}));
/// ```
pub fn tool_json(definition: &ToolDefinition) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), json!(definition.name().as_str()));
    let title = title_of(definition.name().as_str());
    tool.insert("title".into(), json!(title));
    tool.insert("description".into(), json!(definition.description()));
    tool.insert(
        "inputSchema".into(),
        client_schema(definition.input_schema()),
    );
    let output = definition.output().schema();
    if object_schema(output) {
        tool.insert("outputSchema".into(), client_schema(output));
    }
    let mut annotations = annotations_for(definition.tier());
    if definition.is_idempotent() {
        annotations["idempotentHint"] = json!(true);
    }
    annotations["title"] = json!(title);
    tool.insert("annotations".into(), annotations);
    Value::Object(tool)
}

/// A tool's display title from its name: `read_file` → `Read file`,
/// `mcp__files__read` → `Files: read`.
fn title_of(name: &str) -> String {
    let name = match name
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
    {
        Some((server, tool)) => return format!("{}: {}", title_of(server), tool.replace('_', " ")),
        None => name,
    };
    let words = name.replace(['_', '-'], " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The formats of JSON Schema 2020-12 (format-annotation vocabulary); any
/// other (`uint64`, `int32`, `double`… as Rust and OpenAPI generators
/// write them) is left out of what clients are shown.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// `schema` in the shape generic MCP clients (form builders such as the
/// Inspector's, the SDKs' validators) handle: an optional property (one not
/// `required`) typed `[T, "null"]` or `anyOf [T, {type: null}]` becomes
/// plain `T` (left out is how an optional value is not given; its `default:
/// null` goes too), and non-standard `format`s are dropped. A `null` that
/// a required property may take is kept: there it means something. The
/// arguments are still validated against the tool's own schema.
///
/// ```
/// use serde_json::json;
/// let schema = json!({"type": "object", "required": ["a"], "properties": {
///     "a": {"type": ["string", "null"]},
///     "b": {"anyOf": [{"type": "integer", "format": "uint32"}, {"type": "null"}], "default": null}}});
/// assert_eq!(tack_mcp::client_schema(&schema), json!({"type": "object", "required": ["a"], "properties": {
///     "a": {"type": ["string", "null"]},
///     "b": {"type": "integer"}}}));
/// ```
pub fn client_schema(schema: &Value) -> Value {
    let mut schema = schema.clone();
    normalize(&mut schema);
    schema
}

fn normalize(schema: &mut Value) {
    let Value::Object(map) = schema else {
        if let Value::Array(items) = schema {
            items.iter_mut().for_each(normalize);
        }
        return;
    };
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
    {
        map.remove("format");
    }
    let required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            if !required.contains(name) {
                drop_null(property);
            }
        }
    }
    for (key, value) in map.iter_mut() {
        // Property names and enum/const/default values are not schemas.
        if matches!(
            key.as_str(),
            "enum" | "const" | "default" | "examples" | "required"
        ) {
            continue;
        }
        if key == "properties"
            || key == "$defs"
            || key == "definitions"
            || key == "patternProperties"
        {
            if let Value::Object(children) = value {
                children.values_mut().for_each(normalize);
            }
            continue;
        }
        normalize(value);
    }
}

/// Makes an optional property's schema non-nullable.
fn drop_null(property: &mut Value) {
    let Value::Object(map) = property else { return };
    let mut changed = false;
    if let Some(Value::Array(types)) = map.get("type") {
        let rest: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        if rest.len() < types.len() && !rest.is_empty() {
            let single = rest.len() == 1;
            map.insert(
                "type".into(),
                if single {
                    rest[0].clone()
                } else {
                    Value::Array(rest)
                },
            );
            changed = true;
        }
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(options)) = map.get(key) else {
            continue;
        };
        let is_null = |o: &Value| {
            o.get("type").and_then(Value::as_str) == Some("null")
                && o.as_object().is_some_and(|m| m.len() == 1)
        };
        let rest: Vec<Value> = options.iter().filter(|o| !is_null(o)).cloned().collect();
        if rest.len() == options.len() || rest.is_empty() {
            continue;
        }
        changed = true;
        if rest.len() == 1 {
            map.remove(key);
            if let Value::Object(only) = &rest[0] {
                for (k, v) in only {
                    map.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        } else {
            map.insert(key.into(), Value::Array(rest));
        }
    }
    if changed && map.get("default") == Some(&Value::Null) {
        map.remove("default");
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && changed
    {
        values.retain(|v| !v.is_null());
    }
}

fn content_json(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Text { text } => json!({"type": "text", "text": text}),
        ContentBlock::Image { data, mime_type } => {
            json!({"type": "image", "data": data, "mimeType": mime_type})
        }
        ContentBlock::Audio { data, mime_type } => {
            json!({"type": "audio", "data": data, "mimeType": mime_type})
        }
        ContentBlock::Json { value } => {
            json!({"type": "text", "text": serde_json::to_string(value).unwrap_or_default()})
        }
        ContentBlock::Resource {
            uri,
            mime_type,
            text: Some(text),
        } => {
            let mut resource = json!({"uri": uri, "text": text});
            if let Some(m) = mime_type {
                resource["mimeType"] = json!(m);
            }
            json!({"type": "resource", "resource": resource})
        }
        ContentBlock::Resource { uri, mime_type, .. } => {
            let mut link = json!({"type": "resource_link", "uri": uri, "name": uri});
            if let Some(m) = mime_type {
                link["mimeType"] = json!(m);
            }
            link
        }
        other => json!({"type": "text", "text": serde_json::to_string(other).unwrap_or_default()}),
    }
}

/// An outcome as an MCP `CallToolResult` (JSON): its content; on success
/// the value as `structuredContent` when the tool declares an object
/// `outputSchema`; on failure `isError: true` (the content then reads
/// `CODE: message`).
pub fn outcome_result(outcome: &Outcome, structured: bool) -> Value {
    let value = structured_value(outcome, structured);
    let mut content: Vec<Value> = Vec::with_capacity(outcome.content.len() + 1);
    if let Some(value) = value {
        content.push(
            json!({"type": "text", "text": serde_json::to_string(value).unwrap_or_default()}),
        );
    }
    content.extend(
        outcome
            .content
            .iter()
            .filter(|b| value.is_none() || !is_text(b))
            .map(content_json),
    );
    let mut result = json!({"content": content, "isError": !outcome.is_success()});
    if let Some(value) = value {
        result["structuredContent"] = value.clone();
    }
    result["resultType"] = json!("complete");
    result
}

/// The value sent as `structuredContent`: a successful call's value, when
/// the tool declares an object output schema.
fn structured_value(outcome: &Outcome, structured: bool) -> Option<&Value> {
    if structured && outcome.is_success() {
        outcome.value()
    } else {
        None
    }
}

/// A block whose place the serialized structured result takes (the
/// specification's text block for clients that read no `structuredContent`).
fn is_text(block: &ContentBlock) -> bool {
    matches!(block, ContentBlock::Text { .. } | ContentBlock::Json { .. })
}

/// [`outcome_result`] as rmcp's typed result, built directly for the usual
/// blocks (text, image, JSON) — the same result as deserializing
/// `outcome_result`'s JSON, without the JSON round trip on every call.
pub(crate) fn typed_result(
    outcome: &Outcome,
    structured: bool,
) -> Result<rmcp::model::CallToolResult, serde_json::Error> {
    use rmcp::model::ContentBlock as Block;
    let value = structured_value(outcome, structured);
    let mut content = Vec::with_capacity(outcome.content.len() + 1);
    if let Some(value) = value {
        content.push(Block::text(serde_json::to_string(value)?));
    }
    for block in &outcome.content {
        if value.is_some() && is_text(block) {
            continue;
        }
        content.push(match block {
            ContentBlock::Text { text } => Block::text(text.clone()),
            ContentBlock::Image { data, mime_type } => {
                Block::image(data.clone(), mime_type.clone())
            }
            ContentBlock::Json { value } => Block::text(serde_json::to_string(value)?),
            other => serde_json::from_value(content_json(other))?,
        });
    }
    // `resultType: "complete"`, as protocol 2026-07-28 requires of every
    // result (rmcp leaves it out for sessions of older versions).
    let mut result = rmcp::model::CallToolResult::success(content);
    result.is_error = Some(!outcome.is_success());
    if let Some(value) = value {
        result.structured_content = Some(value.clone());
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Optional nullables lose their `null` at every depth; a required one,
    /// standard formats and values (enums, defaults) stay as they are.
    #[test]
    fn client_schemas_drop_only_what_generic_clients_trip_on() {
        let schema = json!({
            "type": "object",
            "required": ["when"],
            "properties": {
                "when": {"type": ["string", "null"], "format": "date-time"},
                "mode": {"type": ["string", "null"], "enum": ["a", "b", null], "default": null},
                "nested": {"$ref": "#/$defs/inner"}
            },
            "$defs": {"inner": {"type": "object", "properties": {
                "n": {"anyOf": [{"type": "integer", "format": "int64", "minimum": 0}, {"type": "null"}]},
                "properties": {"type": "string", "default": "properties"}
            }}}
        });
        assert_eq!(
            client_schema(&schema),
            json!({
                "type": "object",
                "required": ["when"],
                "properties": {
                    "when": {"type": ["string", "null"], "format": "date-time"},
                    "mode": {"type": "string", "enum": ["a", "b"]},
                    "nested": {"$ref": "#/$defs/inner"}
                },
                "$defs": {"inner": {"type": "object", "properties": {
                    "n": {"type": "integer", "minimum": 0},
                    "properties": {"type": "string", "default": "properties"}
                }}}
            })
        );
    }

    #[test]
    fn titles_read_as_words() {
        assert_eq!(title_of("read_file"), "Read file");
        assert_eq!(
            title_of("mcp__files__read_text_file"),
            "Files: read text file"
        );
        assert_eq!(title_of("web-fetch"), "Web fetch");
        assert_eq!(title_of(""), "");
    }

    /// The typed result is exactly what `outcome_result`'s JSON deserializes to.
    #[test]
    fn the_typed_result_is_the_json_result() {
        let blocks = vec![
            ContentBlock::Text { text: "hi".into() },
            ContentBlock::Image {
                data: "aGk=".into(),
                mime_type: "image/png".into(),
            },
            ContentBlock::Json {
                value: json!({"a": [1, 2]}),
            },
            ContentBlock::Resource {
                uri: "file:///x".into(),
                mime_type: Some("text/plain".into()),
                text: Some("body".into()),
            },
            ContentBlock::Resource {
                uri: "file:///y".into(),
                mime_type: None,
                text: None,
            },
        ];
        let outcome = |status: Value| -> Outcome {
            let mut shape = json!({"call_id": "c", "tool": "t", "content": blocks});
            for (k, v) in status.as_object().unwrap() {
                shape[k] = v.clone();
            }
            serde_json::from_value(shape).unwrap()
        };
        let ok = outcome(json!({"status": "ok", "value": {"text": "hi"}}));
        let failed = outcome(
            json!({"status": "error", "error": {"code": "EXECUTION_FAILED", "message": "broke"}}),
        );
        assert!(ok.is_success() && !failed.is_success());
        for outcome in [&ok, &failed] {
            for structured in [true, false] {
                let typed = typed_result(outcome, structured).unwrap();
                let via_json: rmcp::model::CallToolResult =
                    serde_json::from_value(outcome_result(outcome, structured)).unwrap();
                assert_eq!(typed, via_json, "{outcome:?} {structured}");
            }
        }
    }
}
