//! Both HTTP clients against local servers that speak their streaming wire
//! formats: text as it arrives, tool calls, parallel calls, usage, retries
//! (429 with retry-after, 500 then success, a reset connection), a stream
//! cut mid-way, garbage, a server that hangs.

use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::{Value, json};
use tack_agent::{
    AnthropicConfig, AnthropicMessages, ChatModel, ModelError, ModelObserver, OpenAiCompatible,
    OpenAiConfig, Reply, Retry, Usage,
};

use super::http_server::{Answer, Server, chunk, serve, serve_in_turn, sse};
use super::openai::{fast_retries, history, tools};

/// Records what a client reports.
#[derive(Default)]
struct Seen {
    text: Mutex<Vec<String>>,
    usage: Mutex<Vec<Usage>>,
    retries: Mutex<Vec<Retry>>,
}

impl ModelObserver for Seen {
    fn text_delta(&self, text: &str) {
        self.text.lock().push(text.to_owned());
    }
    fn usage(&self, usage: Usage) {
        self.usage.lock().push(usage);
    }
    fn retry(&self, retry: &Retry) {
        self.retries.lock().push(retry.clone());
    }
}

/// A whole stream of `events`.
fn stream(events: Vec<String>) -> Answer {
    Answer::Sse {
        events,
        complete: true,
    }
}

/// `model`'s answer to the test history, with what it reported on the way.
async fn observe(model: &impl ChatModel) -> (Result<Reply, ModelError>, Seen) {
    let seen = Seen::default();
    let reply = model.complete_observed(&history(), &tools(), &seen).await;
    (reply, seen)
}

fn openai(server: &Server) -> OpenAiCompatible {
    OpenAiCompatible::new(
        OpenAiConfig::new(&server.url, "sk-test", "test-model")
            .with_timeout(Duration::from_millis(400))
            .with_retry(fast_retries()),
    )
    .unwrap()
}

fn anthropic(server: &Server) -> AnthropicMessages {
    AnthropicMessages::new(
        AnthropicConfig::new(&server.base, "sk-ant-test", "claude-test")
            .with_timeout(Duration::from_millis(400))
            .with_retry(fast_retries()),
    )
    .unwrap()
}

fn delta(d: Value) -> String {
    chunk(
        json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": d, "finish_reason": null}]}),
    )
}

fn openai_text_stream() -> Vec<String> {
    vec![
        delta(json!({"role": "assistant", "content": ""})),
        delta(json!({"content": "Hel"})),
        delta(json!({"content": "lo"})),
        chunk(
            json!({"id": "c", "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}),
        ),
        "data: [DONE]".to_owned(),
    ]
}

fn anthropic_text_stream() -> Vec<String> {
    vec![
        sse(
            "message_start",
            json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "usage": {"input_tokens": 20, "output_tokens": 1}}}),
        ),
        sse(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        sse("ping", json!({"type": "ping"})),
        sse(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}}),
        ),
        sse(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "lo"}}),
        ),
        sse(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        sse(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}}),
        ),
        sse("message_stop", json!({"type": "message_stop"})),
    ]
}

// ------------------------------------------------------------------ OpenAI

