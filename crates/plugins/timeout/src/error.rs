//! Configuration errors.

use std::time::Duration;

/// A [`Timeout`](crate::Timeout) that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeoutConfigError {
    /// A budget, ceiling or default of zero: nothing could ever run.
    #[error("the timeout {what} must be greater than zero")]
    Zero {
        /// Which setting (`default budget`, `ceiling`).
        what: &'static str,
    },
    /// A default budget above the ceiling (it would always be clamped).
    #[error(
        "the default budget ({} ms) is above the ceiling ({} ms)",
        default.as_millis(),
        ceiling.as_millis()
    )]
    DefaultAboveCeiling {
        /// The default budget.
        default: Duration,
        /// The ceiling.
        ceiling: Duration,
    },
}
