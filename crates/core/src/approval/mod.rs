//! Asking someone whether a call may run: the approval service, its
//! requests and answers, and the one-line summaries a prompt shows.
//! Re-exported by `policy`.

mod request;
mod summary;

pub use request::{ApprovalOutcome, ApprovalRequest, ApprovalService};
pub(crate) use summary::summarize_arguments;