#[tokio::test]
async fn openai_streams_text_and_reports_usage() {
    let server = serve(stream(openai_text_stream())).await;
    let (reply, seen) = observe(&openai(&server)).await;
    let reply = reply.unwrap();
    assert!(
        matches!(reply, Reply::Text(ref t) if t == "Hello"),
        "{reply:?}"
    );
    assert_eq!(*seen.text.lock(), ["Hel", "lo"]);
    assert_eq!(
        *seen.usage.lock(),
        [Usage {
            input_tokens: 12,
            output_tokens: 3
        }]
    );
    let body = &server.requests.lock()[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
}

#[tokio::test]
async fn openai_streams_parallel_tool_calls_in_pieces() {
    let call = |index: u64, id: Option<&str>, name: Option<&str>, args: &str| {
        let mut function = json!({"arguments": args});
        if let Some(name) = name {
            function["name"] = json!(name);
        }
        let mut c = json!({"index": index, "function": function});
        if let Some(id) = id {
            c["id"] = json!(id);
            c["type"] = json!("function");
        }
        delta(json!({"tool_calls": [c]}))
    };
    let server = serve(Answer::Sse {
        events: vec![
            call(0, Some("call_a"), Some("read_file"), ""),
            call(0, None, None, "{\"path\":"),
            call(1, Some("call_b"), Some("read_file"), "{\"path\":\"b\"}"),
            call(0, None, None, "\"a\"}"),
            "data: [DONE]".to_owned(),
        ],
        complete: true,
    })
    .await;
    let Reply::ToolCalls(calls) = openai(&server)
        .complete(&history(), &tools())
        .await
        .unwrap()
    else {
        panic!()
    };
    let got: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| (c.call_id.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("call_a", "{\"path\":\"a\"}"),
            ("call_b", "{\"path\":\"b\"}")
        ]
    );
}

#[tokio::test]
async fn an_empty_stream_is_an_empty_reply_not_an_answer() {
    let server = serve(Answer::Sse {
        events: vec![
            delta(json!({"role": "assistant"})),
            "data: [DONE]".to_owned(),
        ],
        complete: true,
    })
    .await;
    let reply = openai(&server)
        .complete(&history(), &tools())
        .await
        .unwrap();
    assert!(
        matches!(reply, Reply::ToolCalls(ref c) if c.is_empty()),
        "{reply:?}"
    );
    let server = serve(Answer::Sse {
        events: vec![
            sse("message_start", json!({"type": "message_start", "message": {"usage": {"input_tokens": 1, "output_tokens": 0}}})),
            sse("message_stop", json!({"type": "message_stop"})),
        ],
        complete: true,
    })
    .await;
    let reply = anthropic(&server)
        .complete(&history(), &tools())
        .await
        .unwrap();
    assert!(
        matches!(reply, Reply::ToolCalls(ref c) if c.is_empty()),
        "{reply:?}"
    );
}

#[tokio::test]
async fn openai_a_stream_cut_mid_way_is_an_error() {
    let mut events = openai_text_stream();
    events.truncate(2);
    let server = serve(Answer::Sse {
        events,
        complete: false,
    })
    .await;
    let (err, _) = observe(&openai(&server)).await;
    let err = err.unwrap_err();
    assert!(
        matches!(err, ModelError::Transport { .. } | ModelError::Malformed(_)),
        "{err}"
    );
    // Text already shown is not sent again by a retry.
    assert_eq!(server.requests.lock().len(), 1);
}

#[tokio::test]
async fn openai_garbage_in_a_stream_is_malformed() {
    let server = serve(stream(vec!["data: {not json".to_owned()])).await;
    let err = openai(&server)
        .complete(&history(), &tools())
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Malformed(_)), "{err}");
    assert!(err.to_string().contains("not JSON"), "{err}");
}

#[tokio::test]
async fn openai_a_stream_that_stalls_times_out() {
    let mut events = openai_text_stream();
    events.truncate(2);
    let server = serve(Answer::SseStall(events)).await;
    let err = openai(&server)
        .complete(&history(), &tools())
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Timeout { .. }), "{err}");
}

#[tokio::test]
async fn openai_429_with_retry_after_is_honoured() {
    let server = serve_in_turn(vec![
        Answer::WithHeaders(
            429,
            vec!["retry-after: 1".into()],
            "{\"error\":{\"message\":\"slow down\"}}".into(),
        ),
        stream(openai_text_stream()),
    ])
    .await;
    let seen = Seen::default();
    let started = Instant::now();
    let reply = openai(&server)
        .complete_observed(&history(), &tools(), &seen)
        .await
        .unwrap();
    assert!(matches!(reply, Reply::Text(_)));
    // The wait the server asked for, not the policy's 5 ms.
    assert!(started.elapsed() >= Duration::from_secs(1));
    let retries = seen.retries.lock();
    assert_eq!(retries.len(), 1);
    assert_eq!(retries[0].delay, Duration::from_secs(1));
    assert!(retries[0].reason.contains("429"), "{:?}", retries[0]);
    assert_eq!(server.requests.lock().len(), 2);
}

