//! The OpenAI-compatible client against a local HTTP server on 127.0.0.1.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tack_agent::{ChatModel, Message, ModelError, OpenAiCompatible, OpenAiConfig, Reply};
use tack_core::tool::{ToolCall, ToolSchema};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the server answers: a status and body, or nothing at all.
#[derive(Clone)]
enum Answer {
    Http(u16, String),
    Hang,
}

/// A one-endpoint HTTP/1.1 server that records request bodies.
struct Server {
    url: String,
    requests: Arc<Mutex<Vec<Value>>>,
}

async fn serve(answer: Answer) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let seen = seen.clone();
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                // Headers, then Content-Length bytes of body.
                let (head_end, length) = loop {
                    let n = socket.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..at]).to_lowercase();
                        let length = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        break (at + 4, length);
                    }
                };
                while buf.len() < head_end + length {
                    let n = socket.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                if let Ok(body) = serde_json::from_slice(&buf[head_end..head_end + length]) {
                    seen.lock().push(body);
                }
                match answer {
                    Answer::Hang => {
                        // Keep the connection open without answering.
                        let _ = socket.read(&mut chunk).await;
                    }
                    Answer::Http(status, body) => {
                        let response = format!(
                            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        );
                        let _ = socket.write_all(response.as_bytes()).await;
                    }
                }
            });
        }
    });
    Server { url, requests }
}

fn client(server: &Server) -> OpenAiCompatible {
    OpenAiCompatible::new(
        OpenAiConfig::new(&server.url, "sk-test", "test-model")
            .with_timeout(Duration::from_millis(300)),
    )
    .unwrap()
}

fn tools() -> Vec<ToolSchema> {
    vec![ToolSchema::new(
        "read_file",
        "Read a file.",
        json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    )]
}

fn history() -> Vec<Message> {
    vec![
        Message::System("be brief".into()),
        Message::User("read a".into()),
        Message::ToolCalls(vec![ToolCall::new("c0", "read_file", "{\"path\":\"a\"}")]),
        Message::ToolResult {
            call_id: "c0".into(),
            tool: "read_file".into(),
            content: "A".into(),
            is_error: false,
        },
    ]
}

fn completion(message: Value) -> String {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
    .to_string()
}

#[tokio::test]
async fn a_single_tool_call() {
    let server = serve(Answer::Http(200, completion(json!({
        "role": "assistant", "content": null,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"README.md\"}"}}]
    })))).await;
    let reply = client(&server)
        .complete(&history(), &tools())
        .await
        .unwrap();
    let Reply::ToolCalls(calls) = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(calls.len(), 1);
    assert_eq!(
        (calls[0].call_id.as_str(), calls[0].name.as_str()),
        ("call_1", "read_file")
    );
    assert_eq!(calls[0].arguments, "{\"path\":\"README.md\"}");
    // What was sent.
    let sent = server.requests.lock()[0].clone();
    assert_eq!(sent["model"], "test-model");
    assert_eq!(sent["tools"][0]["function"]["name"], "read_file");
    assert_eq!(sent["parallel_tool_calls"], true);
    let roles: Vec<&str> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
    assert_eq!(sent["messages"][3]["tool_call_id"], "c0");
}

#[tokio::test]
async fn parallel_tool_calls_keep_their_order() {
    let server = serve(Answer::Http(200, completion(json!({
        "role": "assistant", "content": null,
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}},
            {"id": "call_b", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"b\"}"}},
            {"id": "call_c", "type": "function", "function": {"name": "list_dir", "arguments": "{\"path\": oops"}}
        ]
    })))).await;
    let Reply::ToolCalls(calls) = client(&server)
        .complete(&history(), &tools())
        .await
        .unwrap()
    else {
        panic!()
    };
    let ids: Vec<&str> = calls.iter().map(|c| c.call_id.as_str()).collect();
    assert_eq!(ids, ["call_a", "call_b", "call_c"]);
    assert_eq!(
        calls[2].arguments, "{\"path\": oops",
        "malformed arguments pass through for the pipeline to judge"
    );
}

#[tokio::test]
async fn a_text_answer() {
    let server = serve(Answer::Http(
        200,
        completion(json!({"role": "assistant", "content": "README says hello."})),
    ))
    .await;
    let reply = client(&server).complete(&history(), &[]).await.unwrap();
    assert!(matches!(reply, Reply::Text(t) if t == "README says hello."));
    assert!(
        server.requests.lock()[0].get("tools").is_none(),
        "no tools, no tools field"
    );
}

#[tokio::test]
async fn unauthorized_names_the_key() {
    let body = json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}).to_string();
    let server = serve(Answer::Http(401, body)).await;
    let err = client(&server)
        .complete(&history(), &tools())
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Http { status: 401, .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("Incorrect API key provided") && text.contains("OPENAI_API_KEY"),
        "{text}"
    );
}

#[tokio::test]
async fn a_server_error_is_reported() {
    let server = serve(Answer::Http(
        500,
        "{\"error\":{\"message\":\"upstream failed\"}}".into(),
    ))
    .await;
    let err = client(&server)
        .complete(&history(), &tools())
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Http { status: 500, .. }), "{err}");
    assert!(err.to_string().contains("upstream failed"), "{err}");
}

#[tokio::test]
async fn garbage_is_malformed() {
    let server = serve(Answer::Http(200, "<html>gateway</html>".into())).await;
    let err = client(&server)
        .complete(&history(), &tools())
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Malformed(_)), "{err}");
    let server = serve(Answer::Http(200, "{\"choices\": []}".into())).await;
    let err = client(&server)
        .complete(&history(), &tools())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("choices[0].message"), "{err}");
}

#[tokio::test]
async fn a_hanging_endpoint_times_out() {
    let server = serve(Answer::Hang).await;
    let err = client(&server)
        .complete(&history(), &tools())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ModelError::Timeout {
                timeout_ms: 300,
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn an_unreachable_endpoint_is_a_transport_error() {
    // Bind and drop: nothing listens on that port any more.
    let port = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let model = OpenAiCompatible::new(OpenAiConfig::new(
        format!("http://127.0.0.1:{port}/v1"),
        "k",
        "m",
    ))
    .unwrap();
    let err = model.complete(&history(), &tools()).await.unwrap_err();
    assert!(matches!(err, ModelError::Transport { .. }), "{err}");
}
