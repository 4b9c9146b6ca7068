//! An OpenAI-compatible chat-completions client with tools.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tack_core::host::ToolSchema;
use tack_core::tool::{ContentBlock, DeferredContext, ToolCall};

use super::http::{self, DEFAULT_TIMEOUT, RetryPolicy, snippet};
use super::observe::{ModelObserver, NoObserver, Usage};
use super::{ChatModel, ModelError};
use crate::message::{Message, Reply};

/// Where and how to reach an OpenAI-compatible endpoint.
///
/// ```
/// use std::time::Duration;
/// use tack_agent::OpenAiConfig;
/// let config = OpenAiConfig::new("http://127.0.0.1:8080/v1", "sk-test", "local-model")
///     .with_timeout(Duration::from_secs(5));
/// assert_eq!(config.endpoint(), "http://127.0.0.1:8080/v1/chat/completions");
/// ```
#[derive(Clone)]
pub struct OpenAiConfig {
    base_url: String,
    api_key: String,
    model: String,
    timeout: Duration,
    retry: RetryPolicy,
    stream: bool,
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key stays out of logs.
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

impl OpenAiConfig {
    /// A configuration (request timeout 120 s, the default retries,
    /// streaming).
    pub fn new(
        base_url: impl Into<String>,
        api_key: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            api_key: api_key.into(),
            model: model.into(),
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::default(),
            stream: true,
        }
    }

    /// From `OPENAI_BASE_URL` (default `https://api.openai.com/v1`),
    /// `OPENAI_API_KEY` (required) and `OPENAI_MODEL` (required).
    ///
    /// # Errors
    ///
    /// [`ModelError::Config`] naming the missing variable.
    pub fn from_env() -> Result<Self, ModelError> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let base = var("OPENAI_BASE_URL").unwrap_or_else(|| "https://api.openai.com/v1".to_owned());
        let key = var("OPENAI_API_KEY").ok_or_else(|| {
            ModelError::Config("OPENAI_API_KEY is not set: export your provider's API key (or use the default mock model)".to_owned())
        })?;
        let model = var("OPENAI_MODEL").ok_or_else(|| {
            ModelError::Config(
                "OPENAI_MODEL is not set: export the model name, e.g. OPENAI_MODEL=gpt-4o-mini"
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

    /// Whether to ask for a streamed answer (`stream: true`, the default)
    /// or a whole one.
    pub fn with_stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// The chat-completions URL.
    pub fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }
}

/// A chat-completions client with tools and parallel tool calls.
#[derive(Debug)]
pub struct OpenAiCompatible {
    config: OpenAiConfig,
    client: reqwest::Client,
}

impl OpenAiCompatible {
    /// A client for `config`.
    ///
    /// # Errors
    ///
    /// [`ModelError::Config`] if the HTTP client cannot be built.
    pub fn new(config: OpenAiConfig) -> Result<Self, ModelError> {
        let client = http::client(config.timeout)?;
        Ok(Self { config, client })
    }

    /// The request body for `messages` and `tools`.
    fn body(&self, messages: &[Message], tools: &[ToolSchema]) -> Value {
        let mut body = json!({
            "model": self.config.model,
            "messages": messages.iter().map(wire_message).collect::<Vec<_>>(),
        });
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools.iter().map(ToolSchema::to_openai).collect());
            body["parallel_tool_calls"] = Value::Bool(true);
        }
        if self.config.stream {
            body["stream"] = Value::Bool(true);
            body["stream_options"] = json!({"include_usage": true});
        }
        body
    }
}

fn wire_message(message: &Message) -> Value {
    match message {
        Message::System(text) => json!({"role": "system", "content": text}),
        Message::User(text) => json!({"role": "user", "content": text}),
        Message::Assistant(text) => json!({"role": "assistant", "content": text}),
        Message::ToolCalls(calls) => json!({
            "role": "assistant",
            "content": Value::Null,
            "tool_calls": calls.iter().map(|c| json!({
                "id": c.call_id.as_str(),
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            })).collect::<Vec<_>>(),
        }),
        Message::ToolResult {
            call_id, content, ..
        } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
        Message::Context(context) => wire_context(context),
    }
}

