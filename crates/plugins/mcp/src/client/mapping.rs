//! MCP tools and results onto tack's model.
//!
//! * **Tier** (from `annotations`; hints are the server's word, no more):
//!   `readOnlyHint: true` → [`Tier::ReadOnly`]; otherwise `openWorldHint`
//!   absent or `true` (MCP's default) → [`Tier::Network`]; otherwise
//!   `destructiveHint: false` → [`Tier::Writes`]; otherwise
//!   [`Tier::Executes`]. Without any hint a tool is never read-only.
//! * **Idempotence**: `idempotentHint: true` → the definition's
//!   `idempotent` flag (a durable host runs such a call again when a crash
//!   interrupted it; see `ToolDefinition::is_idempotent`).
//! * **Execution mode**: a read-only tool may run in parallel with other
//!   parallel calls; every other tool runs alone.
//! * **Value**: with an `outputSchema`, the success value is the result's
//!   `structuredContent`, validated against that schema by the pipeline.
//!   Without one, the value is `{"content": [...], "structuredContent"?: ...}`
//!   (the MCP content blocks as sent), declared by [`PERMISSIVE_OUTPUT`].
//! * **Content**: `text` → text, `image` → image, `resource` (embedded) →
//!   resource with its text (a blob's bytes are not inlined), `resource_link`
//!   → resource, `audio` → audio.
//! * **`isError: true`** → `EXECUTION_FAILED` whose message is the server's
//!   text content and whose data is `{"content": [...]}`.

use serde_json::{Value, json};
use tack_core::tool::{ContentBlock, Tier, ToolError};

/// The output schema of a tool without `outputSchema`: an object holding
/// the MCP `content` array (and `structuredContent` when the server sent it).
pub const PERMISSIVE_OUTPUT: &str = r#"{"type":"object","properties":{"content":{"type":"array","items":{"type":"object"}},"structuredContent":{}},"required":["content"]}"#;

/// Largest accepted input or output schema of one MCP tool (serialized).
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;

/// The tier of an MCP tool from its `annotations` (see the module docs).
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::Tier;
/// use tack_mcp::tier_from_annotations;
/// assert_eq!(tier_from_annotations(None), Tier::Network);
/// assert_eq!(tier_from_annotations(Some(&json!({"readOnlyHint": true}))), Tier::ReadOnly);
/// assert_eq!(tier_from_annotations(Some(&json!({"openWorldHint": false, "destructiveHint": false}))), Tier::Writes);
/// assert_eq!(tier_from_annotations(Some(&json!({"openWorldHint": false}))), Tier::Executes);
/// ```
pub fn tier_from_annotations(annotations: Option<&Value>) -> Tier {
    let hint = |key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_bool)
    };
    if hint("readOnlyHint") == Some(true) {
        Tier::ReadOnly
    } else if hint("openWorldHint") != Some(false) {
        Tier::Network
    } else if hint("destructiveHint") == Some(false) {
        Tier::Writes
    } else {
        Tier::Executes
    }
}

/// One MCP content block as a tack content block.
pub fn content_block(block: &Value) -> ContentBlock {
    let s = |key: &str| block.get(key).and_then(Value::as_str).map(str::to_owned);
    match block.get("type").and_then(Value::as_str) {
        Some("text") => ContentBlock::text(s("text").unwrap_or_default()),
        Some("image") => ContentBlock::image(
            s("data").unwrap_or_default(),
            s("mimeType").unwrap_or_else(|| "application/octet-stream".to_owned()),
        ),
        Some("audio") => ContentBlock::audio(
            s("data").unwrap_or_default(),
            s("mimeType").unwrap_or_else(|| "application/octet-stream".to_owned()),
        ),
        Some("resource") => {
            let resource = block.get("resource").cloned().unwrap_or(Value::Null);
            let r = |key: &str| resource.get(key).and_then(Value::as_str).map(str::to_owned);
            ContentBlock::Resource {
                uri: r("uri").unwrap_or_default(),
                mime_type: r("mimeType"),
                text: r("text"),
            }
        }
        Some("resource_link") => ContentBlock::Resource {
            uri: s("uri").unwrap_or_default(),
            mime_type: s("mimeType"),
            text: None,
        },
        _ => ContentBlock::json(block.clone()),
    }
}

