//! A local HTTP/1.1 server on 127.0.0.1 for the model clients: it records
//! request bodies and heads and answers them in turn.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the server answers: a status and body, or nothing at all.
#[derive(Clone)]
pub enum Answer {
    Http(u16, String),
    /// A status, extra header lines (`retry-after: 1`) and a JSON body.
    WithHeaders(u16, Vec<String>, String),
    /// A `text/event-stream` of these events (`event: …\ndata: …`), sent
    /// one by one; `complete: false` cuts the connection after them.
    Sse {
        events: Vec<String>,
        complete: bool,
    },
    /// These events, then silence with the connection open.
    SseStall(Vec<String>),
    /// Raw bytes instead of HTTP.
    Raw(Vec<u8>),
    /// Accepts, reads the request and closes without a word.
    Reset,
    Hang,
}

/// A one-endpoint server and the request bodies it received.
pub struct Server {
    pub url: String,
    /// `http://127.0.0.1:PORT` (without `/v1`).
    pub base: String,
    pub requests: Arc<Mutex<Vec<Value>>>,
    /// The request heads (lowercased), in order.
    pub heads: Arc<Mutex<Vec<String>>>,
}

/// Answers every request with `answer`.
pub async fn serve(answer: Answer) -> Server {
    serve_in_turn(vec![answer]).await
}

/// Answers request `n` with `answers[n]` (the last one repeats).
pub async fn serve_in_turn(answers: Vec<Answer>) -> Server {
    assert!(!answers.is_empty(), "give the server something to answer");
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let url = format!("{base}/v1");
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen_heads = heads.clone();
    let answers = Arc::new(answers);
    let next = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let seen = seen.clone();
            let seen_heads = seen_heads.clone();
            let answers = answers.clone();
            let next = next.clone();
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
                        seen_heads.lock().push(head);
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
                let n = next.fetch_add(1, Ordering::SeqCst).min(answers.len() - 1);
                match answers[n].clone() {
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
                    Answer::WithHeaders(status, headers, body) => {
                        let extra: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
                        let response = format!(
                            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        );
                        let _ = socket.write_all(response.as_bytes()).await;
                    }
                    Answer::Sse { events, complete } => {
                        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
                        if socket.write_all(head.as_bytes()).await.is_err() {
                            return;
                        }
                        for event in events {
                            let data = format!("{event}\n\n");
                            let chunk = format!("{:x}\r\n{data}\r\n", data.len());
                            if socket.write_all(chunk.as_bytes()).await.is_err() {
                                return;
                            }
                            let _ = socket.flush().await;
                            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                        }
                        if complete {
                            let _ = socket.write_all(b"0\r\n\r\n").await;
                        }
                        // Without the last chunk, closing cuts the stream.
                    }
                    Answer::SseStall(events) => {
                        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                        let _ = socket.write_all(head.as_bytes()).await;
                        for event in events {
                            let data = format!("{event}\n\n");
                            let chunk = format!("{:x}\r\n{data}\r\n", data.len());
                            let _ = socket.write_all(chunk.as_bytes()).await;
                        }
                        let _ = socket.flush().await;
                        let _ = socket.read(&mut chunk).await;
                    }
                    Answer::Raw(bytes) => {
                        let _ = socket.write_all(&bytes).await;
                    }
                    Answer::Reset => {}
                }
            });
        }
    });
    Server {
        url,
        base,
        requests,
        heads,
    }
}

/// A chat-completions response carrying `message`.
pub fn completion(message: Value) -> String {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
    .to_string()
}

/// An SSE event line pair: `event: NAME` and `data: JSON`.
pub fn sse(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}")
}

/// An OpenAI stream chunk (`data:` only).
pub fn chunk(data: Value) -> String {
    format!("data: {data}")
}
