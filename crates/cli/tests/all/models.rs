//! `tack run` with the HTTP models against local servers on 127.0.0.1:
//! streamed text shown once, tool calls run, usage logged and summed.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::json;

use super::*;

/// Serves `answers` (whole HTTP responses) one per connection, in order,
/// and keeps the request bodies.
pub(crate) fn serve(answers: Vec<String>) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = bodies.clone();
    std::thread::spawn(move || {
        for answer in answers {
            let Ok((mut socket, _)) = listener.accept() else {
                return;
            };
            let mut buf = Vec::new();
            let mut chunk = [0u8; 8192];
            loop {
                let n = socket.read(&mut chunk).unwrap_or(0);
                if n == 0 {
                    return;
                }
                buf.extend_from_slice(&chunk[..n]);
                if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&buf[..at]).to_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    while buf.len() < at + 4 + length {
                        let n = socket.read(&mut chunk).unwrap_or(0);
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                    }
                    if let Ok(body) = serde_json::from_slice(&buf[at + 4..at + 4 + length]) {
                        seen.lock().unwrap().push(body);
                    }
                    break;
                }
            }
            let _ = socket.write_all(answer.as_bytes());
        }
    });
    (base, bodies)
}

fn event_stream(events: &[String]) -> String {
    let body: String = events.iter().map(|e| format!("{e}\n\n")).collect();
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn sse(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}")
}

fn anthropic_tool_use() -> String {
    event_stream(&[
        sse(
            "message_start",
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        sse(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        sse(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Reading it."}}),
        ),
        sse(
            "content_block_start",
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}),
        ),
        sse(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"README.md\"}"}}),
        ),
        sse(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}}),
        ),
        sse("message_stop", json!({"type": "message_stop"})),
    ])
}

