//! Policy types: pre-execute decisions, guards, and the approval service.
//!
//! tack ships no policy of its own; these are the types policy plugins (such as
//! the permission gate) speak.

mod action;
mod approval;
mod decision;
mod guard;
mod summary;

pub use action::{Action, UnknownAction};
pub use approval::{ApprovalOutcome, ApprovalRequest, ApprovalService};
pub use decision::{ArgumentRewrite, PreDecision, PreVerdict};
pub use guard::{GUARD_STAGE, Guard, GuardOutcome, GuardVerdict, Guards};
pub use summary::{SUMMARY_MAX_CHARS, escape_control, summarize_arguments, summarize_call};
