//! An Anthropic Messages API client with tools, parallel tool calls, image
//! results and streaming.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use tack_core::host::ToolSchema;
use tack_core::tool::{ContentBlock, ToolCall};

use super::http::{self, DEFAULT_TIMEOUT, RetryPolicy, snippet};
use super::observe::{ModelObserver, NoObserver, Usage};
use super::{ChatModel, ModelError};
use crate::message::{Message, Reply};

/// The API version sent in `anthropic-version`.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// The default `max_tokens` of a reply.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// Where and how to reach the Anthropic Messages API.
///
/// ```
/// use tack_agent::AnthropicConfig;
/// let config = AnthropicConfig::new("http://127.0.0.1:8080", "sk-ant-test", "claude-test");
/// assert_eq!(config.endpoint(), "http://127.0.0.1:8080/v1/messages");
/// ```
#[derive(Clone)]
pub struct AnthropicConfig {
    base_url: String,
    api_key: String,
    model: String,
    max_tokens: u32,
    timeout: Duration,
    retry: RetryPolicy,
    stream: bool,
}

impl std::fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key stays out of logs.
        f.debug_struct("AnthropicConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

impl AnthropicConfig {
    /// A configuration (request timeout 120 s, `max_tokens` 8192, the
    /// default retries, streaming).
    pub fn new(
        base_url: impl Into<String>,
        api_key: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            api_key: api_key.into(),
            model: model.into(),
            max_tokens: DEFAULT_MAX_TOKENS,
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::default(),
            stream: true,
        }
    }

    /// From `ANTHROPIC_BASE_URL` (default `https://api.anthropic.com`),
    /// `ANTHROPIC_API_KEY` (required) and `ANTHROPIC_MODEL` (required).
    ///
    /// # Errors
    ///
    /// [`ModelError::Config`] naming the missing variable.
    pub fn from_env() -> Result<Self, ModelError> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let base =
            var("ANTHROPIC_BASE_URL").unwrap_or_else(|| "https://api.anthropic.com".to_owned());
        let key = var("ANTHROPIC_API_KEY").ok_or_else(|| {
            ModelError::Config(
                "ANTHROPIC_API_KEY is not set: export your Anthropic API key (or use the default mock model)"
                    .to_owned(),
            )
        })?;
        let model = var("ANTHROPIC_MODEL").ok_or_else(|| {
            ModelError::Config(
                "ANTHROPIC_MODEL is not set: export the model name, e.g. ANTHROPIC_MODEL=claude-sonnet-4-5"
                    .to_owned(),
            )
        })?;
        Ok(Self::new(base, key, model))
    }

    /// Sets the request timeout: for connecting, for the response to
    /// start, and for each wait between two pieces of a streamed answer.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets when failed requests are retried.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Sets the `max_tokens` of a reply.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens.max(1);
        self
    }

    /// Whether to ask for a streamed answer (the default) or a whole one.
    pub fn with_stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// The Messages URL.
    pub fn endpoint(&self) -> String {
        format!("{}/v1/messages", self.base_url)
    }
}

/// An Anthropic Messages API client.
#[derive(Debug)]
pub struct AnthropicMessages {
    config: AnthropicConfig,
    client: reqwest::Client,
}

impl AnthropicMessages {
    /// A client for `config`.
    ///
    /// # Errors
    ///
    /// [`ModelError::Config`] if the HTTP client cannot be built.
    pub fn new(config: AnthropicConfig) -> Result<Self, ModelError> {
        let client = http::client(config.timeout)?;
        Ok(Self { config, client })
    }

    fn body(&self, messages: &[Message], tools: &[ToolSchema]) -> Value {
        let (system, wire) = wire_messages(messages);
        let mut body = json!({
            "model": self.config.model,
            "max_tokens": self.config.max_tokens,
            "messages": wire,
        });
        if !system.is_empty() {
            body["system"] = Value::String(system);
        }
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools.iter().map(ToolSchema::to_anthropic).collect());
        }
        if self.config.stream {
            body["stream"] = Value::Bool(true);
        }
        body
    }
}

