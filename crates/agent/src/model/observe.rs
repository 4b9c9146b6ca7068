//! What a model reports while it answers: text as it arrives, token usage,
//! retries.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Tokens a model call used, as the provider reported them.
///
/// ```
/// use tack_agent::Usage;
/// let mut total = Usage::default();
/// total += Usage { input_tokens: 10, output_tokens: 2 };
/// total += Usage { input_tokens: 12, output_tokens: 5 };
/// assert_eq!(total, Usage { input_tokens: 22, output_tokens: 7 });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens (the history sent).
    pub input_tokens: u64,
    /// Completion tokens (the reply).
    pub output_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
    }
}

/// A retry the model client is about to make.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retry {
    /// The attempt that failed (1 for the first request).
    pub attempt: usize,
    /// How long the client waits before the next attempt.
    pub delay: Duration,
    /// Why it failed (an HTTP status, a reset connection, a timeout).
    pub reason: String,
}

/// Receives what a model reports while it answers. Every method has a
/// default that ignores the report.
pub trait ModelObserver: Send + Sync {
    /// A piece of the answer's text, as it arrives (streaming clients only).
    fn text_delta(&self, text: &str) {
        let _ = text;
    }

    /// The tokens this call used (reported once per call, when known).
    fn usage(&self, usage: Usage) {
        let _ = usage;
    }

    /// A failed attempt is about to be retried.
    fn retry(&self, retry: &Retry) {
        let _ = retry;
    }
}

/// An observer that ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoObserver;

impl ModelObserver for NoObserver {}
