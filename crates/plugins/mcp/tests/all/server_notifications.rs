//! tack's server notifies its clients: `notifications/message` at the
//! client's `logging/setLevel`, and `notifications/tools/list_changed` when
//! the served tools change. Driven by an rmcp client in process and over
//! HTTP.
#![allow(deprecated)] // MCP logging: deprecated in rmcp, still in the protocol versions spoken

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams,
};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tack_pipeline::{Pipeline, ToolRegistry};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::fixture::{echo, fail, server_for};

#[derive(Debug)]
enum Heard {
    Log(LoggingLevel, Value),
    ToolsChanged,
}

#[derive(Clone)]
struct Listener(UnboundedSender<Heard>);

impl ClientHandler for Listener {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        assert_eq!(params.logger.as_deref(), Some("tack"));
        let _ = self.0.send(Heard::Log(params.level, params.data));
    }

    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.0.send(Heard::ToolsChanged);
    }
}

async fn next(rx: &mut UnboundedReceiver<Heard>) -> Heard {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("a notification within 10 s")
        .expect("the client is alive")
}

fn call(name: &str, args: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = args.as_object().cloned();
    params
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_messages_follow_the_level_and_tool_changes_are_announced() {
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let _echo = registry.register(echo()).unwrap();
    let _fail = registry.register(fail()).unwrap();
    let (client_side, server_side) = tokio::io::duplex(1 << 16);
    let server = server_for(&pipeline);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_side).await {
            let _ = running.waiting().await;
        }
    });
    let (tx, mut rx) = unbounded_channel();
    let client = Listener(tx).serve(client_side).await.unwrap();
    let info = client.peer_info().unwrap();
    let caps = serde_json::to_value(&info.capabilities).unwrap();
    assert_eq!(caps["tools"]["listChanged"], json!(true), "{caps}");
    assert!(caps.get("logging").is_some(), "{caps}");

    // Before logging/setLevel: nothing is sent for these calls.
    client
        .call_tool(call("echo", json!({"text": "quiet"})))
        .await
        .unwrap();
    // At warning: a successful call (info) is not sent, a failed one is.
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .unwrap();
    client
        .call_tool(call("echo", json!({"text": "still quiet"})))
        .await
        .unwrap();
    let failed = client.call_tool(call("fail", json!({}))).await.unwrap();
    assert_eq!(failed.is_error, Some(true));
    // Notifications arrive in order: the first one heard is the failure.
    match next(&mut rx).await {
        Heard::Log(LoggingLevel::Error, data) => {
            assert_eq!(data["tool"], "fail", "{data}");
            assert_eq!(data["ok"], false, "{data}");
            assert_eq!(data["code"], "EXECUTION_FAILED", "{data}");
            assert!(
                data["message"].as_str().unwrap().contains("it broke"),
                "{data}"
            );
        }
        other => panic!("expected the failed call's error log, heard {other:?}"),
    }
    // At info: every served call is logged.
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .unwrap();
    client
        .call_tool(call("echo", json!({"text": "loud"})))
        .await
        .unwrap();
    match next(&mut rx).await {
        Heard::Log(LoggingLevel::Info, data) => {
            assert_eq!(data["tool"], "echo", "{data}");
            assert_eq!(data["ok"], true, "{data}");
        }
        other => panic!("expected the call's info log, heard {other:?}"),
    }
    // An unknown tool is a warning (and a protocol error).
    assert!(client.call_tool(call("nope", json!({}))).await.is_err());
    match next(&mut rx).await {
        Heard::Log(LoggingLevel::Warning, data) => assert_eq!(data["tool"], "nope", "{data}"),
        other => panic!("expected the unknown tool's warning, heard {other:?}"),
    }

    // A tool registered in the registry: the session is told, and lists it.
    let added = registry
        .register({
            let mut t = echo();
            t = tack_core::tool::ToolDefinition::builder("echo2")
                .description(t.description().to_owned())
                .input_schema(json!({"type": "object"}))
                .output(tack_core::tool::OutputSpec::new(json!({})))
                .handler(|_a, _c| async move { Ok(json!("two")) })
                .build()
                .unwrap();
            t
        })
        .unwrap();
    assert!(matches!(next(&mut rx).await, Heard::ToolsChanged));
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["echo", "echo2", "fail"]);
    // Disposing it is a change too.
    added.dispose();
    assert!(matches!(next(&mut rx).await, Heard::ToolsChanged));
    // A registry change that does not change the listed tools is not
    // announced: the next thing heard is the log of this call.
    registry.set_presentation(None, Default::default());
    client
        .call_tool(call("echo", json!({"text": "after"})))
        .await
        .unwrap();
    match next(&mut rx).await {
        Heard::Log(LoggingLevel::Info, data) => assert_eq!(data["tool"], "echo", "{data}"),
        other => panic!("expected the call's log, heard {other:?}"),
    }
    client.cancel().await.unwrap();
}

/// Over HTTP each session has its own `logging/setLevel`, and a change of
/// the served tools reaches a session between requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_http_session_has_its_own_log_level_and_hears_tool_changes() {
    use rmcp::transport::StreamableHttpClientTransport;
    let served =
        crate::fixture::serve(vec![echo(), fail()], tack_mcp::HttpOptions::default()).await;
    let (tx_a, mut rx_a) = unbounded_channel();
    let a = Listener(tx_a)
        .serve(StreamableHttpClientTransport::from_uri(served.url.clone()))
        .await
        .unwrap();
    let (tx_b, mut rx_b) = unbounded_channel();
    let b = Listener(tx_b)
        .serve(StreamableHttpClientTransport::from_uri(served.url.clone()))
        .await
        .unwrap();
    a.set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .unwrap();
    // B set no level: its call is not logged to it, though A's level is info.
    b.call_tool(call("echo", json!({"text": "b"})))
        .await
        .unwrap();
    b.set_level(SetLevelRequestParams::new(LoggingLevel::Error))
        .await
        .unwrap();
    b.call_tool(call("fail", json!({}))).await.unwrap();
    match next(&mut rx_b).await {
        Heard::Log(LoggingLevel::Error, data) => assert_eq!(data["tool"], "fail", "{data}"),
        other => panic!("B expected its failed call's log first, heard {other:?}"),
    }
    a.call_tool(call("echo", json!({"text": "a"})))
        .await
        .unwrap();
    match next(&mut rx_a).await {
        Heard::Log(LoggingLevel::Info, data) => assert_eq!(data["tool"], "echo", "{data}"),
        other => panic!("A expected its call's log, heard {other:?}"),
    }
    let _added = served
        .registry
        .register(
            tack_core::tool::ToolDefinition::builder("late")
                .description("Registered after the sessions started.")
                .input_schema(json!({"type": "object"}))
                .output(tack_core::tool::OutputSpec::new(json!({})))
                .handler(|_a, _c| async move { Ok(json!("late")) })
                .build()
                .unwrap(),
        )
        .unwrap();
    for rx in [&mut rx_a, &mut rx_b] {
        assert!(matches!(next(rx).await, Heard::ToolsChanged));
    }
    let names: Vec<String> = b
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["echo", "fail", "late"]);
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}