/// The content blocks of a tool's or a context's content.
fn blocks(content: &[ContentBlock]) -> Vec<Value> {
    content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } if text.is_empty() => None,
            ContentBlock::Text { text } => Some(json!({"type": "text", "text": text})),
            ContentBlock::Image { data, mime_type } => Some(json!({
                "type": "image",
                "source": {"type": "base64", "media_type": mime_type, "data": data},
            })),
            ContentBlock::Json { value } => {
                Some(json!({"type": "text", "text": value.to_string()}))
            }
            ContentBlock::Resource { uri, text, .. } => {
                Some(json!({"type": "text", "text": text.as_deref().unwrap_or(uri)}))
            }
            other => Some(json!({
                "type": "text",
                "text": serde_json::to_string(other).unwrap_or_default(),
            })),
        })
        .collect()
}

/// The system text and the alternating user/assistant messages: a batch's
/// tool results and the contexts after them (images included) go in one
/// user message.
fn wire_messages(messages: &[Message]) -> (String, Vec<Value>) {
    let mut system: Vec<&str> = Vec::new();
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, content: Vec<Value>| {
        if content.is_empty() {
            return;
        }
        match out.last_mut() {
            Some((last, blocks)) if *last == role => blocks.extend(content),
            _ => out.push((role, content)),
        }
    };
    for message in messages {
        match message {
            Message::System(text) => system.push(text),
            Message::User(text) if text.is_empty() => {}
            Message::User(text) => push("user", vec![json!({"type": "text", "text": text})]),
            Message::Assistant(text) if text.is_empty() => {}
            Message::Assistant(text) => {
                push("assistant", vec![json!({"type": "text", "text": text})]);
            }
            Message::ToolCalls(calls) => push(
                "assistant",
                calls
                    .iter()
                    .map(|c| {
                        // The API takes the input as an object.
                        let input = match serde_json::from_str::<Value>(&c.arguments) {
                            Ok(Value::Object(map)) => Value::Object(map),
                            _ => Value::Object(Map::new()),
                        };
                        json!({"type": "tool_use", "id": c.call_id.as_str(), "name": c.name, "input": input})
                    })
                    .collect(),
            ),
            Message::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => push(
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": content,
                    "is_error": is_error,
                })],
            ),
            Message::Context(context) => push("user", blocks(&context.content)),
        }
    }
    let wire = out
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    (system.join("\n\n"), wire)
}

/// `usage` as the API reports it; cache reads and writes count as input.
fn usage_of(usage: &Value) -> Usage {
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: count("input_tokens")
            .saturating_add(count("cache_creation_input_tokens"))
            .saturating_add(count("cache_read_input_tokens")),
        output_tokens: count("output_tokens"),
    }
}

/// One content block of a reply being assembled.
enum Block {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        input: String,
    },
}

fn reply_of(blocks: Vec<Block>) -> Result<Reply, ModelError> {
    let mut text = String::new();
    let mut calls = Vec::new();
    for block in blocks {
        match block {
            Block::Text(t) => text.push_str(&t),
            Block::ToolUse { id, name, input } => {
                if id.is_empty() || name.is_empty() {
                    return Err(ModelError::Malformed(
                        "a tool_use block has no id or no name".to_owned(),
                    ));
                }
                let input = if input.trim().is_empty() {
                    "{}".to_owned()
                } else {
                    input
                };
                calls.push(ToolCall::new(id, name, input));
            }
        }
    }
    // Neither text nor a call is an empty batch: the loop's empty reply.
    if calls.is_empty() && !text.is_empty() {
        Ok(Reply::Text(text))
    } else {
        Ok(Reply::ToolCalls(calls))
    }
}

/// Reads a whole (non-streamed) Messages response.
fn parse_reply(body: &str, observer: &dyn ModelObserver) -> Result<Reply, ModelError> {
    let value: Value = serde_json::from_str(body)
        .map_err(|e| ModelError::Malformed(format!("not JSON ({e}): {}", snippet(body))))?;
    let content = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ModelError::Malformed(format!("no content array in {}", snippet(body))))?;
    if let Some(usage) = value.get("usage") {
        observer.usage(usage_of(usage));
    }
    let mut out = Vec::new();
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => out.push(Block::Text(
                block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            )),
            Some("tool_use") => out.push(Block::ToolUse {
                id: str_field(block, "id"),
                name: str_field(block, "name"),
                input: block.get("input").map(Value::to_string).unwrap_or_default(),
            }),
            _ => {}
        }
    }
    reply_of(out)
}

