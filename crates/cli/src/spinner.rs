//! A spinner on stderr while the model thinks (terminals only).

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use tack_agent::{ChatModel, Message, ModelError, ModelObserver, Reply, Retry, Usage};
use tack_core::tool::ToolSchema;
use tokio::task::JoinHandle;

const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

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
        let stopped = Arc::new(AtomicBool::new(false));
        let spinner = Spinner {
            task: parking_lot::Mutex::new(Some(spin(self.inner.name(), Arc::clone(&stopped)))),
            stopped,
            inner: observer,
        };
        let reply = self
            .inner
            .complete_observed(messages, tools, &spinner)
            .await;
        spinner.stop();
        reply
    }
}

/// Stops the spinner before the first piece of text or retry notice is
/// printed.
struct Spinner<'a> {
    task: parking_lot::Mutex<Option<JoinHandle<()>>>,
    /// Checked by the task under the stderr lock: once set, no frame is
    /// written after the line is cleared.
    stopped: Arc<AtomicBool>,
    inner: &'a dyn ModelObserver,
}

impl Spinner<'_> {
    fn stop(&self) {
        if let Some(task) = self.task.lock().take() {
            self.stopped.store(true, Ordering::SeqCst);
            task.abort();
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}

impl ModelObserver for Spinner<'_> {
    fn text_delta(&self, text: &str) {
        self.stop();
        self.inner.text_delta(text);
    }

    fn usage(&self, usage: Usage) {
        self.inner.usage(usage);
    }

    fn retry(&self, retry: &Retry) {
        self.stop();
        self.inner.retry(retry);
    }
}

fn spin(name: String, stopped: Arc<AtomicBool>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(Duration::from_millis(100));
        for frame in FRAMES.iter().cycle() {
            ticks.tick().await;
            let mut err = std::io::stderr().lock();
            if stopped.load(Ordering::SeqCst) {
                return;
            }
            let _ = write!(err, "\r{frame} {name} is thinking…");
            let _ = err.flush();
        }
    })
}
