//! Policy types: pre-execute decisions and the approval service. (Guards
//! are added through [`ToolHooks::guard`](crate::hooks::ToolHooks::guard).)
//!
//! tack ships no policy of its own; these are the types policy plugins (such as
//! the permission gate) speak.

mod action;
mod decision;
pub(crate) mod guard;

pub use action::Action;
pub use decision::PreDecision;

pub use crate::approval::{ApprovalOutcome, ApprovalRequest, ApprovalService};