fn str_field(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Assembles a streamed reply from its events.
#[derive(Default)]
struct StreamedReply {
    blocks: Vec<(u64, Block)>,
    usage: Usage,
}

impl StreamedReply {
    fn block(&mut self, index: u64) -> Result<&mut Block, ModelError> {
        self.blocks
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, b)| b)
            .ok_or_else(|| {
                ModelError::Malformed(format!("a delta for content block {index}, never started"))
            })
    }

    /// Takes one event's data; `Ok(true)` at `message_stop`.
    fn event(&mut self, data: &str, observer: &dyn ModelObserver) -> Result<bool, ModelError> {
        let value: Value = serde_json::from_str(data).map_err(|e| {
            ModelError::Malformed(format!(
                "a stream event is not JSON ({e}): {}",
                snippet(data)
            ))
        })?;
        let index = value.get("index").and_then(Value::as_u64).unwrap_or(0);
        match value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "message_start" => {
                if let Some(usage) = value.pointer("/message/usage") {
                    self.usage = usage_of(usage);
                }
            }
            "content_block_start" => {
                let block = value.get("content_block").cloned().unwrap_or_default();
                let started = match block.get("type").and_then(Value::as_str) {
                    Some("tool_use") => Block::ToolUse {
                        id: str_field(&block, "id"),
                        name: str_field(&block, "name"),
                        input: String::new(),
                    },
                    _ => {
                        let text = str_field(&block, "text");
                        if !text.is_empty() {
                            observer.text_delta(&text);
                        }
                        Block::Text(text)
                    }
                };
                self.blocks.push((index, started));
            }
            "content_block_delta" => {
                let delta = value.get("delta").cloned().unwrap_or_default();
                match (
                    delta.get("type").and_then(Value::as_str),
                    self.block(index)?,
                ) {
                    (Some("text_delta"), Block::Text(text)) => {
                        let piece = str_field(&delta, "text");
                        observer.text_delta(&piece);
                        text.push_str(&piece);
                    }
                    (Some("input_json_delta"), Block::ToolUse { input, .. }) => {
                        input.push_str(&str_field(&delta, "partial_json"));
                    }
                    // Thinking, signatures, citations: not part of the answer.
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(out) = value
                    .pointer("/usage/output_tokens")
                    .and_then(Value::as_u64)
                {
                    self.usage.output_tokens = out;
                }
                if let Some(input) = value.pointer("/usage/input_tokens").and_then(Value::as_u64) {
                    self.usage.input_tokens = input;
                }
            }
            "message_stop" => {
                observer.usage(self.usage);
                return Ok(true);
            }
            "error" => {
                let kind = value
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                let message = value
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                return Err(ModelError::Malformed(format!(
                    "the stream reported an error: {kind}: {}",
                    snippet(message)
                )));
            }
            // `ping`, `content_block_stop`, and events added later.
            _ => {}
        }
        Ok(false)
    }

    fn finish(mut self) -> Result<Reply, ModelError> {
        self.blocks.sort_by_key(|(i, _)| *i);
        reply_of(self.blocks.into_iter().map(|(_, b)| b).collect())
    }
}

fn hint(status: u16) -> &'static str {
    match status {
        401 | 403 => " (check ANTHROPIC_API_KEY)",
        404 => " (check ANTHROPIC_BASE_URL and ANTHROPIC_MODEL)",
        429 => " (rate limited: wait and retry)",
        529 => " (the API is overloaded: retry later)",
        500..=599 => " (the provider failed: retry later)",
        _ => "",
    }
}

#[async_trait]
impl ChatModel for AnthropicMessages {
    fn name(&self) -> String {
        format!("anthropic:{}", self.config.model)
    }

    async fn complete(
        &self,
        messages: &[Message],
        tools: &[ToolSchema],
    ) -> Result<Reply, ModelError> {
        self.complete_observed(messages, tools, &NoObserver).await
    }

