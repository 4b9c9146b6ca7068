//! The record a call keeps of arguments a listener rewrote.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::hook::Provenance;

/// A record of rewritten arguments: what the model sent, what ran instead, and
/// which `tools/pre-execute` listener rewrote it. Carried by the
/// [`ToolExecution`](crate::tool::ToolExecution) the later stages see and by
/// the call's [`Outcome`](crate::tool::Outcome) (so a session log keeps it).
///
/// When the rewrite was invalid, the outcome still carries the record (the
/// `rewritten` value is the one refused) and the call failed without running.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use tack_core::hook::Provenance;
/// use tack_core::policy::ArgumentRewrite;
/// let r = ArgumentRewrite::new(
///     Arc::new(json!({"command": "ls"})),
///     Arc::new(json!({"command": "ls -la"})),
///     Some(Provenance::listener("tools/pre-execute", "hooks")),
/// );
/// assert_eq!(r.rewritten["command"], "ls -la");
/// assert!(serde_json::to_string(&r).unwrap().contains("\"by\""));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ArgumentRewrite {
    /// The arguments as validated before the rewrite.
    pub original: Arc<Value>,
    /// The arguments the listener put in their place.
    pub rewritten: Arc<Value>,
    /// The listener that rewrote them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<Provenance>,
}

impl ArgumentRewrite {
    /// A record of `original` rewritten to `rewritten` by `by`.
    pub fn new(original: Arc<Value>, rewritten: Arc<Value>, by: Option<Provenance>) -> Self {
        Self {
            original,
            rewritten,
            by,
        }
    }
}