fn anthropic_text(pieces: &[&str]) -> String {
    let mut events = vec![
        sse(
            "message_start",
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 20, "output_tokens": 1}}}),
        ),
        sse(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
    ];
    for piece in pieces {
        events.push(sse("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}})));
    }
    events.push(sse("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}})));
    events.push(sse("message_stop", json!({"type": "message_stop"})));
    event_stream(&events)
}

#[test]
fn anthropic_runs_a_tool_streams_the_answer_and_counts_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("README.md"), "# hello from the readme").unwrap();
    let (base, bodies) = serve(vec![
        anthropic_tool_use(),
        anthropic_text(&["The readme ", "says hello."]),
    ]);
    let log = log_in(&dir, "anthropic");
    let assert = tack(&ws)
        .env("ANTHROPIC_BASE_URL", &base)
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("ANTHROPIC_MODEL", "claude-test")
        .args([
            "run",
            "-m",
            "anthropic",
            "--mode",
            "allow-all",
            "what is in the readme?",
            "--log",
        ])
        .arg(&log)
        .assert()
        .success();
    let out = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let err = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert!(out.contains("[tool:read_file] -> ok"), "{out}");
    // The text streamed before the call is shown once, before it, and kept.
    assert_eq!(out.matches("[assistant] Reading it.\n").count(), 1, "{out}");
    assert!(out.find("Reading it.").unwrap() < out.find("[tool:read_file]").unwrap());
    assert_eq!(of_type(&log, "assistant/note")[0]["text"], "Reading it.");
    assert_eq!(
        out.matches("[assistant] The readme says hello.\n").count(),
        1,
        "{out}"
    );
    assert!(err.contains("tokens: 30 in, 12 out"), "{err}");
    let usage = of_type(&log, "model/usage");
    assert_eq!(usage.len(), 2);
    assert_eq!(usage[0]["input_tokens"], 10);
    assert_eq!(usage[0]["output_tokens"], 5);
    assert_eq!(usage[1]["session"]["input_tokens"], 30);
    assert_eq!(usage[1]["session"]["output_tokens"], 12);
    assert_eq!(
        of_type(&log, "session/start")[0]["model"],
        "anthropic:claude-test"
    );
    // The second request carried the tool's result.
    let bodies = bodies.lock().unwrap();
    let second = bodies[1]["messages"].to_string();
    assert!(
        second.contains("tool_result") && second.contains("hello from the readme"),
        "{second}"
    );
    // The note went back as the assistant's text beside its tool_use.
    let assistant = &bodies[1]["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["content"][0]["text"], "Reading it.");
    assert_eq!(assistant["content"][1]["type"], "tool_use");
    // Replay prints what the live run printed.
    let replayed = stdout_of(tack(&ws).arg("replay").arg(&log));
    assert_eq!(replayed, out);
}

#[test]
fn openai_streams_through_the_cli_too() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let chunk = |d: Value| format!("data: {}", json!({"choices": [{"index": 0, "delta": d}]}));
    let (base, _) = serve(vec![event_stream(&[
        chunk(json!({"content": "Hi "})),
        chunk(json!({"content": "there\u{1b}[2K"})),
        format!(
            "data: {}",
            json!({"choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 2}})
        ),
        "data: [DONE]".to_owned(),
    ])]);
    let log = log_in(&dir, "openai");
    let assert = tack(&ws)
        .env("OPENAI_BASE_URL", format!("{base}/v1"))
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_MODEL", "test-model")
        .args(["run", "-m", "openai", "hi", "--log"])
        .arg(&log)
        .assert()
        .success();
    let out = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let err = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    // Streamed pieces are escaped like whole lines.
    assert_eq!(out, "[user] hi\n[assistant] Hi there\\x1b[2K\n");
    assert!(err.contains("tokens: 4 in, 2 out"), "{err}");
}

/// `--model openai:MODEL` names the model over OPENAI_MODEL; the settings'
/// `base_url` and `api_key_env` say where and with which key.
#[test]
fn provider_model_base_url_and_key_variable_reach_the_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let chunk = |d: Value| format!("data: {}", json!({"choices": [{"index": 0, "delta": d}]}));
    let (base, bodies) = serve(vec![event_stream(&[
        chunk(json!({"content": "from the server"})),
        "data: [DONE]".to_owned(),
    ])]);
    let settings = dir.path().join("settings.json");
    std::fs::write(
        &settings,
        json!({"base_url": format!("{base}/v1"), "api_key_env": "MY_TEST_KEY"}).to_string(),
    )
    .unwrap();
    let out = stdout_of(
        tack(&ws)
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env("OPENAI_MODEL", "from-env")
            .env("MY_TEST_KEY", "sk-test")
            .args(["run", "hi", "--model", "openai:gpt-test", "--settings"])
            .arg(&settings),
    );
    assert!(out.contains("from the server"), "{out}");
    assert_eq!(bodies.lock().unwrap()[0]["model"], "gpt-test");
}

/// Each retry is one line: the reason once, then only that it failed again.
#[test]
fn retries_are_one_line_each_and_the_reason_is_not_repeated() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let busy = "HTTP/1.1 503 Service Unavailable\r\nretry-after: 0\r\ncontent-length: 4\r\nconnection: close\r\n\r\nbusy".to_owned();
    let chunk = |d: Value| format!("data: {}", json!({"choices": [{"index": 0, "delta": d}]}));
    let (base, _) = serve(vec![
        busy.clone(),
        busy,
        event_stream(&[chunk(json!({"content": "done"})), "data: [DONE]".to_owned()]),
    ]);
    let assert = tack(&ws)
        .env("OPENAI_BASE_URL", format!("{base}/v1"))
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "-m", "openai:m", "hi"])
        .assert()
        .success();
    let err = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    let retries: Vec<&str> = err.lines().filter(|l| l.contains("retrying in")).collect();
    assert_eq!(retries.len(), 2, "{err}");
    assert!(retries[0].contains("HTTP 503"), "{err}");
    assert!(
        retries[1].contains("attempt 2 failed the same way"),
        "{err}"
    );
    assert!(!retries[1].contains("503"), "{err}");
}

#[test]
fn a_missing_key_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let err = tack(&ws)
        .env_remove("ANTHROPIC_API_KEY")
        .args(["run", "-m", "anthropic", "hi"])
        .assert()
        .code(1);
    let err = String::from_utf8(err.get_output().stderr.clone()).unwrap();
    assert!(err.contains("ANTHROPIC_API_KEY is not set"), "{err}");
}
