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
fn object_schema(schema: &Value) -> bool {
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
        result["structuredContent"] = (**value).clone();
    }
    result
}
