//! Decisions of the `tools/pre-execute` hook point.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::Action;
use crate::hook::Provenance;

/// What a `tools/pre-execute` chain decided, before provenance: an
/// [`Action`] with the reason an ask or a deny carries. Private: a decision
/// shows it as [`PreDecision::action`] and [`PreDecision::reason`].
#[derive(Clone, Debug, PartialEq, Eq)]
enum Verdict {
    Allow,
    Ask { reason: String },
    Deny { reason: String },
}

impl Verdict {
    fn action(&self) -> Action {
        match self {
            Verdict::Allow => Action::Allow,
            Verdict::Ask { .. } => Action::Ask,
            Verdict::Deny { .. } => Action::Deny,
        }
    }

    fn reason(&self) -> Option<&str> {
        match self {
            Verdict::Allow => None,
            Verdict::Ask { reason } | Verdict::Deny { reason } => Some(reason),
        }
    }
}

/// The output of the `tools/pre-execute` waterfall: allow, ask or deny, plus the
/// listener that decided (stamped by the hook point), and optionally
/// rewritten arguments.
///
/// An allow or an ask may carry rewritten arguments
/// ([`with_arguments`](Self::with_arguments)); a deny never runs anything, so
/// its rewrite is only recorded in the outcome (what the deny judged). The pipeline validates a rewrite again (size,
/// depth, exact numbers, the tool's input schema) before anything else sees
/// it: an invalid rewrite ends the call with `INTERNAL` naming the listener
/// that rewrote, and the tool never runs. Approval, guards, the body and the
/// later hook points then see the rewritten arguments, and the outcome
/// records the original, the rewrite and who made it
/// ([`Outcome::original_arguments`](crate::tool::Outcome::original_arguments),
/// [`rewritten_arguments`](crate::tool::Outcome::rewritten_arguments),
/// [`rewritten_by`](crate::tool::Outcome::rewritten_by)).
///
/// ```
/// use serde_json::json;
/// use tack_core::policy::PreDecision;
/// let d = PreDecision::allow().with_arguments(json!({"command": "ls --color=never"}));
/// assert_eq!(d.rewritten_arguments().unwrap()["command"], "ls --color=never");
/// // The stricter decision keeps the rewrite of the other one.
/// let s = d.stricter(PreDecision::ask("runs a command"));
/// assert!(s.rewritten_arguments().is_some());
/// ```
///
/// ```
/// use tack_core::policy::{Action, PreDecision};
/// let d = PreDecision::deny("`rm -rf` is not allowed in this workspace");
/// assert!(d.is_deny());
/// assert_eq!(d.action(), Action::Deny);
/// assert_eq!(d.reason(), Some("`rm -rf` is not allowed in this workspace"));
/// // The stricter of two decisions:
/// let s = PreDecision::allow().stricter(PreDecision::ask("writes files"));
/// assert_eq!(s.action(), Action::Ask);
/// assert_eq!(s.reason(), Some("writes files"));
/// ```
///
/// A decision is not ordered itself (it carries text); compare decisions by
/// their [`action`](Self::action), which is what [`stricter`](Self::stricter)
/// does. A `match` on the action is complete with three arms, and an ask or
/// a deny always has a [`reason`](Self::reason):
///
/// ```
/// use tack_core::policy::{Action, PreDecision};
/// fn describe(d: &PreDecision) -> String {
///     match d.action() {
///         Action::Allow => "allow".to_owned(),
///         Action::Ask => format!("ask: {}", d.reason().unwrap_or_default()),
///         Action::Deny => format!("deny: {}", d.reason().unwrap_or_default()),
///     }
/// }
/// assert_eq!(describe(&PreDecision::ask("writes files")), "ask: writes files");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreDecision {
    verdict: Verdict,
    provenance: Option<Provenance>,
    rewrite: Option<Rewrite>,
}

/// Rewritten arguments and, once known, who rewrote them.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Rewrite {
    arguments: Arc<Value>,
    by: Option<Provenance>,
}

impl PreDecision {
    /// Run the call.
    pub fn allow() -> Self {
        Self::of(Verdict::Allow)
    }

