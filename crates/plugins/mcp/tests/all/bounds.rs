//! Bounds wherever a peer controls size or time: a server that pages its
//! tool list forever, one that never answers a call, a cancellation right
//! before the connection closes, idle or slow HTTP connections, malformed
//! bodies.

use std::time::{Duration, Instant};

use serde_json::json;
use tack_core::tool::{ErrorCode, ToolCall};
use tack_mcp::{ClientOptions, HttpOptions, McpConfig, ServerConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::client_everything::host_with;
use crate::fixture::{echo, serve};
use crate::node;

/// The misbehaving server of `tests/fixtures/bad_server.mjs` in `mode`,
/// recording what it reads to `record`.
fn bad_server(mode: &str, record: &std::path::Path, test: &str) -> Option<ServerConfig> {
    let node = node::bin("node", test)?;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/bad_server.mjs");
    Some(ServerConfig::stdio(
        node.display().to_string(),
        [
            script.to_owned(),
            mode.to_owned(),
            record.display().to_string(),
        ],
    ))
}

fn lines(record: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_always_returns_a_next_cursor_is_read_only_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("pages");
    let Some(server) = bad_server("endless-cursor", &record, "endless_cursor") else {
        return;
    };
    let started = Instant::now();
    let host = host_with(
        McpConfig::new().with_server("pager", server),
        ClientOptions::default().list_limits(7, 16 * 1024 * 1024),
    )
    .await;
    assert!(
        host.plugin.failures().is_empty(),
        "{:?}",
        host.plugin.failures()
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    // Seven pages of 50 tools were asked for and kept; no eighth.
    assert_eq!(lines(&record).len(), 7, "{:?}", lines(&record));
    assert_eq!(host.plugin.tool_names().len(), 7 * 50);
    host.plugin.shutdown().await;

    // The byte bound stops it too: 64 KiB is about one page of 50 KiB and a bit.
    let record = dir.path().join("pages-bytes");
    let server = bad_server("endless-cursor", &record, "endless_cursor").unwrap();
    let host = host_with(
        McpConfig::new().with_server("pager", server),
        ClientOptions::default().list_limits(1000, 64 * 1024),
    )
    .await;
    assert_eq!(lines(&record).len(), 2, "{:?}", lines(&record));
    let kept = host.plugin.tool_names().len();
    assert!((50..100).contains(&kept), "{kept}");
    host.plugin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_never_answered_times_out_by_default_and_the_server_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("cancelled");
    let Some(server) = bad_server("silent-call", &record, "silent_call_deadline") else {
        return;
    };
    // No pipeline timeout plugin: the client's own deadline ends it.
    let host = host_with(
        McpConfig::new().with_server("mute", server),
        ClientOptions::default().call_timeout(Some(Duration::from_millis(700))),
    )
    .await;
    let out = tokio::time::timeout(
        Duration::from_secs(20),
        crate::client_everything::call(&host.pipeline, "mcp__mute__work", json!({})),
    )
    .await
    .expect("the call ends at the client's deadline");
    assert_eq!(out.error_code(), Some(ErrorCode::Timeout), "{out:?}");
    let failure = out.failure_info().unwrap();
    assert!(
        failure.message().contains("`mute`") && failure.message().contains("call_timeout"),
        "{failure:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while lines(&record).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        lines(&record).len(),
        1,
        "the server heard of it: {:?}",
        lines(&record)
    );
    host.plugin.shutdown().await;
}

#[test]
fn the_default_deadline_of_an_mcp_call_is_ten_minutes() {
    assert_eq!(
        ClientOptions::default().call_timeout,
        Some(Duration::from_secs(600))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cancelled_right_before_shutdown_reaches_the_server_first() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..5 {
        let record = dir.path().join(format!("cancelled-{round}"));
        let Some(server) = bad_server("silent-call", &record, "cancel_then_close") else {
            return;
        };
        let host = host_with(
            McpConfig::new().with_server("mute", server),
            ClientOptions::default(),
        )
        .await;
        let cancel = tack_core::CancellationToken::new();
        let running = tokio::spawn(tack_core::capability::ToolDispatcher::dispatch(
            &host.pipeline,
            ToolCall::new("c1", "mcp__mute__work", "{}"),
            cancel.clone(),
        ));
        // The request is out once the server can be seen waiting on it.
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
        let out = running.await.unwrap();
        assert_eq!(out.error_code(), Some(ErrorCode::Cancelled), "{out:?}");
        // The session ends at once: the stop still delivers the cancellation.
        host.plugin.shutdown().await;
        let heard = lines(&record);
        assert!(
            heard.len() == 1 && heard[0].starts_with("cancelled "),
            "round {round}: {heard:?}"
        );
    }
}

/// Sends `request` on a new connection and reads the answer's status line.
async fn status_of(addr: std::net::SocketAddr, request: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut out = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut out))
        .await
        .expect("an answer within 5 s")
        .unwrap();
    String::from_utf8_lossy(&out[..n])
        .lines()
        .next()
        .unwrap_or("")
        .to_owned()
}

fn initialize(addr: std::net::SocketAddr, token: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_slow_connections_neither_block_others_nor_stay() {
    let mut options = HttpOptions::default().bearer_token("s3cret");
    options.read_timeout = Duration::from_millis(800);
    options.max_connections = 64;
    let served = serve(vec![echo()], options).await;
    let addr = served.addr;
    // A slow one: headers, then a body that never comes.
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(
        format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{").as_bytes(),
    )
    .await
    .unwrap();
    // A flood of idle connections, more than the server takes at once.
    let mut idle = Vec::new();
    for _ in 0..100 {
        idle.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    // Past its read deadline each is closed, and a client gets in.
    let started = Instant::now();
    let status = loop {
        let status = status_of(addr, &initialize(addr, "s3cret")).await;
        if status.contains("200") || started.elapsed() > Duration::from_secs(8) {
            break status;
        }
        assert!(status.contains("503"), "{status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(status.contains("200"), "{status}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let mut buf = [0u8; 512];
    // Closed by the server (end of stream, or a reset), not left open.
    let closed = tokio::time::timeout(Duration::from_secs(5), idle[0].read(&mut buf))
        .await
        .expect("an idle connection is closed by the server");
    assert!(
        !matches!(closed, Ok(n) if n > 0 && !String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 408")),
        "{closed:?}"
    );
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), slow.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_body_is_a_400_parse_error_and_closing_a_session_is_200() {
    let served = serve(vec![echo()], HttpOptions::default().bearer_token("s3cret")).await;
    let addr = served.addr;
    let body = "{not json";
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).await.unwrap();
    assert!(out.starts_with("HTTP/1.1 400"), "{out}");
    assert!(out.contains("-32700"), "{out}");

    // A session opened, then closed: 200.
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(initialize(addr, "s3cret").as_bytes())
        .await
        .unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).await.unwrap();
    let session = out
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap_or_else(|| panic!("{out}"))
        .trim()
        .to_owned();
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer s3cret\r\nMcp-Session-Id: {session}\r\nConnection: close\r\n\r\n"
    );
    assert!(status_of(addr, &delete).await.starts_with("HTTP/1.1 200"));
}
