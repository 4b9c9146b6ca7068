//! A hook listener's panic, as the failure that ends the call (fail closed).

use tack_core::hook::{HookError, Provenance};
use tack_core::host::NewFailure;
use tack_core::tool::{ErrorCode, Failure};

/// The failure and provenance for `error`; `consequence` says what happened
/// to the call ("the call was not run", "the tool's result was withheld").
pub(crate) fn listener_failure(
    error: &HookError,
    consequence: &str,
) -> (Failure, Option<Provenance>) {
    let provenance = error
        .listener()
        .map(|name| Provenance::listener(error.hook(), name.to_owned()));
    let who = error.listener().map_or_else(
        || format!("the default of `{}`", error.hook()),
        |name| format!("the `{}` listener `{name}`", error.hook()),
    );
    (
        Failure::new(
            ErrorCode::Internal,
            format!(
                "{who} failed ({}); {consequence}. This is a fault in the host, not in the call",
                error.message()
            ),
        ),
        provenance,
    )
}
