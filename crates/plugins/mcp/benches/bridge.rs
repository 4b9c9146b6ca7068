//! What the MCP bridge costs per call, in process, for a trivial tool, on a
//! two-thread and on a one-thread tokio runtime (`mcp_bridge/two_threads/*`,
//! `mcp_bridge/one_thread/*`):
//!
//! * `direct`: the tool through a tack pipeline (`Pipeline::dispatch`);
//! * `pipe/server`: a bare rmcp client calling it through tack's MCP server
//!   with JSON-RPC text over an in-memory pipe (as over a child's stdio),
//!   then the same pipeline;
//! * `channels/server`: the same with typed JSON-RPC messages over two
//!   in-memory channels (no JSON text);
//! * `channels/client_and_server`: the tool as `mcp__a__echo` through tack's
//!   MCP client (a second pipeline) to tack's server, connected as
//!   `ServerConfig::InProcess` is (channels);
//! * `pipe/rmcp_floor`, `channels/rmcp_floor`: a bare rmcp client calling a
//!   bare rmcp server whose `call_tool` answers at once (no tack at all) —
//!   the cost of rmcp's own round trip over each link, which every bridged
//!   figure includes.
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
use tack_mcp::{ClientOptions, McpClient, McpConfig, McpServer, ServerConfig};
use tack_pipeline::{Pipeline, ToolRegistry};
use tokio::runtime::Runtime;

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

/// How a bare rmcp client reaches a server in process.
#[derive(Clone, Copy)]
enum Link {
    /// JSON-RPC text over an in-memory pipe, as over a child's stdio.
    Pipe,
    /// Typed JSON-RPC messages over two channels (what
    /// `ServerConfig::InProcess` uses).
    Channels,
}

/// A bare rmcp client connected to `server` over `link`, served on `rt`.
fn connect<S>(rt: &Runtime, link: Link, server: S) -> RunningService<RoleClient, ()>
where
    S: rmcp::ServerHandler + Send + 'static,
{
    rt.block_on(async {
        match link {
            Link::Pipe => {
                let (client_side, server_side) = tokio::io::duplex(1 << 20);
                tokio::spawn(async move {
                    let running = server.serve(server_side).await.unwrap();
                    let _ = running.waiting().await;
                });
                ().serve(client_side).await.unwrap()
            }
            Link::Channels => {
                let (to_server, from_client) = futures::channel::mpsc::unbounded();
                let (to_client, from_server) = futures::channel::mpsc::unbounded();
                tokio::spawn(async move {
                    let running = server.serve((to_client, from_client)).await.unwrap();
                    let _ = running.waiting().await;
                });
                ().serve((to_server, from_server)).await.unwrap()
            }
        }
    })
}

/// Benchmarks `echo` called through `client` as `name`.
fn bench_echo(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    rt: &Runtime,
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

/// Benchmarks `tool` called through `pipeline` as `name`.
fn bench_pipeline(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    rt: &Runtime,
    pipeline: &Pipeline,
    tool: &str,
) {
    let args = json!({"text": "hi"}).to_string();
    group.bench_function(name, |b| {
        b.to_async(rt).iter(|| async {
            let call = ToolCall::new("c", tool, args.clone());
            let out = pipeline.dispatch(call, CancellationToken::new()).await;
            assert!(out.is_success(), "{out:?}");
        });
    });
}

/// Every case on one runtime, as the group `mcp_bridge/{runtime}`.
fn bench_on(c: &mut Criterion, runtime: &str, rt: &Runtime) {
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

    let mut group = c.benchmark_group(format!("mcp_bridge/{runtime}"));
    bench_pipeline(&mut group, "direct", rt, &served, "echo");
    for (link, label) in [(Link::Pipe, "pipe"), (Link::Channels, "channels")] {
        let floor = connect(rt, link, Floor);
        bench_echo(&mut group, &format!("{label}/rmcp_floor"), rt, &floor);
        let peer = connect(rt, link, server.clone());
        bench_echo(&mut group, &format!("{label}/server"), rt, &peer);
    }

    let client = ToolRegistry::new();
    let in_process = ServerConfig::InProcess { server };
    let plugin = rt.block_on(McpClient::connect(
        &McpConfig::new().with_server("a", in_process),
        ClientOptions::default(),
        Arc::new(client.clone()),
    ));
    let client_registry = client;
    let client = Pipeline::new(client_registry.clone());
    let mut host = PluginHost::new(client.hooks(), client.capabilities(), &client_registry);
    host.install(&plugin).unwrap();
    bench_pipeline(
        &mut group,
        "channels/client_and_server",
        rt,
        &client,
        "mcp__a__echo",
    );
    group.finish();
    rt.block_on(plugin.shutdown());
    drop(host);
}

fn bench(c: &mut Criterion) {
    let two = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    bench_on(c, "two_threads", &two);
    let one = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    bench_on(c, "one_thread", &one);
}

criterion_group!(benches, bench);
criterion_main!(benches);