    /// Refuse the call; `reason` tells the model what was refused and why.
    /// An empty (or blank) `reason` is replaced by a default message naming
    /// the listener that denied.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::of(Verdict::Deny {
            reason: reason.into(),
        })
    }

    /// Ask the approval service; `reason` is shown to the approver.
    pub fn ask(reason: impl Into<String>) -> Self {
        Self::of(Verdict::Ask {
            reason: reason.into(),
        })
    }

    /// A decision of `action` with `reason` (ignored for [`Action::Allow`]):
    /// for policies that compute an [`Action`], like the permission plugin.
    pub fn from_action(action: Action, reason: impl Into<String>) -> Self {
        match action {
            Action::Allow => Self::allow(),
            Action::Ask => Self::ask(reason),
            Action::Deny => Self::deny(reason),
        }
    }

    fn of(verdict: Verdict) -> Self {
        Self {
            verdict,
            provenance: None,
            rewrite: None,
        }
    }

    /// Allow, ask or deny: what orders decisions (`Allow < Ask < Deny`).
    pub fn action(&self) -> Action {
        self.verdict.action()
    }

    /// Whether the verdict is allow.
    pub fn is_allow(&self) -> bool {
        matches!(self.verdict, Verdict::Allow)
    }

    /// Whether the verdict is deny.
    pub fn is_deny(&self) -> bool {
        matches!(self.verdict, Verdict::Deny { .. })
    }

    /// The reason of an ask (shown to the approver) or a deny (shown to the
    /// model); `None` for an allow, `Some` for every ask and deny.
    pub fn reason(&self) -> Option<&str> {
        self.verdict.reason()
    }

    /// Who decided, once the hook point has stamped it.
    pub fn provenance(&self) -> Option<&Provenance> {
        self.provenance.as_ref()
    }

    /// Sets who decided (normally left to the hook point).
    pub fn with_provenance(mut self, provenance: Provenance) -> Self {
        self.provenance = Some(provenance);
        self
    }

    /// Rewrites the call's arguments (an allow or an ask; on a deny only
    /// recorded).
    /// `arguments` must be a JSON object valid for the tool's input schema:
    /// the pipeline checks it again and fails the call if it is not.
    pub fn with_arguments(mut self, arguments: impl Into<Arc<Value>>) -> Self {
        self.rewrite = Some(Rewrite {
            arguments: arguments.into(),
            by: None,
        });
        self
    }

    /// The rewritten arguments, if this decision carries any.
    pub fn rewritten_arguments(&self) -> Option<&Arc<Value>> {
        self.rewrite.as_ref().map(|r| &r.arguments)
    }

    /// Who rewrote the arguments: the provenance recorded with the rewrite
    /// (set when [`stricter`](Self::stricter) carried it over from another
    /// decision, or by [`with_rewritten_by`](Self::with_rewritten_by)), else
    /// this decision's own provenance.
    pub fn rewritten_by(&self) -> Option<&Provenance> {
        let rewrite = self.rewrite.as_ref()?;
        rewrite.by.as_ref().or(self.provenance.as_ref())
    }

    /// Records who rewrote the arguments (normally left to the hook point's
    /// stamp of the decision); does nothing without a rewrite.
    pub fn with_rewritten_by(mut self, provenance: Provenance) -> Self {
        if let Some(rewrite) = &mut self.rewrite {
            rewrite.by = Some(provenance);
        }
        self
    }

    /// The stricter of two decisions (deny > ask > allow); on a tie, `self`.
    ///
    /// A rewrite survives: when the stricter decision carries none, it takes
    /// the other decision's rewrite, with who made it.
    pub fn stricter(self, other: PreDecision) -> PreDecision {
        let (mut winner, loser) = if other.action() > self.action() {
            (other, self)
        } else {
            (self, other)
        };
        if winner.rewrite.is_none()
            && let Some(mut rewrite) = loser.rewrite
        {
            rewrite.by = rewrite.by.or(loser.provenance);
            winner.rewrite = Some(rewrite);
        }
        winner
    }

    pub(crate) fn provenance_slot(&mut self) -> Option<&mut Option<Provenance>> {
        Some(&mut self.provenance)
    }
}

impl fmt::Display for PreDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.verdict {
            Verdict::Allow => f.write_str("allow"),
            Verdict::Ask { reason } => write!(f, "ask ({reason})"),
            Verdict::Deny { reason } => write!(f, "deny ({reason})"),
        }
    }
}
