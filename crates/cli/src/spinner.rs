//! A spinner on stderr while the model thinks (terminals only).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tack_agent::{ChatModel, Message, ModelError, Reply};
use tack_core::tool::ToolSchema;

const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Wraps a model: while `complete` runs, a spinner turns on stderr.
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
        let name = self.inner.name();
        let spinner = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(Duration::from_millis(100));
            for frame in FRAMES.iter().cycle() {
                ticks.tick().await;
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r{frame} {name} is thinking…");
                let _ = err.flush();
            }
        });
        let reply = self.inner.complete(messages, tools).await;
        spinner.abort();
        let _ = spinner.await;
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K");
        let _ = err.flush();
        reply
    }
}
