//! An OpenAI-compatible chat-completions client with tools.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tack_core::tool::{ContentBlock, DeferredContext, ToolCall, ToolSchema};

use super::{ChatModel, ModelError};
use crate::message::{Message, Reply};

/// The default request timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// How much of an error body goes into a message.
const BODY_SNIPPET: usize = 300;

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
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key stays out of logs.
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl OpenAiConfig {
    /// A configuration (request timeout 120 s).
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

    /// Sets the request timeout (the whole request, connection included).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
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
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| ModelError::Config(format!("cannot build the HTTP client: {e}")))?;
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

fn snippet(body: &str) -> String {
    let mut cut: String = body.chars().take(BODY_SNIPPET).collect();
    if body.chars().count() > BODY_SNIPPET {
        cut.push('…');
    }
    cut
}

/// Reads a chat-completions response body.
fn parse_reply(body: &str) -> Result<Reply, ModelError> {
    let value: Value = serde_json::from_str(body)
        .map_err(|e| ModelError::Malformed(format!("not JSON ({e}): {}", snippet(body))))?;
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
        let url = self.config.endpoint();
        let fail = |e: reqwest::Error| {
            if e.is_timeout() {
                ModelError::Timeout {
                    url: url.clone(),
                    timeout_ms: self.config.timeout.as_millis(),
                }
            } else {
                ModelError::Transport {
                    url: url.clone(),
                    reason: e.to_string(),
                }
            }
        };
        let response = self
            .client
            .post(&url)
            .bearer_auth(&self.config.api_key)
            .json(&self.body(messages, tools))
            .send()
            .await
            .map_err(fail)?;
        let status = response.status();
        let text = response.text().await.map_err(fail)?;
        if !status.is_success() {
            return Err(ModelError::Http {
                url,
                status: status.as_u16(),
                body: snippet(&text),
                hint: hint(status.as_u16()).to_owned(),
            });
        }
        parse_reply(&text)
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
            parse_reply("<html>")
                .unwrap_err()
                .to_string()
                .contains("not JSON")
        );
        assert!(
            parse_reply("{}")
                .unwrap_err()
                .to_string()
                .contains("choices")
        );
    }
}