/// A deferred context: a system message when it is text; a user message of
/// content parts (text and `image_url` data URLs) when it carries images,
/// which the chat-completions API accepts only from the user role.
fn wire_context(context: &DeferredContext) -> Value {
    if !context.has_images() {
        return json!({"role": "system", "content": context.text()});
    }
    let parts: Vec<Value> = context
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => json!({"type": "text", "text": text}),
            ContentBlock::Image { data, mime_type } => json!({
                "type": "image_url",
                "image_url": {"url": format!("data:{mime_type};base64,{data}")},
            }),
            ContentBlock::Json { value } => json!({"type": "text", "text": value.to_string()}),
            ContentBlock::Resource { uri, text, .. } => {
                json!({"type": "text", "text": text.as_deref().unwrap_or(uri)})
            }
            other => json!({
                "type": "text",
                "text": serde_json::to_string(other).unwrap_or_default(),
            }),
        })
        .collect();
    json!({"role": "user", "content": parts})
}

/// The usage of a response or final chunk (`prompt_tokens`,
/// `completion_tokens`).
fn usage_of(value: &Value) -> Option<Usage> {
    let usage = value.get("usage")?;
    let count = |key: &str| usage.get(key).and_then(Value::as_u64);
    Some(Usage {
        input_tokens: count("prompt_tokens")?,
        output_tokens: count("completion_tokens").unwrap_or(0),
    })
}

/// Reads a chat-completions response body.
fn parse_reply(body: &str, observer: &dyn ModelObserver) -> Result<Reply, ModelError> {
    let value: Value = serde_json::from_str(body)
        .map_err(|e| ModelError::Malformed(format!("not JSON ({e}): {}", snippet(body))))?;
    if let Some(usage) = usage_of(&value) {
        observer.usage(usage);
    }
    let message = value.pointer("/choices/0/message").ok_or_else(|| {
        ModelError::Malformed(format!("no choices[0].message in {}", snippet(body)))
    })?;
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        if !calls.is_empty() {
            let mut out = Vec::with_capacity(calls.len());
            for (i, call) in calls.iter().enumerate() {
                let field = |pointer: &str| {
                    call.pointer(pointer)
                        .and_then(Value::as_str)
                        .ok_or_else(|| {
                            ModelError::Malformed(format!(
                                "tool_calls[{i}] has no string {pointer}"
                            ))
                        })
                };
                let id = field("/id")?;
                let name = field("/function/name")?;
                // Some providers send the arguments as an object: keep them as text.
                let arguments = match call.pointer("/function/arguments") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => "{}".to_owned(),
                };
                out.push(ToolCall::new(id, name, arguments));
            }
            return Ok(Reply::ToolCalls(out));
        }
    }
    match message.get("content") {
        Some(Value::String(text)) => Ok(Reply::Text(text.clone())),
        _ => Err(ModelError::Malformed(
            "choices[0].message has neither text content nor tool_calls".to_owned(),
        )),
    }
}

fn hint(status: u16) -> &'static str {
    match status {
        401 | 403 => " (check OPENAI_API_KEY)",
        404 => " (check OPENAI_BASE_URL and OPENAI_MODEL)",
        429 => " (rate limited: wait and retry)",
        500..=599 => " (the provider failed: retry later)",
        _ => "",
    }
}

/// A tool call being assembled from stream chunks.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Assembles a streamed answer from its chunks.
#[derive(Default)]
struct StreamedReply {
    text: String,
    calls: Vec<PartialCall>,
    done: bool,
}

