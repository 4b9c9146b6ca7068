//! The MCP conformance suite's fixture tools (`test_simple_text`,
//! `test_image_content`, …) as tack tools, served by tack's MCP server over
//! streamable HTTP: `cargo run -p tack-mcp --example conformance_server -- 127.0.0.1:PORT`.
//!
//! Every call goes through a tack `Pipeline`, as a host's would.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use serde_json::{Value, json};
use tack_core::CancellationToken;
use tack_core::capability::{ClientLogLevel, ClientRequest, ClientRequestKind, ToolDispatcher};
use tack_core::context::ToolRunContext;
use tack_core::tool::{ContentBlock, OutputSpec, Tier, ToolDefinition, ToolError};
use tack_mcp::{HttpOptions, McpServer, serve_http};
use tack_pipeline::{Pipeline, ToolRegistry};

/// A 1×1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A WAV of eight silent samples (8 kHz, mono, 8-bit).
const WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

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
        fixed("test_audio_content", json!("audio"), vec![ContentBlock::audio(WAV, "audio/wav")]),
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

/// A tool whose body is `body`, with `schema` for its arguments.
fn tool<F, Fut>(name: &str, schema: Value, body: F) -> ToolDefinition
where
    F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    ToolDefinition::builder(name)
        .description(format!("The conformance fixture `{name}`."))
        .input_schema(schema)
        .output(OutputSpec::new(json!({})))
        .tier(Tier::ReadOnly)
        .handler(body)
        .build()
        .unwrap()
}

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

fn elicit(key: &str, message: &str, properties: Value) -> ClientRequest {
    let required: Vec<&String> = properties.as_object().unwrap().keys().collect();
    ClientRequest::new(
        key,
        ClientRequestKind::Elicitation,
        json!({
            "message": message,
            "requestedSchema": {"type": "object", "properties": properties, "required": required}
        }),
    )
}

fn sample(key: &str, prompt: &str, max_tokens: u32) -> ClientRequest {
    ClientRequest::new(
        key,
        ClientRequestKind::Sampling,
        json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": max_tokens
        }),
    )
}

fn roots(key: &str) -> ClientRequest {
    ClientRequest::new(key, ClientRequestKind::Roots, json!({}))
}

/// A tool that asks the client `questions` and answers with what it said.
fn asking(name: &str, questions: fn(&Value) -> Vec<ClientRequest>) -> ToolDefinition {
    tool(
        name,
        no_args(),
        move |args: Arc<Value>, cx: ToolRunContext| async move {
            let answers = cx.ask_client(questions(&args)).await?;
            Ok(json!(format!(
                "state-ok; the client answered: {}",
                Value::from(answers)
            )))
        },
    )
}

