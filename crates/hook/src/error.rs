//! The failure of a dispatch.

use std::any::Any;
use std::sync::Arc;

/// Why a waterfall dispatch produced no output.
///
/// A dispatch never turns a failure into the hook's default: the caller gets this
/// error and decides (the pipeline fails the call closed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HookError {
    /// A listener panicked (while being called, while its future was polled, or
    /// inside something it awaited that was not another listener).
    #[error("listener `{listener}` on hook `{hook}` panicked: {message}")]
    ListenerPanicked {
        /// The hook point.
        hook: &'static str,
        /// The listener's registered name.
        listener: Arc<str>,
        /// The panic message, or a placeholder for a payload that is not text.
        message: String,
    },
    /// The hook's default (for `tools/execute`: the tool body) panicked.
    #[error("the default of hook `{hook}` panicked: {message}")]
    DefaultPanicked {
        /// The hook point.
        hook: &'static str,
        /// The panic message, or a placeholder for a payload that is not text.
        message: String,
    },
}

impl HookError {
    /// The hook point the dispatch ran on.
    pub fn hook(&self) -> &'static str {
        match self {
            HookError::ListenerPanicked { hook, .. } | HookError::DefaultPanicked { hook, .. } => {
                hook
            }
        }
    }

    /// The name of the listener that failed, if a listener (not the default) did.
    pub fn listener(&self) -> Option<&str> {
        match self {
            HookError::ListenerPanicked { listener, .. } => Some(listener),
            HookError::DefaultPanicked { .. } => None,
        }
    }

    /// The panic message.
    pub fn message(&self) -> &str {
        match self {
            HookError::ListenerPanicked { message, .. }
            | HookError::DefaultPanicked { message, .. } => message,
        }
    }
}

/// The text of a panic payload: `&str` and `String` payloads as they are, any
/// other payload as a fixed placeholder.
///
/// ```
/// let payload = std::panic::catch_unwind(|| panic!("boom {}", 1)).unwrap_err();
/// assert_eq!(tack_hook::panic_message(&*payload), "boom 1");
/// ```
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&'static str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "<panic payload that is not text>".to_owned()
    }
}