/// The MCP content array of a result as tack content blocks.
pub fn content_blocks(content: &Value) -> Vec<ContentBlock> {
    content
        .as_array()
        .map(|blocks| blocks.iter().map(content_block).collect())
        .unwrap_or_default()
}

fn joined(content: &Value) -> String {
    let text: Vec<String> = content_blocks(content)
        .iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text.clone(),
            other => serde_json::to_string(other).unwrap_or_default(),
        })
        .collect();
    text.join("\n")
}

/// A `tools/call` result (as JSON) as the tool's value or error.
pub(crate) fn call_result(
    server: &str,
    tool: &str,
    has_output_schema: bool,
    result: Value,
) -> Result<Value, ToolError> {
    let content = result.get("content").cloned().unwrap_or_else(|| json!([]));
    let structured = result.get("structuredContent").cloned();
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let text = joined(&content);
        let text = if text.is_empty() {
            "(no content)".to_owned()
        } else {
            text
        };
        return Err(
            ToolError::new(format!("MCP server `{server}`, tool `{tool}`: {text}"))
                .with_kind("mcp_tool_error")
                .with_data(json!({"content": content})),
        );
    }
    if has_output_schema {
        return structured.ok_or_else(|| {
            ToolError::new(format!(
                    "MCP server `{server}`, tool `{tool}`: the tool declares an outputSchema but its result has no structuredContent"
                ),
            )
            .with_kind("mcp_protocol")
        });
    }
    let mut value = json!({"content": content});
    if let Some(structured) = structured {
        value["structuredContent"] = structured;
    }
    Ok(value)
}

/// Renders a value of a tool with an output schema: the JSON as text.
pub(crate) fn render_structured(value: &Value) -> Vec<ContentBlock> {
    vec![ContentBlock::text(
        serde_json::to_string(value).unwrap_or_default(),
    )]
}

/// Renders a permissive value: its content blocks.
pub(crate) fn render_permissive(value: &Value) -> Vec<ContentBlock> {
    let blocks = content_blocks(value.get("content").unwrap_or(&Value::Null));
    if blocks.is_empty() {
        match value.get("structuredContent") {
            Some(structured) => render_structured(structured),
            None => vec![ContentBlock::text("(no content)")],
        }
    } else {
        blocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_kinds_map_to_blocks() {
        let blocks = content_blocks(&json!([
            {"type": "text", "text": "hi"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "audio", "data": "BBBB", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a", "mimeType": "text/plain", "text": "body"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"}
        ]));
        assert_eq!(blocks[0], ContentBlock::text("hi"));
        assert_eq!(blocks[1], ContentBlock::image("AAAA", "image/png"));
        assert_eq!(blocks[2], ContentBlock::audio("BBBB", "audio/wav"));
        assert_eq!(
            blocks[3],
            ContentBlock::Resource {
                uri: "file:///a".into(),
                mime_type: Some("text/plain".into()),
                text: Some("body".into())
            }
        );
        assert!(
            matches!(&blocks[4], ContentBlock::Resource { uri, text: None, .. } if uri == "file:///b")
        );
    }

    #[test]
    fn is_error_becomes_execution_failed_with_the_servers_text() {
        let err = call_result(
            "s",
            "t",
            false,
            json!({"isError": true, "content": [{"type": "text", "text": "boom"}]}),
        )
        .unwrap_err();
        assert_eq!(err.code(), tack_core::tool::ErrorCode::ExecutionFailed);
        assert!(
            err.message().contains("boom") && err.message().contains("`s`"),
            "{}",
            err.message()
        );
    }

    #[test]
    fn structured_content_is_the_value_with_an_output_schema() {
        let value = call_result(
            "s",
            "t",
            true,
            json!({"content": [], "structuredContent": {"n": 1}}),
        )
        .unwrap();
        assert_eq!(value, json!({"n": 1}));
        assert!(call_result("s", "t", true, json!({"content": []})).is_err());
        let value = call_result(
            "s",
            "t",
            false,
            json!({"content": [{"type": "text", "text": "x"}]}),
        )
        .unwrap();
        assert_eq!(value, json!({"content": [{"type": "text", "text": "x"}]}));
    }
}
