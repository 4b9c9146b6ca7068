//! The gate: rules, session rules and mode combined into one decision, and the
//! `tools/pre-execute` listener.

use std::path::PathBuf;
use std::sync::Arc;

use tack_core::hook::{Next, WaterfallListener};
use tack_core::policy::PreDecision;
use tack_core::tool::ToolExecution;

use crate::rules::{Prepared, decide};
use crate::{Action, Mode, Modes, RuleSet, SessionRules};

/// Why the gate decided what it did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Basis {
    /// The deciding rule (its description: ``rule `…` (origin)``), or the
    /// allow rules that together cover every simple command of a command
    /// string (``rules `…` and `…` ``).
    Rule(String),
    /// A deny or ask rule might match a command string that cannot be fully
    /// read, so the call asks (even in `allow-all` mode).
    Unreadable {
        /// The rule that might match, described.
        rule: String,
        /// Why the command cannot be fully read.
        why: String,
    },
    /// A deny or ask path rule on `read_file` may apply to a `grep` or
    /// `glob` call whose search could reach a matching file, so the call
    /// asks (even in `allow-all` mode) unless it is narrowed.
    MayReach {
        /// The rule that may apply, described.
        rule: String,
        /// Which files and where.
        why: String,
    },
    /// No rule matched: the mode's baseline.
    Mode(Mode),
    /// A rule allowed the call, but `read-only` mode refuses its tier.
    ModeFloor(Mode),
}

/// The gate's decision for one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// Allow, ask or deny.
    pub action: Action,
    /// Why.
    pub basis: Basis,
    /// The mode in force.
    pub mode: Mode,
}

impl Evaluation {
    /// The reason shown to the model (deny) or the approver (ask); it names
    /// the rule or the mode and does not blame the user.
    pub fn reason(&self, exec: &ToolExecution) -> String {
        let tool = exec.name();
        let tier = exec.tier();
        match (&self.basis, self.action) {
            (Basis::Rule(rule), Action::Deny) => {
                format!("tool `{tool}` is denied by permission {rule}")
            }
            (Basis::Rule(rule), _) => {
                format!("permission {rule} requires approval for tool `{tool}`")
            }
            (Basis::Unreadable { rule, why }, _) => format!(
                "permission {rule} may apply to this `{tool}` call, but its command cannot be \
                 fully read ({why}), so it requires approval"
            ),
            (Basis::MayReach { rule, why }, _) => format!(
                "permission {rule} may apply to this `{tool}` call ({why}), so it requires \
                 approval; narrow the search (its `path`, or a file-name filter) so it cannot \
                 reach those files"
            ),
            (Basis::Mode(mode) | Basis::ModeFloor(mode), Action::Deny) => format!(
                "tool `{tool}` ({tier}) is not allowed in permission mode `{mode}`, which permits read-only tools only"
            ),
            (Basis::Mode(mode) | Basis::ModeFloor(mode), _) => {
                format!("permission mode `{mode}` requires approval for {tier} tools like `{tool}`")
            }
        }
    }

    /// As a pre-execute decision.
    pub fn to_decision(&self, exec: &ToolExecution) -> PreDecision {
        match self.action {
            Action::Allow => PreDecision::allow(),
            action => PreDecision::from_action(action, self.reason(exec)),
        }
    }
}

pub(crate) struct GateState {
    pub(crate) rules: RuleSet,
    pub(crate) session: SessionRules,
    pub(crate) modes: Modes,
    pub(crate) root: Option<PathBuf>,
}

impl GateState {
    pub(crate) fn evaluate(&self, exec: &ToolExecution) -> Evaluation {
        let mode = self.modes.for_agent(exec.agent());
        let root = self.root.as_deref();
        let mut cache = Prepared::new(root);
        let session = self.session.read();
        // Configured rules first: among equally strict rules they are named.
        let rules = self.rules.rules().iter().chain(session.rules());
        let (action, basis) = match decide(rules, exec, &mut cache) {
            Some(decision) => match (decision.unread(), decision.reach()) {
                (Some(why), _) => (
                    decision.action(),
                    Basis::Unreadable {
                        rule: decision.describe(),
                        why: why.to_owned(),
                    },
                ),
                (None, Some(why)) => (
                    decision.action(),
                    Basis::MayReach {
                        rule: decision.describe(),
                        why: why.to_owned(),
                    },
                ),
                (None, None) => (decision.action(), Basis::Rule(decision.describe())),
            },
            None => (mode.baseline(exec.tier()), Basis::Mode(mode)),
        };
        let floor = mode.floor(exec.tier());
        if floor > action {
            return Evaluation {
                action: floor,
                basis: Basis::ModeFloor(mode),
                mode,
            };
        }
        Evaluation {
            action,
            basis,
            mode,
        }
    }
}

/// The `tools/pre-execute` listener.
pub(crate) struct GateListener(pub(crate) Arc<GateState>);

impl WaterfallListener<Arc<ToolExecution>, PreDecision> for GateListener {
    fn call(
        &self,
        exec: Arc<ToolExecution>,
        next: Next<Arc<ToolExecution>, PreDecision>,
    ) -> impl Future<Output = PreDecision> + Send {
        let evaluation = self.0.evaluate(&exec);
        async move {
            match evaluation.action {
                // Deny short-circuits: nothing later can loosen it.
                Action::Deny => evaluation.to_decision(&exec),
                // Allow defers to the rest of the chain.
                Action::Allow => next.run(exec).await,
                // Ask, unless the rest of the chain is stricter.
                Action::Ask => {
                    let ours = evaluation.to_decision(&exec);
                    let rest = next.run(exec).await;
                    if rest.action() > Action::Ask {
                        rest
                    } else {
                        ours
                    }
                }
            }
        }
    }
}
