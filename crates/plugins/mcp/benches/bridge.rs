//! What the MCP bridge costs per call, in process, for a trivial tool:
//!
//! * `direct`: the tool through a tack pipeline (`ToolRegistry::dispatch`);
//! * `server`: a bare rmcp client calling it through tack's MCP server
//!   (JSON-RPC over an in-memory pipe, then the same pipeline);
//! * `client_and_server`: the tool as `mcp__a__echo` through tack's MCP
//!   client (a second pipeline) to tack's server over the in-memory pipe;
//! * `rmcp_floor`: a bare rmcp client calling a bare rmcp server whose
//!   `call_tool` answers at once (no tack at all) over the same pipe — the
//!   cost of rmcp's round trip, which `server` and `client_and_server`
//!   include;
//! * `one_thread/rmcp_floor` and `one_thread/server`: the same two on a
//!   single-threaded runtime, where no message crosses threads — what the
//!   round trip costs without cross-thread wake-ups.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tack_core::CancellationToken;
use tack_core::capability::ToolDispatcher;
use tack_core::context::ToolRunContext;
use tack_core::host::PluginHost;
use tack_core::tool::{OutputSpec, Tier, ToolCall, ToolDefinition};
use tack_mcp::{ClientOptions, McpConfig, McpPlugin, McpServer, ServerConfig};
use tack_pipeline::{Pipeline, ToolRegistry};

fn echo() -> ToolDefinition {
    ToolDefinition::builder("echo")
        .description("Echoes its text.")
        .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
        .output(OutputSpec::new(json!({"type": "object", "properties": {"text": {"type": "string"}}})))
        .tier(Tier::ReadOnly)
        .handler(|args: Arc<Value>, _cx: ToolRunContext| async move { Ok(json!({"text": args["text"]})) })
        .build()
        .unwrap()
}

/// An rmcp server with no tack in it: `call_tool` echoes at once.
#[derive(Clone)]
struct Floor;

impl rmcp::ServerHandler for Floor {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let text = request
            .arguments
            .and_then(|a| a.get("text").cloned())
            .unwrap_or_default();
        Ok(rmcp::model::CallToolResponse::Complete(
            rmcp::model::CallToolResult::structured(json!({ "text": text })),
        ))
    }
}

/// A bare rmcp client connected to `server` over an in-memory pipe, served
/// on `rt`.
fn connect<S>(rt: &tokio::runtime::Runtime, server: S) -> RunningService<RoleClient, ()>
where
    S: rmcp::ServerHandler + Send + 'static,
{
    rt.block_on(async {
        let (client_side, server_side) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            let running = server.serve(server_side).await.unwrap();
            let _ = running.waiting().await;
        });
        ().serve(client_side).await.unwrap()
    })
}

/// Benchmarks `echo` called through `client` as `name`.
fn bench_echo(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    rt: &tokio::runtime::Runtime,
    client: &RunningService<RoleClient, ()>,
) {
    group.bench_function(name, |b| {
        b.to_async(rt).iter(|| async {
            let mut params = CallToolRequestParams::new("echo");
            params.arguments = json!({"text": "hi"}).as_object().cloned();
            let out = client.peer().call_tool(params).await.unwrap();
            assert_ne!(out.is_error, Some(true));
        });
    });
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let served = ToolRegistry::new();
    let _echo = served.register(echo()).unwrap();
    let tools = served.clone();
    let served = Pipeline::new(served);
    let server = McpServer::new(
        Arc::new(served.clone()) as Arc<dyn ToolDispatcher>,
        Arc::new(move || {
            tools
                .visible(None)
                .iter()
                .map(|t| t.definition().clone())
                .collect()
        }),
    );
    let args = json!({"text": "hi"}).to_string();

    let mut group = c.benchmark_group("mcp_bridge");
    group.bench_function("direct", |b| {
        b.to_async(&rt).iter(|| async {
            let out = served
                .dispatch(
                    ToolCall::new("c", "echo", args.clone()),
                    CancellationToken::new(),
                )
                .await;
            assert!(out.is_success());
        });
    });

    let peer = connect(&rt, server.clone());
    bench_echo(&mut group, "server", &rt, &peer);
    let floor = connect(&rt, Floor);
    bench_echo(&mut group, "rmcp_floor", &rt, &floor);

    let client = ToolRegistry::new();
    let plugin = rt.block_on(McpPlugin::connect(
        &McpConfig::new().with_server(
            "a",
            ServerConfig::InProcess {
                server: server.clone(),
            },
        ),
        ClientOptions::default(),
        Arc::new(client.clone()),
    ));
    let client_registry = client;
    let client = Pipeline::new(client_registry.clone());
    let mut host = PluginHost::new(client.hooks(), client.capabilities(), &client_registry);
    host.install(&plugin).unwrap();
    group.bench_function("client_and_server", |b| {
        b.to_async(&rt).iter(|| async {
            let out = client
                .dispatch(
                    ToolCall::new("c", "mcp__a__echo", args.clone()),
                    CancellationToken::new(),
                )
                .await;
            assert!(out.is_success(), "{out:?}");
        });
    });
    group.finish();
    rt.block_on(plugin.shutdown());
    drop(host);

    let one = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("mcp_bridge/one_thread");
    let floor = connect(&one, Floor);
    bench_echo(&mut group, "rmcp_floor", &one, &floor);
    let peer = connect(&one, server);
    bench_echo(&mut group, "server", &one, &peer);
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
