//! A registry with a few tack tools, served by tack's MCP server.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tack_core::CancellationToken;
use tack_core::capability::ToolDispatcher;
use tack_core::context::ToolRunContext;
use tack_core::hook::Disposer;
use tack_core::tool::{OutputSpec, Tier, ToolDefinition, ToolError};
use tack_mcp::{HttpOptions, McpServer, serve_http};
use tack_pipeline::{Pipeline, ToolRegistry};

/// `echo {text}` → `{"text": text}` (read-only).
pub fn echo() -> ToolDefinition {
    ToolDefinition::builder("echo")
        .description("Echoes its text.")
        .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false}))
        .output(OutputSpec::new(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})))
        .tier(Tier::ReadOnly)
        .handler(|args: Arc<Value>, _cx: ToolRunContext| async move {
            Ok(json!({"text": args["text"]}))
        })
        .build()
        .unwrap()
}

/// `big {bytes}`: a text of that many bytes.
pub fn big() -> ToolDefinition {
    ToolDefinition::builder("big")
        .description("Answers with a text of the given size.")
        .input_schema(json!({"type": "object", "properties": {"bytes": {"type": "integer"}}, "required": ["bytes"]}))
        .output(OutputSpec::new(json!({"type": "string"})))
        .tier(Tier::ReadOnly)
        .handler(|args: Arc<Value>, _cx: ToolRunContext| async move {
            let bytes = usize::try_from(args["bytes"].as_u64().unwrap_or(0)).unwrap_or(0);
            Ok(json!("x".repeat(bytes)))
        })
        .build()
        .unwrap()
}

/// `sleep {ms}`: waits, stopping early when cancelled (reports `cancelled`).
pub fn sleep(cancelled: Arc<std::sync::atomic::AtomicBool>) -> ToolDefinition {
    ToolDefinition::builder("sleep")
        .description("Sleeps.")
        .input_schema(json!({"type": "object", "properties": {"ms": {"type": "integer"}}, "required": ["ms"]}))
        .output(OutputSpec::new(json!({"type": "string"})))
        .tier(Tier::Writes)
        .handler(move |args: Arc<Value>, cx: ToolRunContext| {
            let cancelled = Arc::clone(&cancelled);
            async move {
                let ms = args["ms"].as_u64().unwrap_or(0);
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(json!("slept")),
                    () = cx.cancellation().cancelled() => {
                        cancelled.store(true, std::sync::atomic::Ordering::SeqCst);
                        Err(ToolError::new("cancelled"))
                    }
                }
            }
        })
        .build()
        .unwrap()
}

/// `fail`: always fails.
pub fn fail() -> ToolDefinition {
    ToolDefinition::builder("fail")
        .description("Fails.")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({})))
        .handler(|_args: Arc<Value>, _cx: ToolRunContext| async move {
            Err::<Value, _>(ToolError::new("it broke"))
        })
        .build()
        .unwrap()
}

pub struct Served {
    pub registry: ToolRegistry,
    pub url: String,
    pub addr: std::net::SocketAddr,
    pub shutdown: CancellationToken,
    pub _keep: Vec<Disposer>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub fn server_for(pipeline: &Pipeline) -> McpServer {
    let tools = pipeline.registry().clone();
    let changes = tools.changes();
    McpServer::new(
        Arc::new(pipeline.clone()) as Arc<dyn ToolDispatcher>,
        Arc::new(move || {
            tools
                .visible(None)
                .iter()
                .map(|t| t.definition().clone())
                .collect()
        }),
    )
    .with_tools_changed(changes)
}

/// Serves `tools` over HTTP on 127.0.0.1 (a free port).
pub async fn serve(tools: Vec<ToolDefinition>, options: HttpOptions) -> Served {
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let keep = tools
        .into_iter()
        .map(|t| registry.register(t).unwrap())
        .collect();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    tokio::spawn(serve_http(
        server_for(&pipeline),
        listener,
        options,
        shutdown.clone(),
    ));
    Served {
        registry,
        url: format!("http://{addr}/mcp"),
        addr,
        shutdown,
        _keep: keep,
    }
}
