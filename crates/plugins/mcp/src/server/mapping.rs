//! tack's tools and outcomes as MCP tools and results.

use serde_json::{Map, Value, json};
use tack_core::tool::{ContentBlock, Outcome, Tier, ToolDefinition};

/// The MCP `annotations` of a tool of tier `tier`: `readOnlyHint` for
/// read-only tools, `destructiveHint: false` for tools that only write the
/// workspace, `openWorldHint` for network tools.
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

/// A tool as an MCP `Tool` (JSON): name, description, `inputSchema`,
/// `outputSchema` when the output schema describes an object, annotations
/// from the tier.
pub fn tool_json(definition: &ToolDefinition) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), json!(definition.name().as_str()));
    tool.insert("description".into(), json!(definition.description()));
    tool.insert("inputSchema".into(), (**definition.input_schema()).clone());
    let output = definition.output().schema();
    if object_schema(output) {
        tool.insert("outputSchema".into(), output.clone());
    }
    tool.insert("annotations".into(), annotations_for(definition.tier()));
    Value::Object(tool)
}

fn content_json(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Text { text } => json!({"type": "text", "text": text}),
        ContentBlock::Image { data, mime_type } => {
            json!({"type": "image", "data": data, "mimeType": mime_type})
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
    let content: Vec<Value> = outcome.content.iter().map(content_json).collect();
    let mut result = json!({"content": content, "isError": !outcome.is_success()});
    if structured && let Some(value) = outcome.value() {
        result["structuredContent"] = value.clone();
    }
    result
}

/// [`outcome_result`] as rmcp's typed result, built directly for the usual
/// blocks (text, image, JSON) — the same result as deserializing
/// `outcome_result`'s JSON, without the JSON round trip on every call.
pub(crate) fn typed_result(
    outcome: &Outcome,
    structured: bool,
) -> Result<rmcp::model::CallToolResult, serde_json::Error> {
    use rmcp::model::ContentBlock as Block;
    let mut content = Vec::with_capacity(outcome.content.len());
    for block in &outcome.content {
        content.push(match block {
            ContentBlock::Text { text } => Block::text(text.clone()),
            ContentBlock::Image { data, mime_type } => {
                Block::image(data.clone(), mime_type.clone())
            }
            ContentBlock::Json { value } => Block::text(serde_json::to_string(value)?),
            other => serde_json::from_value(content_json(other))?,
        });
    }
    let mut result = rmcp::model::CallToolResult::success(content);
    // As deserialized from `outcome_result`: no `resultType` on the wire.
    result.result_type = None;
    result.is_error = Some(!outcome.is_success());
    if structured
        && outcome.is_success()
        && let Some(value) = outcome.value()
    {
        result.structured_content = Some(value.clone());
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

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
