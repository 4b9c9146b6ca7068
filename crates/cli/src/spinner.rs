//! A spinner on stderr while the model thinks (terminals only), drawn by
//! indicatif.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use indicatif::{ProgressBar, ProgressStyle};
use tack_agent::{ChatModel, Message, ModelError, ModelObserver, Reply, Retry, Usage};
use tack_core::tool::ToolSchema;

/// Wraps a model: while it thinks, a spinner turns on stderr, until the
/// answer starts streaming in.
pub struct Spinning {
    inner: Arc<dyn ChatModel>,
}

impl Spinning {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn ChatModel>) -> Self {
        Self { inner }
    }
}

#[async_trait]
impl ChatModel for Spinning {
    fn name(&self) -> String {
        self.inner.name()
    }

    async fn complete(
        &self,
        messages: &[Message],
        tools: &[ToolSchema],
    ) -> Result<Reply, ModelError> {
        self.complete_observed(messages, tools, &tack_agent::NoObserver)
            .await
    }

    async fn complete_observed(
        &self,
        messages: &[Message],
        tools: &[ToolSchema],
        observer: &dyn ModelObserver,
    ) -> Result<Reply, ModelError> {
        let bar = ProgressBar::new_spinner().with_message(format!(
            "{} is thinking…",
            tack_agent::escape_line(&self.inner.name())
        ));
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(100));
        let spinner = Spinner {
            bar,
            inner: observer,
        };
        let reply = self
            .inner
            .complete_observed(messages, tools, &spinner)
            .await;
        spinner.bar.finish_and_clear();
        reply
    }
}

/// Clears the spinner before the first piece of text or retry notice is
/// printed (it is drawn again after a retry notice).
struct Spinner<'a> {
    bar: ProgressBar,
    inner: &'a dyn ModelObserver,
}

impl ModelObserver for Spinner<'_> {
    fn text_delta(&self, text: &str) {
        if !self.bar.is_finished() {
            self.bar.finish_and_clear();
        }
        self.inner.text_delta(text);
    }

    fn usage(&self, usage: Usage) {
        self.inner.usage(usage);
    }

    fn retry(&self, retry: &Retry) {
        self.bar.suspend(|| self.inner.retry(retry));
    }
}
