//! What hooks report to the user: errors that did not block, and the
//! blocking results, each naming the event and the command.

use std::fmt;
use std::sync::Arc;

use crate::config::HookEvent;

/// How serious a report is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReportLevel {
    /// A hook failed without blocking (or its output was ignored).
    Warning,
    /// A hook blocked or failed closed.
    Blocked,
    /// A hook's `systemMessage` for the user.
    Message,
}

/// One report about one hook command.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HookReport {
    /// The event.
    pub event: HookEvent,
    /// The command line.
    pub command: String,
    /// How serious.
    pub level: ReportLevel,
    /// What happened.
    pub message: String,
}

impl fmt::Display for HookReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} hook `{}`: {}",
            self.event,
            shorten(&self.command),
            self.message
        )
    }
}

fn shorten(command: &str) -> String {
    const MAX: usize = 80;
    let line = command.lines().next().unwrap_or_default();
    if line.chars().count() > MAX || command.contains('\n') {
        let cut: String = line.chars().take(MAX).collect();
        format!("{cut}…")
    } else {
        line.to_owned()
    }
}

/// Receives reports (the `tack` CLI prints them to stderr). Every report is
/// also logged with `tracing`.
pub type Reporter = Arc<dyn Fn(&HookReport) + Send + Sync>;
