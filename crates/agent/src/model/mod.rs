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
use tack_core::tool::ToolSchema;

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