impl StreamedReply {
    /// Takes one `data:` payload; `Ok(true)` at `[DONE]`.
    fn chunk(&mut self, data: &str, observer: &dyn ModelObserver) -> Result<bool, ModelError> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            ModelError::Malformed(format!(
                "a stream chunk is not JSON ({e}): {}",
                snippet(data)
            ))
        })?;
        if let Some(error) = value.get("error") {
            return Err(ModelError::Malformed(format!(
                "the stream reported an error: {}",
                snippet(&error.to_string())
            )));
        }
        if let Some(usage) = usage_of(&value) {
            observer.usage(usage);
        }
        let Some(delta) = value.pointer("/choices/0/delta") else {
            return Ok(false);
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            if !text.is_empty() {
                observer.text_delta(text);
                self.text.push_str(text);
            }
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for call in calls {
                let index = call
                    .get("index")
                    .and_then(Value::as_u64)
                    .and_then(|i| usize::try_from(i).ok())
                    .unwrap_or(self.calls.len().saturating_sub(1));
                if index > 1024 {
                    return Err(ModelError::Malformed(format!(
                        "a streamed tool call has index {index}"
                    )));
                }
                if self.calls.len() <= index {
                    self.calls.resize_with(index + 1, PartialCall::default);
                }
                let partial = &mut self.calls[index];
                if let Some(id) = call.get("id").and_then(Value::as_str) {
                    partial.id.push_str(id);
                }
                if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                    partial.name.push_str(name);
                }
                if let Some(args) = call.pointer("/function/arguments").and_then(Value::as_str) {
                    partial.arguments.push_str(args);
                }
            }
        }
        Ok(false)
    }

    fn finish(self) -> Result<Reply, ModelError> {
        if !self.calls.is_empty() {
            let mut out = Vec::with_capacity(self.calls.len());
            for (i, call) in self.calls.into_iter().enumerate() {
                if call.id.is_empty() || call.name.is_empty() {
                    return Err(ModelError::Malformed(format!(
                        "streamed tool call {i} has no id or no name"
                    )));
                }
                let arguments = if call.arguments.is_empty() {
                    "{}".to_owned()
                } else {
                    call.arguments
                };
                out.push(ToolCall::new(call.id, call.name, arguments));
            }
            return Ok(Reply::ToolCalls(out));
        }
        if self.text.is_empty() {
            // Neither text nor a call: the loop's empty reply.
            return Ok(Reply::ToolCalls(Vec::new()));
        }
        Ok(Reply::Text(self.text))
    }
}

#[async_trait]
impl ChatModel for OpenAiCompatible {
    fn name(&self) -> String {
        format!("openai:{}", self.config.model)
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
                    .bearer_auth(&self.config.api_key)
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
            reply.chunk(event, observer)
        })
        .await?;
        debug_assert!(reply.done);
        reply.finish()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn tool_call_messages_round_trip_to_the_wire() {
        let m = Message::ToolCalls(vec![ToolCall::new("c1", "read_file", "{\"path\":\"a\"}")]);
        let wire = wire_message(&m);
        assert_eq!(
            wire["tool_calls"][0]["function"]["arguments"],
            "{\"path\":\"a\"}"
        );
    }

    #[test]
    fn malformed_bodies_are_named() {
        assert!(
            parse_reply("<html>", &NoObserver)
                .unwrap_err()
                .to_string()
                .contains("not JSON")
        );
        assert!(
            parse_reply("{}", &NoObserver)
                .unwrap_err()
                .to_string()
                .contains("choices")
        );
    }

    /// Splits `text` at the char boundaries nearest `cuts`.
    fn split(text: &str, cuts: &[usize]) -> Vec<String> {
        let mut points: Vec<usize> = cuts
            .iter()
            .map(|c| {
                let mut at = (*c).min(text.len());
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                at
            })
            .collect();
        points.push(0);
        points.push(text.len());
        points.sort_unstable();
        points.dedup();
        points
            .windows(2)
            .map(|w| text[w[0]..w[1]].to_owned())
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn streamed_text_and_arguments_reassemble_from_any_split(
            text in "\\PC{1,40}",
            args in "\\PC{1,40}",
            cuts in proptest::collection::vec(0usize..48, 0..6),
        ) {
            let mut reply = StreamedReply::default();
            let chunk = |delta: Value| json!({"choices": [{"index": 0, "delta": delta}]}).to_string();
            for piece in split(&text, &cuts) {
                reply.chunk(&chunk(json!({"content": piece})), &NoObserver).unwrap();
            }
            let Reply::Text(got) = std::mem::take(&mut reply).finish().unwrap() else {
                panic!("not text")
            };
            proptest::prop_assert_eq!(got, text);
            let mut first = true;
            for piece in split(&args, &cuts) {
                let call = if first {
                    json!({"index": 0, "id": "c1", "function": {"name": "f", "arguments": piece}})
                } else {
                    json!({"index": 0, "function": {"arguments": piece}})
                };
                first = false;
                reply.chunk(&chunk(json!({"tool_calls": [call]})), &NoObserver).unwrap();
            }
            let done = reply.chunk("[DONE]", &NoObserver).unwrap();
            proptest::prop_assert!(done);
            let Reply::ToolCalls(calls) = reply.finish().unwrap() else {
                panic!("not calls")
            };
            proptest::prop_assert_eq!(&calls[0].arguments, &args);
        }
    }
}
