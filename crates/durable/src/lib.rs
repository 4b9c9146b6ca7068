//! # tack-restate
//!
//! tack's agent sessions as durable [Restate](https://restate.dev) virtual
//! objects. A session (keyed by its id) runs one turn at a time on
//! whichever endpoint Restate picks; every model request and every tool
//! call of a turn is a journaled step (`ctx.run`), so after a crash of the
//! endpoint Restate replays the turn: recorded steps return their recorded
//! result (a call's frozen outcome) without running again.
//!
//! * A call whose outcome was not recorded when its process stopped (it
//!   was *in flight*) runs again only if its tool is declared idempotent
//!   ([`ToolDefinition::is_idempotent`](tack_core::tool::ToolDefinition::is_idempotent));
//!   otherwise its outcome is `EXECUTION_FAILED` with
//!   [`INTERRUPTED_MESSAGE`]: the model reads that the call was
//!   interrupted and not retried.
//! * An approval the pipeline asks for suspends the session on a Restate
//!   awakeable; the request is in the session's state
//!   (`pending_approval`), and the answer (the `answer` handler, or the
//!   awakeable resolved through the ingress) resumes it, whatever
//!   processes stopped and started meanwhile. The call's body runs once,
//!   after the answer.
//! * [`serve`] runs an endpoint; [`IngressClient`] starts turns and
//!   answers approvals through Restate's ingress.
//!
//! A journaled batch runs its calls one at a time, in model order.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod approval;
mod host;
mod ingress;
mod serve;
mod session;
mod steps;
mod stored;

pub use approval::{ApprovalAnswer, DurableApprover, PendingApproval};
pub use host::SessionHost;
pub use ingress::{IngressClient, IngressError, register_deployment};
pub use serve::{ServeError, endpoint, serve};
pub use session::{HISTORY, SERVICE_NAME, TackSession, TurnReport, TurnRequest};
pub use steps::{INTERRUPTED_MESSAGE, PENDING_APPROVAL};
pub use stored::{ModelRecord, StoredCall, StoredMessage, StoredReply};
