//! The one ordered verdict: allow < ask < deny.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a policy decides about a call: allow, ask or deny, ordered by
/// strictness (`Allow < Ask < Deny`), so the combined decision of several
/// policies is their `max`.
///
/// It is the one ordering of verdicts in tack: a
/// [`PreDecision`](super::PreDecision)'s [`action`](super::PreDecision::action)
/// and the permission plugin's rules and modes speak it. It is closed on
/// purpose (no `#[non_exhaustive]`): every match over it is complete, so no
/// verdict can fall into a catch-all arm that lets a call through.
///
/// ```
/// use tack_core::policy::Action;
/// assert!(Action::Deny > Action::Ask && Action::Ask > Action::Allow);
/// assert_eq!([Action::Allow, Action::Deny, Action::Ask].into_iter().max(), Some(Action::Deny));
/// assert_eq!(serde_json::to_string(&Action::Ask).unwrap(), "\"ask\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Run the call.
    Allow,
    /// Ask the approval service; run only if it answers allowed-once or
    /// allowed-always.
    Ask,
    /// Refuse the call.
    Deny,
}

impl Action {
    /// `allow`, `ask` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Ask => "ask",
            Action::Deny => "deny",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parsing `allow`, `ask` or `deny`, on the host's side (a host's
/// configuration); serde reads an action without this.
#[cfg(feature = "host")]
impl std::str::FromStr for Action {
    type Err = crate::model::UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "allow" => Ok(Action::Allow),
            "ask" => Ok(Action::Ask),
            "deny" => Ok(Action::Deny),
            other => Err(crate::model::UnknownName::new(
                "action",
                other,
                &["allow", "ask", "deny"],
            )),
        }
    }
}
