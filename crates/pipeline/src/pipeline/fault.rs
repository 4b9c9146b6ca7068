//! A hook listener's panic, as the failure that ends the call (fail closed),
//! and a panic in a host part the pipeline calls (its stage recorder), as
//! the `INTERNAL` outcome of the call it hit.

use std::any::Any;

use tack_core::hook::Provenance;
use tack_core::host::HookError;
use tack_core::host::NewToolError;
use tack_core::host::panic_message;
use tack_core::tool::{ErrorCode, ToolError};

/// The failure and provenance for `error`; `consequence` says what happened
/// to the call ("the call was not run", "the tool's result was withheld").
pub(crate) fn listener_failure(
    error: &HookError,
    consequence: &str,
) -> (ToolError, Option<Provenance>) {
    let provenance = error
        .listener()
        .map(|name| Provenance::listener(error.hook(), name.to_owned()));
    let who = error.listener().map_or_else(
        || format!("the default of `{}`", error.hook()),
        |name| format!("the `{}` listener `{name}`", error.hook()),
    );
    (
        ToolError::from_code(
            ErrorCode::Internal,
            format!(
                "{who} failed ({}); {consequence}. This is a fault in the host, not in the call",
                error.message()
            ),
        ),
        provenance,
    )
}

/// A panic in a part the host gave the pipeline (its stage recorder), as
/// the panic payload that carries it, named, to whoever contains it (the
/// scheduler, [`Pipeline::execute_admitted`](super::Pipeline::execute_admitted)).
pub(crate) struct HostFault {
    /// The part, e.g. "the stage recorder (at stage `parse`)".
    pub(crate) part: String,
    /// Its panic message.
    pub(crate) message: String,
}

impl HostFault {
    /// Unwinds with a `HostFault` for `part`, whose panic was `payload`.
    pub(crate) fn raise(part: String, payload: &(dyn Any + Send)) -> ! {
        std::panic::resume_unwind(Box::new(HostFault {
            part,
            message: panic_message(payload),
        }))
    }
}

/// What failed, from a caught panic's `payload`: the host part a
/// [`HostFault`] names, or else `fallback` (the part that was running).
pub(crate) fn fault_description(payload: &(dyn Any + Send), fallback: &str) -> String {
    match payload.downcast_ref::<HostFault>() {
        Some(fault) => format!("{} panicked: {}", fault.part, fault.message),
        None => format!("{fallback} panicked: {}", panic_message(payload)),
    }
}

/// The `INTERNAL` failure of a call whose preparation (resolve, parse,
/// validate) a host fault ended: described by [`fault_description`].
pub(crate) fn preparation_failure(what: &str) -> ToolError {
    ToolError::from_code(
        ErrorCode::Internal,
        format!(
            "the host failed while preparing this call ({what}); the call was not run. This is a \
             fault in the host, not in the call"
        ),
    )
}
