//! The MCP conformance suite's fixture tools (`test_simple_text`,
//! `test_image_content`, …) as tack tools, served by tack's MCP server over
//! streamable HTTP: `cargo run -p tack-mcp --example conformance_server -- 127.0.0.1:PORT`.
//!
//! Every call goes through a tack `Pipeline`, as a host's would.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use serde_json::{Value, json};
use tack_core::CancellationToken;
use tack_core::capability::ToolDispatcher;
use tack_core::context::ToolRunContext;
use tack_core::tool::{ContentBlock, OutputSpec, Tier, ToolDefinition, ToolError};
use tack_mcp::{HttpOptions, McpServer, serve_http};
use tack_pipeline::{Pipeline, ToolRegistry};

/// A 1×1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A tool without arguments whose value `value` renders as `content`.
fn fixed(name: &str, value: Value, content: Vec<ContentBlock>) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description(format!("The conformance fixture `{name}`."))
        .input_schema(json!({"type": "object", "properties": {}}))
        .output(OutputSpec::new(json!({})).render(move |_args, _value| content.clone()))
        .tier(Tier::ReadOnly)
        .handler(move |_args: Arc<Value>, _cx: ToolRunContext| {
            let value = value.clone();
            async move { Ok(value) }
        })
        .build()
        .unwrap()
}

/// The fixture tools.
pub fn fixture_tools() -> Vec<ToolDefinition> {
    let resource = ContentBlock::Resource {
        uri: "test://embedded-resource".into(),
        mime_type: Some("text/plain".into()),
        text: Some("This is an embedded resource content.".into()),
    };
    vec![
        fixed(
            "test_simple_text",
            json!("text"),
            vec![ContentBlock::text("This is a simple text response for testing.")],
        ),
        fixed("test_image_content", json!("image"), vec![ContentBlock::image(PNG, "image/png")]),
        fixed("test_embedded_resource", json!("resource"), vec![resource.clone()]),
        fixed(
            "test_multiple_content_types",
            json!("mixed"),
            vec![
                ContentBlock::text("Multiple content types test:"),
                ContentBlock::image(PNG, "image/png"),
                resource,
            ],
        ),
        ToolDefinition::builder("test_error_handling")
            .description("Always fails.")
            .input_schema(json!({"type": "object", "properties": {}}))
            .output(OutputSpec::new(json!({})))
            .handler(|_args: Arc<Value>, _cx: ToolRunContext| async move {
                Err::<Value, _>(ToolError::new(
                    "This tool intentionally returns an error for testing",
                ))
            })
            .build()
            .unwrap(),
        // The server sends a log message per call at the level the client
        // asked for: none when it asked for none.
        fixed(
            "test_logging_tool",
            json!("logged"),
            vec![ContentBlock::text("the call is logged at the client's level")],
        ),
        ToolDefinition::builder("json_schema_2020_12_tool")
            .description("Keeps its JSON Schema 2020-12 keywords.")
            .input_schema(json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"$anchor": "address", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
                "allOf": [{"anyOf": [{"required": ["name"]}, {"required": ["address"]}]}],
                "if": {"properties": {"name": {"const": "anonymous"}}, "required": ["name"]},
                "then": {"not": {"required": ["address"]}},
                "else": true,
                "additionalProperties": false
            }))
            .output(OutputSpec::new(json!({})))
            .tier(Tier::ReadOnly)
            .handler(|args: Arc<Value>, _cx: ToolRunContext| async move { Ok((*args).clone()) })
            .build()
            .unwrap(),
    ]
}

/// `test_trigger_tool_change`: registers one more tool (`test_added_N`),
/// which changes the tool list (for the listen-stream scenarios).
fn trigger_tool_change(registry: ToolRegistry) -> ToolDefinition {
    let added = Arc::new(std::sync::Mutex::new(Vec::new()));
    ToolDefinition::builder("test_trigger_tool_change")
        .description("Adds a tool, changing the tool list.")
        .input_schema(json!({"type": "object", "properties": {}}))
        .output(OutputSpec::new(json!({})))
        .tier(Tier::ReadOnly)
        .handler(move |_args: Arc<Value>, _cx: ToolRunContext| {
            let registry = registry.clone();
            let added = Arc::clone(&added);
            async move {
                let mut added = added.lock().unwrap();
                let name = format!("test_added_{}", added.len() + 1);
                let tool = fixed(&name, json!("added"), vec![ContentBlock::text("added")]);
                added.push(
                    registry
                        .register(tool)
                        .map_err(|e| ToolError::new(e.to_string()))?,
                );
                Ok(json!(name))
            }
        })
        .build()
        .unwrap()
}

/// A registry holding the fixture tools, and the server over it.
pub fn fixture_server() -> (ToolRegistry, Vec<tack_core::hook::Disposer>, McpServer) {
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let mut keep: Vec<tack_core::hook::Disposer> = fixture_tools()
        .into_iter()
        .map(|t| registry.register(t).unwrap())
        .collect();
    keep.push(
        registry
            .register(trigger_tool_change(registry.clone()))
            .unwrap(),
    );
    let tools = registry.clone();
    let server = McpServer::new(
        Arc::new(pipeline) as Arc<dyn ToolDispatcher>,
        Arc::new(move || {
            tools
                .visible(None)
                .iter()
                .map(|t| t.definition().clone())
                .collect()
        }),
    )
    .named("tack-conformance-fixture")
    .with_tools_changed(registry.changes());
    (registry, keep, server)
}

#[allow(dead_code)]
#[tokio::main]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3001".to_owned());
    let listener = tokio::net::TcpListener::bind(&addr).await.unwrap();
    eprintln!("http://{}/mcp", listener.local_addr().unwrap());
    let (_registry, _keep, server) = fixture_server();
    serve_http(
        server,
        listener,
        HttpOptions::default(),
        CancellationToken::new(),
    )
    .await
    .unwrap();
}
