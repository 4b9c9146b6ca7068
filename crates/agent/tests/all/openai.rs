//! The OpenAI-compatible client against a local HTTP server on 127.0.0.1.

use std::time::Duration;

use serde_json::json;
use tack_agent::{
    ChatModel, Message, ModelError, OpenAiCompatible, OpenAiConfig, Reply, RetryPolicy,
};
use tack_core::host::ToolSchema;
use tack_core::tool::ToolCall;
use tokio::net::TcpListener;

use super::http_server::{Answer, Server, completion, serve};

fn client(server: &Server) -> OpenAiCompatible {
    OpenAiCompatible::new(
        OpenAiConfig::new(&server.url, "sk-test", "test-model")
            .with_timeout(Duration::from_millis(300))
            .with_retry(fast_retries()),
    )
    .unwrap()
}

/// Retries with short waits, so tests stay quick.
pub fn fast_retries() -> RetryPolicy {
    RetryPolicy::default().with_delays(Duration::from_millis(5), Duration::from_millis(20))
}

pub fn tools() -> Vec<ToolSchema> {
    vec![ToolSchema::new(
        "read_file",
        "Read a file.",
        json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    )]
}

pub fn history() -> Vec<Message> {
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
