//! The record a call keeps of arguments a listener rewrote.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::hook::Provenance;

/// A record of rewritten arguments: what the model sent, what ran instead, and
/// which `tools/pre-execute` listener rewrote it. Carried by the
/// [`ToolExecution`](crate::tool::ToolExecution) the later stages see and by
/// the call's [`Outcome`](crate::tool::Outcome) (so a session log keeps it,
/// as `"rewrite": {"original": …, "rewritten": …, "by": …}`); both read it
/// through `original_arguments`, `rewritten_arguments` and `rewritten_by`.
///
/// When the rewrite was invalid, the outcome still carries the record (the
/// `rewritten` value is the one refused) and the call failed without running.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ArgumentRewrite {
    /// The arguments as validated before the rewrite.
    pub(crate) original: Arc<Value>,
    /// The arguments the listener put in their place.
    pub(crate) rewritten: Arc<Value>,
    /// The listener that rewrote them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) by: Option<Provenance>,
}
