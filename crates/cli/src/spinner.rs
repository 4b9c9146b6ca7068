//! Progress on stderr, drawn by indicatif on terminals only: a spinner
//! while the model thinks, a status line while tools run (with their
//! elapsed time), and a note while something slow starts (MCP servers).

use std::future::Future;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use indicatif::{ProgressBar, ProgressStyle};
use tack_agent::{
    ChatModel, Event, Message, ModelError, ModelObserver, Record, Reply, Retry, Usage,
};
use tack_core::host::ToolSchema;

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

/// Whether progress is drawn: stderr is a terminal (never on a pipe or a
/// file, where it would be noise in a log).
pub fn drawn() -> bool {
    std::io::stderr().is_terminal()
}

fn spinner(message: String) -> ProgressBar {
    let bar = ProgressBar::new_spinner().with_message(message);
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// Awaits `work`; when it takes longer than a moment, says so on stderr: a
/// spinner with the elapsed time on a terminal, else one line.
pub async fn waiting<T>(what: &str, work: impl Future<Output = T>) -> T {
    let work = std::pin::pin!(work);
    let mut work = work;
    let quiet = if drawn() {
        Duration::from_millis(300)
    } else {
        Duration::from_secs(2)
    };
    tokio::select! {
        done = &mut work => return done,
        () = tokio::time::sleep(quiet) => {}
    }
    if drawn() {
        let bar = spinner(what.to_owned());
        let done = work.await;
        bar.finish_and_clear();
        done
    } else {
        eprintln!("tack: {what}…");
        work.await
    }
}

/// The status line of the tool calls running now (terminals only): their
/// names and how long the oldest has run. Cleared while an approval is
/// asked and while a line is printed.
#[derive(Default)]
pub struct ToolStatus {
    state: Mutex<StatusState>,
}

#[derive(Default)]
struct StatusState {
    /// Running calls: id and tool name, in start order.
    running: Vec<(String, String)>,
    /// An approval is being asked: draw nothing.
    asking: bool,
    bar: Option<ProgressBar>,
}

impl ToolStatus {
    /// Follows the session's records.
    pub fn record(&self, record: &Record) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match &record.event {
            Event::ToolCall { call_id, tool, .. } => {
                state.running.push((call_id.clone(), tool.clone()));
            }
            Event::ToolResult { outcome, .. } => {
                let id = outcome.call_id.to_string();
                state.running.retain(|(c, _)| *c != id);
            }
            Event::ApprovalRequest { .. } => state.asking = true,
            Event::ApprovalOutcome { .. } => state.asking = false,
            Event::TurnEnd { .. } => state.running.clear(),
            _ => return,
        }
        if state.asking || state.running.is_empty() {
            if let Some(bar) = state.bar.take() {
                bar.finish_and_clear();
            }
            return;
        }
        let mut names: Vec<&str> = state.running.iter().map(|(_, n)| n.as_str()).collect();
        names.dedup();
        let message = format!("running {}", tack_agent::escape_line(&names.join(", ")));
        match &state.bar {
            Some(bar) => bar.set_message(message),
            None => state.bar = Some(spinner(message)),
        }
    }

    /// Runs `print` with the status line cleared.
    pub fn suspend(&self, print: impl FnOnce()) {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match &state.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tack_agent::TurnEndReason;

    fn record(event: Event) -> Record {
        Record {
            seq: 1,
            ts: 0,
            event,
            link: None,
        }
    }

    fn call(id: &str, tool: &str) -> Record {
        record(Event::ToolCall {
            call_id: id.to_owned(),
            tool: tool.to_owned(),
            arguments: "{}".to_owned(),
            index: 0,
        })
    }

    fn shown(status: &ToolStatus) -> Option<String> {
        let state = status.state.lock().unwrap();
        state.bar.as_ref().map(ProgressBar::message)
    }

    #[test]
    fn the_status_names_the_running_tools_until_the_turn_ends() {
        let status = ToolStatus::default();
        assert_eq!(shown(&status), None);
        status.record(&call("c1", "bash"));
        status.record(&call("c2", "read_file"));
        assert_eq!(shown(&status).as_deref(), Some("running bash, read_file"));
        status.record(&record(Event::User { text: "x".into() }));
        assert_eq!(shown(&status).as_deref(), Some("running bash, read_file"));
        status.record(&record(Event::TurnEnd {
            reason: TurnEndReason::Cancelled,
            steps: 1,
        }));
        assert_eq!(shown(&status), None);
    }
}
