//! The client against `@modelcontextprotocol/server-everything` (stdio).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tack_core::CancellationToken;
use tack_core::capability::ToolDispatcher;
use tack_core::host::PluginHost;
use tack_core::tool::{ContentBlock, ErrorCode, Outcome, ToolCall};
use tack_mcp::{ClientOptions, McpClient, McpConfig, McpProgress, ServerConfig};
use tack_pipeline::{Pipeline, ToolRegistry};

use crate::node;

pub struct Host {
    pub registry: ToolRegistry,
    pub pipeline: Pipeline,
    pub plugin: Arc<McpClient>,
    pub _host: tack_core::host::Disposables,
}

pub async fn host(config: McpConfig) -> Host {
    host_with(config, ClientOptions::default()).await
}

pub async fn host_with(config: McpConfig, options: ClientOptions) -> Host {
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let plugin = Arc::new(
        McpClient::connect(
            &config,
            options.startup_timeout(Duration::from_secs(60)),
            Arc::new(registry.clone()),
        )
        .await,
    );
    let mut host = PluginHost::new(pipeline.hooks(), pipeline.capabilities(), &registry);
    host.install(&*plugin).unwrap();
    let keep = host.into_disposables();
    Host {
        registry,
        pipeline,
        plugin,
        _host: keep,
    }
}

pub fn everything(test: &str) -> Option<ServerConfig> {
    let bin = node::bin("mcp-server-everything", test)?;
    let path = node::node_path(test)?;
    let mut config = ServerConfig::stdio(bin.display().to_string(), ["stdio"]);
    if let ServerConfig::Stdio { env, .. } = &mut config {
        env.insert("PATH".into(), path);
    }
    Some(config)
}

pub async fn call(pipeline: &Pipeline, name: &str, args: Value) -> Arc<Outcome> {
    pipeline
        .dispatch(
            ToolCall::new("c1", name, args.to_string()),
            CancellationToken::new(),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_tools_are_registered_and_called_through_the_pipeline() {
    let Some(server) = everything("everything_tools") else {
        return;
    };
    let host = host(McpConfig::new().with_server("everything", server)).await;
    assert!(
        host.plugin.failures().is_empty(),
        "{:?}",
        host.plugin.failures()
    );
    let names = host.plugin.tool_names();
    assert!(
        names.iter().any(|n| n == "mcp__everything__echo"),
        "{names:?}"
    );

    let echo = call(
        &host.pipeline,
        "mcp__everything__echo",
        json!({"message": "hi there"}),
    )
    .await;
    assert!(echo.is_success(), "{echo:?}");
    assert!(
        echo.content
            .iter()
            .any(|b| b.as_text().is_some_and(|t| t.contains("hi there"))),
        "{:?}",
        echo.content
    );

    // inputSchema validation happens in the pipeline, before the server.
    let bad = call(
        &host.pipeline,
        "mcp__everything__echo",
        json!({"message": 3}),
    )
    .await;
    assert_eq!(
        bad.error_code(),
        Some(ErrorCode::InvalidArguments),
        "{bad:?}"
    );

    // Images become image blocks.
    if names.iter().any(|n| n == "mcp__everything__get-tiny-image") {
        let image = call(&host.pipeline, "mcp__everything__get-tiny-image", json!({})).await;
        assert!(image.is_success(), "{image:?}");
        assert!(
            image.content.iter().any(
                |b| matches!(b, ContentBlock::Image { mime_type, .. } if mime_type == "image/png")
            ),
            "{:?}",
            image.content
        );
    }

    // Uninstalling disposes the tools and stops the server.
    host.plugin.shutdown().await;
    assert!(host.registry.get("mcp__everything__echo", None).is_none());
    let after = call(
        &host.pipeline,
        "mcp__everything__echo",
        json!({"message": "x"}),
    )
    .await;
    assert_eq!(after.error_code(), Some(ErrorCode::UnknownTool));
}

/// `trigger-long-running-operation` reports progress only when the call
/// carries a progressToken; each report reaches the host's listener as an
/// event naming the server, the tack tool and the tack call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_notifications_reach_the_host_as_events() {
    let Some(server) = everything("progress_events") else {
        return;
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<McpProgress>();
    let options = ClientOptions::default().on_progress(move |event| {
        let _ = tx.send(event);
    });
    let host = host_with(McpConfig::new().with_server("everything", server), options).await;
    let tool = "mcp__everything__trigger-long-running-operation";
    assert!(
        host.registry.get(tool, None).is_some(),
        "{:?}",
        host.plugin.tool_names()
    );
    let out = host
        .pipeline
        .dispatch(
            ToolCall::new(
                "long-1",
                tool,
                json!({"duration": 1, "steps": 4}).to_string(),
            ),
            CancellationToken::new(),
        )
        .await;
    assert!(out.is_success(), "{out:?}");
    // The last report may be handed over just after the answer.
    let mut events = Vec::new();
    while events.len() < 4 {
        match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
            Ok(Some(event)) => events.push(event),
            _ => break,
        }
    }
    assert_eq!(events.len(), 4, "{events:?}");
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event.server, "everything");
        assert_eq!(event.tool, tool);
        assert_eq!(event.call_id.as_str(), "long-1");
        assert_eq!(event.progress, (i + 1) as f64);
        assert_eq!(event.total, Some(4.0));
    }
    // A call without progress reports none.
    let echo = call(
        &host.pipeline,
        "mcp__everything__echo",
        json!({"message": "x"}),
    )
    .await;
    assert!(echo.is_success(), "{echo:?}");
    assert!(rx.try_recv().is_err());
    host.plugin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_fails_to_start_is_named_and_the_others_go_on() {
    let Some(server) = everything("failing_server") else {
        return;
    };
    let config = McpConfig::new()
        .with_server("everything", server)
        .with_server(
            "ghost",
            ServerConfig::stdio("/nonexistent/mcp-ghost", Vec::<String>::new()),
        );
    let host = host(config).await;
    let failures: Vec<String> = host
        .plugin
        .failures()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].contains("`ghost`"), "{failures:?}");
    let echo = call(
        &host.pipeline,
        "mcp__everything__echo",
        json!({"message": "still"}),
    )
    .await;
    assert!(echo.is_success(), "{echo:?}");
    host.plugin.shutdown().await;
}
