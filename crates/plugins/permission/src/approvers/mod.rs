//! Approvers: implementations of core's
//! [`ApprovalService`](tack_core::policy::ApprovalService).
//!
//! * [`TerminalApprover`]: prompts on a terminal (yes once / no / always for
//!   this session); `unavailable` without reading when stdin is not a terminal.
//! * [`ChannelApprover`]: hands each request to a UI as a [`PendingApproval`]
//!   (request + reply, keyed by call id).
//! * [`NoApprover`]: always `unavailable`.
//!
//! Every approver fails closed: an I/O error, a closed channel or a dropped
//! reply is `unavailable`, cancellation is `cancelled`, and the pipeline
//! denies every outcome but `allowed_once` and `allowed_always` (and a
//! panicking approver). Each shows or logs what it is asked about: the
//! request's one-line summary and the call's arguments.

mod channel;
mod none;
mod shown;
mod terminal;

pub use channel::{ApprovalInbox, ChannelApprover, PendingApproval};
pub use none::NoApprover;
pub use terminal::TerminalApprover;

use tack_core::policy::{ApprovalOutcome, ApprovalRequest};

pub(crate) use shown::{shown_arguments, shown_programs};

use crate::SessionRules;

/// A person's answer to an approval request.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Answer {
    /// Run this call.
    Once,
    /// Do not run it.
    Deny {
        /// What they said, if anything.
        reason: Option<String>,
    },
    /// Run it, and every later call of this tool by this agent in this session
    /// (recorded as a session allow rule; deny rules still apply).
    AlwaysForSession,
}

/// Turns an answer into the outcome, recording a session rule for "always":
/// "always" is its own outcome, `allowed_always`, so a log tells it from a
/// one-off grant.
pub(crate) fn settle(
    answer: Answer,
    request: &ApprovalRequest,
    session: &SessionRules,
) -> ApprovalOutcome {
    match answer {
        Answer::Once => ApprovalOutcome::AllowedOnce,
        Answer::AlwaysForSession => {
            session.allow_tool(&request.tool, request.agent.as_ref());
            ApprovalOutcome::AllowedAlways
        }
        Answer::Deny { reason } => ApprovalOutcome::Denied { reason },
    }
}