/// The tools whose bodies reach the client mid-call: progress, log
/// messages, sampling, elicitation, roots (and, on 2026-07-28, the
/// `input_required` round trips).
pub fn client_tools() -> Vec<ToolDefinition> {
    vec![
        tool(
            "test_tool_with_progress",
            no_args(),
            |_args: Arc<Value>, cx: ToolRunContext| async move {
                for step in [0.0, 50.0, 100.0] {
                    cx.report_progress(step, Some(100.0), None).await;
                }
                Ok(json!("progress reported"))
            },
        ),
        tool(
            "test_tool_with_logging",
            no_args(),
            |_args: Arc<Value>, cx: ToolRunContext| async move {
                for message in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ] {
                    cx.log_to_client(ClientLogLevel::Info, json!(message)).await;
                }
                Ok(json!("logged three messages"))
            },
        ),
        tool(
            "test_sampling",
            json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}),
            |args: Arc<Value>, cx: ToolRunContext| async move {
                let prompt = args["prompt"].as_str().unwrap_or_default().to_owned();
                let answers = cx.ask_client(vec![sample("sample", &prompt, 100)]).await?;
                let text = answers[0]["content"]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                Ok(json!(format!("LLM response: {text}")))
            },
        ),
        tool(
            "test_elicitation",
            json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
            |args: Arc<Value>, cx: ToolRunContext| async move {
                let message = args["message"].as_str().unwrap_or_default().to_owned();
                let question = elicit(
                    "user",
                    &message,
                    json!({
                        "username": {"type": "string", "description": "User's response"},
                        "email": {"type": "string", "description": "User's email address"}
                    }),
                );
                let answers = cx.ask_client(vec![question]).await?;
                Ok(json!(format!("User response: {}", answers[0])))
            },
        ),
        asking("test_elicitation_sep1034_defaults", |_| {
            vec![ClientRequest::new(
                "defaults",
                ClientRequestKind::Elicitation,
                json!({
                    "message": "Defaults for every primitive type",
                    "requestedSchema": {"type": "object", "properties": {
                        "name": {"type": "string", "default": "John Doe"},
                        "age": {"type": "integer", "default": 30},
                        "score": {"type": "number", "default": 95.5},
                        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                        "verified": {"type": "boolean", "default": true}
                    }}
                }),
            )]
        }),
        asking("test_elicitation_sep1330_enums", |_| {
            vec![ClientRequest::new(
                "enums",
                ClientRequestKind::Elicitation,
                json!({
                    "message": "Every enum form",
                    "requestedSchema": {"type": "object", "properties": {
                        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                        "titledSingle": {"type": "string", "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"}
                        ]},
                        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                        "titledMulti": {"type": "array", "items": {"anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"}
                        ]}}
                    }}
                }),
            )]
        }),
        asking("test_input_required_result_elicitation", |_| {
            vec![elicit(
                "user_name",
                "What is your name?",
                json!({"name": {"type": "string"}}),
            )]
        }),
        asking("test_input_required_result_sampling", |_| {
            vec![sample(
                "capital_question",
                "What is the capital of France?",
                100,
            )]
        }),
        asking("test_input_required_result_list_roots", |_| {
            vec![roots("client_roots")]
        }),
        asking("test_input_required_result_request_state", |_| {
            vec![elicit(
                "confirm",
                "Please confirm",
                json!({"ok": {"type": "boolean"}}),
            )]
        }),
        asking("test_input_required_result_tampered_state", |_| {
            vec![elicit(
                "confirm",
                "Please confirm",
                json!({"ok": {"type": "boolean"}}),
            )]
        }),
        asking("test_input_required_result_multiple_inputs", |_| {
            vec![
                elicit(
                    "user_name",
                    "What is your name?",
                    json!({"name": {"type": "string"}}),
                ),
                sample("greeting", "Generate a greeting", 50),
                roots("client_roots"),
            ]
        }),
        tool(
            "test_input_required_result_multi_round",
            no_args(),
            |_args: Arc<Value>, cx: ToolRunContext| async move {
                let name = cx
                    .ask_client(vec![elicit(
                        "step1",
                        "Step 1: What is your name?",
                        json!({"name": {"type": "string"}}),
                    )])
                    .await?;
                let color = cx
                    .ask_client(vec![elicit(
                        "step2",
                        "Step 2: What is your favorite color?",
                        json!({"color": {"type": "string"}}),
                    )])
                    .await?;
                Ok(json!(format!(
                    "{} likes {}",
                    name[0]["content"]["name"], color[0]["content"]["color"]
                )))
            },
        ),
        tool(
            "test_input_required_result_capabilities",
            no_args(),
            |_args: Arc<Value>, cx: ToolRunContext| async move {
                let mut questions = Vec::new();
                if cx.client_can_ask(ClientRequestKind::Sampling) {
                    questions.push(sample(
                        "capital_question",
                        "What is the capital of France?",
                        100,
                    ));
                }
                if cx.client_can_ask(ClientRequestKind::Elicitation) {
                    questions.push(elicit(
                        "user_name",
                        "What is your name?",
                        json!({"name": {"type": "string"}}),
                    ));
                }
                let answers = cx.ask_client(questions).await?;
                Ok(Value::from(answers))
            },
        ),
        // Needs sampling, whether or not the client declared it (2026-07-28:
        // a client that did not is refused with -32021).
        asking("test_missing_capability", |_| {
            vec![sample("needed", "Say hello", 10)]
        }),
        asking("test_streaming_elicitation", |_| {
            vec![elicit(
                "user_name",
                "What is your name?",
                json!({"name": {"type": "string"}}),
            )]
        }),
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
        .chain(client_tools())
        .map(|t| registry.register(t).unwrap())
        .collect();
    keep.push(
        registry
            .register(trigger_tool_change(registry.clone()))
            .unwrap(),
    );
    let tools = registry.clone();
    let server = McpServer::new(
        Arc::new(pipeline.clone()) as Arc<dyn ToolDispatcher>,
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
    // The tools' bodies reach the client of their call.
    keep.push(
        pipeline
            .capabilities()
            .provide_client(server.client_channel()),
    );
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