    async fn complete_observed(
        &self,
        messages: &[Message],
        tools: &[ToolSchema],
        observer: &dyn ModelObserver,
    ) -> Result<Reply, ModelError> {
        let url = self.config.endpoint();
        let body = self.body(messages, tools);
        let timeout = self.config.timeout;
        let response = http::send(
            || {
                self.client
                    .post(&url)
                    .header("x-api-key", &self.config.api_key)
                    .header("anthropic-version", ANTHROPIC_VERSION)
                    .json(&body)
            },
            &url,
            timeout,
            self.config.retry,
            hint,
            observer,
        )
        .await?;
        if !http::is_event_stream(&response) {
            let text = http::body_text(response, &url, timeout).await?;
            return parse_reply(&text, observer);
        }
        let mut reply = StreamedReply::default();
        http::read_events(response, &url, timeout, |event| {
            reply.event(event, observer)
        })
        .await?;
        reply.finish()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use tack_core::tool::DeferredContext;

    use super::*;

    #[test]
    fn a_batch_and_its_results_alternate_roles() {
        let history = vec![
            Message::System("be brief".into()),
            Message::User("read two".into()),
            Message::ToolCalls(vec![
                ToolCall::new("t1", "read_file", r#"{"path":"a"}"#),
                ToolCall::new("t2", "read_file", r#"{"path":"b"}"#),
            ]),
            Message::ToolResult {
                call_id: "t1".into(),
                tool: "read_file".into(),
                content: "A".into(),
                is_error: false,
            },
            Message::ToolResult {
                call_id: "t2".into(),
                tool: "read_file".into(),
                content: "no such file".into(),
                is_error: true,
            },
            Message::Context(DeferredContext::blocks(vec![
                ContentBlock::text("the image"),
                ContentBlock::Image {
                    data: "iVBORw0KGgo=".into(),
                    mime_type: "image/png".into(),
                },
            ])),
        ];
        let (system, wire) = wire_messages(&history);
        assert_eq!(system, "be brief");
        assert_eq!(wire.len(), 3, "{wire:#?}");
        assert_eq!(wire[1]["role"], "assistant");
        assert_eq!(wire[1]["content"][1]["input"]["path"], "b");
        assert_eq!(wire[2]["role"], "user");
        let content = wire[2]["content"].as_array().unwrap();
        assert_eq!(content[0]["type"], "tool_result");
        assert_eq!(content[1]["is_error"], true);
        assert_eq!(content[3]["type"], "image");
        assert_eq!(content[3]["source"]["media_type"], "image/png");
    }

    #[test]
    fn a_whole_reply_with_parallel_calls_is_read() {
        let body = r#"{"content":[{"type":"text","text":"Reading."},
            {"type":"tool_use","id":"t1","name":"read_file","input":{"path":"a"}},
            {"type":"tool_use","id":"t2","name":"list_dir","input":{}}],
            "usage":{"input_tokens":10,"output_tokens":4}}"#;
        let Reply::ToolCalls(calls) = parse_reply(body, &NoObserver).unwrap() else {
            panic!()
        };
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].arguments, r#"{"path":"a"}"#);
        assert!(parse_reply("{}", &NoObserver).is_err());
    }

    proptest::proptest! {
        #[test]
        fn streamed_blocks_reassemble_from_any_split(
            text in "\\PC{1,40}",
            input in "\\PC{1,40}",
            cut in 0usize..48,
        ) {
            let at = |s: &str| {
                let mut at = cut.min(s.len());
                while !s.is_char_boundary(at) {
                    at -= 1;
                }
                at
            };
            let (t1, t2) = text.split_at(at(&text));
            let (i1, i2) = input.split_at(at(&input));
            let mut reply = StreamedReply::default();
            let events = [
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t1}}),
                json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}}),
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": i1}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t2}}),
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": i2}}),
            ];
            for event in events {
                let done = reply.event(&event.to_string(), &NoObserver).unwrap();
                proptest::prop_assert!(!done);
            }
            let stop = json!({"type": "message_stop"}).to_string();
            let done = reply.event(&stop, &NoObserver).unwrap();
            proptest::prop_assert!(done);
            let texts: Vec<String> = reply
                .blocks
                .iter()
                .filter_map(|(_, b)| match b {
                    Block::Text(t) => Some(t.clone()),
                    Block::ToolUse { .. } => None,
                })
                .collect();
            proptest::prop_assert_eq!(&texts, &vec![text.clone()]);
            let Reply::ToolCalls(calls) = reply.finish().unwrap() else {
                panic!("not calls")
            };
            let expected = if input.trim().is_empty() { "{}".to_owned() } else { input.clone() };
            proptest::prop_assert_eq!(&calls[0].arguments, &expected);
        }
    }
}
