//! tack's client against tack's server, over streamable HTTP, in process.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use tack_core::CancellationToken;
use tack_core::capability::ToolDispatcher;
use tack_core::tool::{ErrorCode, Tier, ToolCall};
use tack_mcp::{HttpOptions, McpConfig, ServerConfig};

use crate::client_everything::{call, host};
use crate::fixture::{echo, fail, serve, sleep};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_round_trip_over_http_with_values_tiers_and_errors() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let served = serve(
        vec![echo(), sleep(Arc::clone(&cancelled)), fail()],
        HttpOptions::default(),
    )
    .await;
    let host =
        host(McpConfig::new().with_server("tack", ServerConfig::http(served.url.clone()))).await;
    assert!(
        host.plugin.failures().is_empty(),
        "{:?}",
        host.plugin.failures()
    );
    let mut names = host.plugin.tool_names();
    names.sort();
    assert_eq!(
        names,
        ["mcp__tack__echo", "mcp__tack__fail", "mcp__tack__sleep"]
    );

    // readOnly annotation → read-only tier; the structured value is the value.
    let echo_tool = host.registry.get("mcp__tack__echo", None).unwrap();
    assert_eq!(echo_tool.definition().tier(), Tier::ReadOnly);
    let sleep_tool = host.registry.get("mcp__tack__sleep", None).unwrap();
    assert_eq!(sleep_tool.definition().tier(), Tier::Writes);
    // idempotentHint (sent for read-only tools) → idempotent.
    assert!(echo_tool.definition().is_idempotent());
    assert!(!sleep_tool.definition().is_idempotent());
    let out = call(&host.pipeline, "mcp__tack__echo", json!({"text": "héllo"})).await;
    assert_eq!(
        out.value().cloned(),
        Some(json!({"text": "héllo"})),
        "{out:?}"
    );

    // The client validates against the server's inputSchema.
    let bad = call(
        &host.pipeline,
        "mcp__tack__echo",
        json!({"text": "a", "extra": 1}),
    )
    .await;
    assert_eq!(
        bad.error_code(),
        Some(ErrorCode::InvalidArguments),
        "{bad:?}"
    );

    // isError → EXECUTION_FAILED carrying the server's text.
    let failed = call(&host.pipeline, "mcp__tack__fail", json!({})).await;
    assert_eq!(failed.error_code(), Some(ErrorCode::ExecutionFailed));
    let message = &failed.failure_info().unwrap().message();
    assert!(
        message.contains("it broke") && message.contains("`tack`"),
        "{message}"
    );

    // Cancelling the client's call cancels the server's body.
    let cancel = CancellationToken::new();
    let running = host.pipeline.dispatch(
        ToolCall::new("c9", "mcp__tack__sleep", json!({"ms": 30_000}).to_string()),
        cancel.clone(),
    );
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        canceller.cancel();
    });
    let outcome = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the cancelled call ends");
    assert_eq!(
        outcome.error_code(),
        Some(ErrorCode::Cancelled),
        "{outcome:?}"
    );
    for _ in 0..100 {
        if cancelled.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        cancelled.load(Ordering::SeqCst),
        "the server's tool body saw the cancellation"
    );
    host.plugin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_goes_away_gives_clear_errors_and_is_restarted() {
    let served = serve(vec![echo()], HttpOptions::default()).await;
    let host =
        host(McpConfig::new().with_server("far", ServerConfig::http(served.url.clone()))).await;
    let ok = call(&host.pipeline, "mcp__far__echo", json!({"text": "1"})).await;
    assert!(ok.is_success(), "{ok:?}");
    drop(served);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let down = tokio::time::timeout(
        Duration::from_secs(30),
        call(&host.pipeline, "mcp__far__echo", json!({"text": "2"})),
    )
    .await
    .expect("a call to a dead server ends");
    assert_eq!(
        down.error_code(),
        Some(ErrorCode::ExecutionFailed),
        "{down:?}"
    );
    let message = &down.failure_info().unwrap().message();
    assert!(message.contains("`far`"), "{message}");
    host.plugin.shutdown().await;
}