#[tokio::test]
async fn openai_500_then_success() {
    let server = serve_in_turn(vec![
        Answer::Http(500, "{\"error\":{\"message\":\"upstream\"}}".into()),
        Answer::Http(503, "overloaded".into()),
        stream(openai_text_stream()),
    ])
    .await;
    let (reply, seen) = observe(&openai(&server)).await;
    reply.unwrap();
    assert_eq!(seen.retries.lock().len(), 2);
    assert_eq!(server.requests.lock().len(), 3);
}

#[tokio::test]
async fn retries_end_and_a_client_error_is_not_retried() {
    let server = serve(Answer::Http(500, "down".into())).await;
    let err = openai(&server)
        .complete(&history(), &tools())
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Http { status: 500, .. }), "{err}");
    // The first attempt and the policy's three retries.
    assert_eq!(server.requests.lock().len(), 4);

    let server = serve(Answer::Http(400, "bad request".into())).await;
    openai(&server)
        .complete(&history(), &tools())
        .await
        .unwrap_err();
    assert_eq!(server.requests.lock().len(), 1);

    // A retry-after beyond the policy's limit ends the retries at once.
    let server = serve(Answer::WithHeaders(
        429,
        vec!["retry-after: 3600".into()],
        "{}".into(),
    ))
    .await;
    let err = openai(&server)
        .complete(&history(), &tools())
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Http { status: 429, .. }), "{err}");
    assert_eq!(server.requests.lock().len(), 1);
}

#[tokio::test]
async fn a_reset_connection_is_retried() {
    let server = serve_in_turn(vec![Answer::Reset, stream(anthropic_text_stream())]).await;
    let (reply, seen) = observe(&anthropic(&server)).await;
    let reply = reply.unwrap();
    assert!(
        matches!(reply, Reply::Text(ref t) if t == "Hello"),
        "{reply:?}"
    );
    assert_eq!(seen.retries.lock().len(), 1);
}

// --------------------------------------------------------------- Anthropic

#[tokio::test]
async fn anthropic_streams_text_and_reports_usage() {
    let server = serve(stream(anthropic_text_stream())).await;
    let (reply, seen) = observe(&anthropic(&server)).await;
    let reply = reply.unwrap();
    assert!(
        matches!(reply, Reply::Text(ref t) if t == "Hello"),
        "{reply:?}"
    );
    assert_eq!(*seen.text.lock(), ["Hel", "lo"]);
    assert_eq!(
        *seen.usage.lock(),
        [Usage {
            input_tokens: 20,
            output_tokens: 7
        }]
    );
    // The request: headers, system apart, tools, alternating roles.
    let head = &server.heads.lock()[0];
    assert!(head.starts_with("post /v1/messages "), "{head}");
    assert!(head.contains("x-api-key: sk-ant-test"), "{head}");
    assert!(head.contains("anthropic-version: 2023-06-01"), "{head}");
    let body = &server.requests.lock()[0];
    assert_eq!(body["system"], "be brief");
    assert_eq!(body["stream"], true);
    assert_eq!(body["tools"][0]["name"], "read_file");
    assert!(body["tools"][0]["input_schema"].is_object(), "{body}");
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(body["messages"][2]["content"][0]["tool_use_id"], "c0");
}

