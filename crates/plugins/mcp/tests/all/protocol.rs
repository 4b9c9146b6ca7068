//! The protocol over HTTP: JSON-RPC batches where the version has them.

use serde_json::json;
use tack_mcp::HttpOptions;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::fixture::{echo, serve};

/// One POST on a new connection: the status line and the body.
async fn post(addr: std::net::SocketAddr, headers: &str, body: &str) -> (String, String) {
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).await.unwrap();
    let status = out.lines().next().unwrap_or("").to_owned();
    let session = out
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    (format!("{status} {session}"), out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_on_a_2025_03_26_http_session_gets_one_array_and_later_versions_refuse_it() {
    let served = serve(vec![echo()], HttpOptions::default().bearer_token("s3cret")).await;
    let addr = served.addr;
    let init = |version: &str| {
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        .to_string()
    };
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}
    ])
    .to_string();

    let (status, _) = post(addr, "", &init("2025-03-26")).await;
    let session = status.split(' ').next_back().unwrap().to_owned();
    assert!(status.contains("200") && !session.is_empty(), "{status}");
    let headers = format!("Mcp-Session-Id: {session}\r\n");
    post(
        addr,
        &headers,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
    )
    .await;
    let (status, out) = post(addr, &headers, &batch).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{out}");
    let body = &out[out.find("\r\n\r\n").unwrap() + 4..];
    let answers: Vec<serde_json::Value> =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(answers.len(), 2, "{answers:?}");
    let call = answers.iter().find(|a| a["id"] == 2).unwrap();
    assert_eq!(call["result"]["structuredContent"]["text"], "hi", "{call}");
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == 1 && a["result"]["tools"].is_array())
    );

    let (status, _) = post(addr, "", &init("2025-06-18")).await;
    let session = status.split(' ').next_back().unwrap().to_owned();
    let headers = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n");
    let (status, out) = post(addr, &headers, &batch).await;
    assert!(status.starts_with("HTTP/1.1 400"), "{out}");
    assert!(
        out.contains("-32600") && out.contains("2025-06-18"),
        "{out}"
    );
}
