//! Chat models: the trait and its implementations.

#[cfg(feature = "http-models")]
pub(crate) mod anthropic;
#[cfg(feature = "http-models")]
pub(crate) mod http;
pub(crate) mod mock;
pub(crate) mod observe;
#[cfg(feature = "http-models")]
pub(crate) mod openai;
pub(crate) mod scripted;

use async_trait::async_trait;
use tack_core::host::ToolSchema;

use crate::message::{Message, Reply};
use observe::ModelObserver;

/// A model the loop can ask for its next step.
///
/// `complete` receives the whole history (system prompt first) and the
/// schemas of the tools the model may call, and answers with text or a batch
/// of tool calls. Changing models changes nothing else in the loop.
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// A short name for logs and messages (e.g. `mock`, `openai:gpt-4o`).
    fn name(&self) -> String;

    /// The model's next step.
    ///
    /// # Errors
    ///
    /// [`ModelError`] when the model cannot answer (transport, HTTP status,
    /// malformed response, exhausted script).
    async fn complete(
        &self,
        messages: &[Message],
        tools: &[ToolSchema],
    ) -> Result<Reply, ModelError>;

    /// The model's next step, reporting to `observer` as it goes: the
    /// answer's text as it arrives, the tokens used, retries. The loop calls
    /// this; the default calls [`complete`](Self::complete) and reports
    /// nothing.
    ///
    /// # Errors
    ///
    /// As [`complete`](Self::complete).
    async fn complete_observed(
        &self,
        messages: &[Message],
        tools: &[ToolSchema],
        observer: &dyn ModelObserver,
    ) -> Result<Reply, ModelError> {
        let _ = observer;
        self.complete(messages, tools).await
    }
}

/// Why a model gave no answer. These are host faults (the loop stops), unlike
/// tool failures, which are content the model reads.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A required setting is missing or invalid.
    #[error("model configuration: {0}")]
    Config(String),
    /// The endpoint could not be reached or the connection failed.
    #[error("could not reach the model endpoint {url}: {reason}")]
    Transport {
        /// The URL requested.
        url: String,
        /// What failed.
        reason: String,
    },
    /// The endpoint did not answer within the configured request timeout.
    #[error(
        "the model endpoint {url} did not answer within {timeout_ms} ms; check the endpoint or raise the timeout"
    )]
    Timeout {
        /// The URL requested.
        url: String,
        /// The configured timeout.
        timeout_ms: u128,
    },
    /// The endpoint answered with an HTTP error status.
    #[error("the model endpoint {url} answered HTTP {status}: {body}{hint}")]
    Http {
        /// The URL requested.
        url: String,
        /// The status code.
        status: u16,
        /// The start of the response body (the provider's error message).
        body: String,
        /// What to check, for well-known statuses.
        hint: String,
    },
    /// The response is not a chat-completions answer.
    #[error("the model endpoint returned a malformed response: {0}")]
    Malformed(String),
    /// A scripted model has no turn left.
    #[error("the script has no turn left (it had {turns}); add a final {{\"text\": …}} turn")]
    ScriptExhausted {
        /// How many turns the script had.
        turns: usize,
    },
}

impl ModelError {
    /// The kind of error, by the names Claude Code gives a turn's API
    /// errors (a `StopFailure` hook's `error`): `rate_limit` (HTTP 429),
    /// `overloaded` (529), `authentication_failed` (401, 403),
    /// `billing_error` (402), `model_not_found` (404), `invalid_request`
    /// (other 4xx, and a configuration tack refuses), `server_error` (5xx,
    /// no answer in time, a malformed answer) or `unknown` (the endpoint
    /// could not be reached, a script with no turn left).
    ///
    /// ```
    /// use tack_agent::ModelError;
    /// let e = ModelError::Http { url: "u".into(), status: 429, body: "slow down".into(), hint: String::new() };
    /// assert_eq!(e.kind(), "rate_limit");
    /// assert_eq!(ModelError::ScriptExhausted { turns: 1 }.kind(), "unknown");
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            ModelError::Http { status, .. } => match status {
                429 => "rate_limit",
                529 => "overloaded",
                401 | 403 => "authentication_failed",
                402 => "billing_error",
                404 => "model_not_found",
                400..=499 => "invalid_request",
                500..=599 => "server_error",
                _ => "unknown",
            },
            ModelError::Config(_) => "invalid_request",
            ModelError::Timeout { .. } | ModelError::Malformed(_) => "server_error",
            ModelError::Transport { .. } | ModelError::ScriptExhausted { .. } => "unknown",
        }
    }

    /// The details of the error: for an HTTP error its status and the
    /// start of the provider's message (`429 rate limit exceeded`), else
    /// the error's text.
    pub fn details(&self) -> String {
        match self {
            ModelError::Http { status, body, .. } => format!("{status} {body}"),
            other => other.to_string(),
        }
    }
}