#[tokio::test]
async fn anthropic_streams_parallel_tool_calls() {
    let start = |index: u64, id: &str| {
        sse(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": "read_file", "input": {}}}),
        )
    };
    let json_delta = |index: u64, part: &str| {
        sse(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": part}}),
        )
    };
    let server = serve(Answer::Sse {
        events: vec![
            sse(
                "message_start",
                json!({"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}}),
            ),
            sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
            sse(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Reading both."}}),
            ),
            start(1, "toolu_a"),
            json_delta(1, "{\"path\": "),
            json_delta(1, "\"a\"}"),
            start(2, "toolu_b"),
            json_delta(2, "{\"path\": \"b\"}"),
            sse(
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
            ),
            sse("message_stop", json!({"type": "message_stop"})),
        ],
        complete: true,
    })
    .await;
    let seen = Seen::default();
    let Reply::ToolCalls(calls) = anthropic(&server)
        .complete_observed(&history(), &tools(), &seen)
        .await
        .unwrap()
    else {
        panic!()
    };
    let got: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| (c.call_id.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("toolu_a", "{\"path\": \"a\"}"),
            ("toolu_b", "{\"path\": \"b\"}")
        ]
    );
    assert_eq!(seen.usage.lock()[0].output_tokens, 30);
}

#[tokio::test]
async fn anthropic_a_whole_reply_is_read_too() {
    let body = json!({"id": "m", "type": "message", "role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "README.md"}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 9, "output_tokens": 4}});
    let server = serve(Answer::Http(200, body.to_string())).await;
    let seen = Seen::default();
    let Reply::ToolCalls(calls) = anthropic(&server)
        .complete_observed(&history(), &tools(), &seen)
        .await
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(calls[0].arguments, "{\"path\":\"README.md\"}");
    assert_eq!(seen.usage.lock()[0].input_tokens, 9);
}

#[tokio::test]
async fn anthropic_errors_cuts_garbage_and_hangs() {
    // An error event inside the stream (e.g. overloaded).
    let server = serve(Answer::Sse {
        events: vec![sse(
            "error",
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        )],
        complete: true,
    })
    .await;
    let err = anthropic(&server)
        .complete(&history(), &tools())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("overloaded_error"), "{err}");

    // Cut before message_stop.
    let mut events = anthropic_text_stream();
    events.truncate(4);
    let server = serve(Answer::Sse {
        events,
        complete: false,
    })
    .await;
    let err = anthropic(&server)
        .complete(&history(), &tools())
        .await
        .unwrap_err();
    assert!(
        matches!(err, ModelError::Transport { .. } | ModelError::Malformed(_)),
        "{err}"
    );

    // Garbage instead of HTTP.
    let server = serve(Answer::Raw(b"\x00\x01garbage\r\n\r\n".to_vec())).await;
    let err = anthropic(&server)
        .complete(&history(), &tools())
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Transport { .. }), "{err}");

    // A hanging server: the timeout, then the retries, then the error.
    let server = serve(Answer::Hang).await;
    let err = anthropic(&server)
        .complete(&history(), &tools())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ModelError::Timeout {
                timeout_ms: 400,
                ..
            }
        ),
        "{err}"
    );

    // 401 names the key and is not retried.
    let server = serve(Answer::Http(
        401,
        "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}".into(),
    ))
    .await;
    let err = anthropic(&server)
        .complete(&history(), &tools())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
    assert_eq!(server.requests.lock().len(), 1);
}

#[tokio::test]
async fn anthropic_429_with_retry_after() {
    let server = serve_in_turn(vec![
        Answer::WithHeaders(
            429,
            vec!["retry-after: 1".into()],
            "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow\"}}"
                .into(),
        ),
        stream(anthropic_text_stream()),
    ])
    .await;
    let seen = Seen::default();
    let started = Instant::now();
    anthropic(&server)
        .complete_observed(&history(), &tools(), &seen)
        .await
        .unwrap();
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(seen.retries.lock()[0].delay, Duration::from_secs(1));
}
