//! Session rules: "always for this session" answers, shared by the gate and
//! the approvers.

use std::sync::Arc;

use parking_lot::RwLock;
use tack_core::hook::AgentId;

use crate::{Rule, RuleSet};

/// Allow rules recorded while the gate is installed ("always for this
/// session"). Cheap to clone: the clones share the same rules. They are
/// evaluated with the configured rules, so a deny rule still beats them and
/// `read-only` mode still refuses what it refuses.
///
/// ```
/// use tack_permission::SessionRules;
/// let session = SessionRules::new();
/// session.allow_tool("bash", None);
/// assert_eq!(session.snapshot().rules()[0].to_string(), "allow bash");
/// session.clear();
/// assert!(session.snapshot().is_empty());
/// ```
#[derive(Clone, Debug, Default)]
pub struct SessionRules {
    rules: Arc<RwLock<RuleSet>>,
}

impl SessionRules {
    /// No session rules.
    pub fn new() -> Self {
        Self::default()
    }

    /// Allows every later call of `tool` (by exact name) made for `agent`;
    /// `None` (a request that named no agent) grants it to every caller.
    pub fn allow_tool(&self, tool: &str, agent: Option<&AgentId>) {
        // Escape glob metacharacters: a session grant is for this exact tool.
        let literal = globset_escape(tool);
        let mut builder = Rule::allow(literal).origin("granted for this session");
        if let Some(agent) = agent {
            builder = builder.agent(agent.clone());
        }
        match builder.build() {
            Ok(rule) => self.rules.write().push(rule),
            Err(error) => tracing::warn!(%error, tool, "could not record a session rule"),
        }
    }

    /// Adds any rule.
    pub fn push(&self, rule: Rule) {
        self.rules.write().push(rule);
    }

    /// A copy of the current rules.
    pub fn snapshot(&self) -> RuleSet {
        self.rules.read().clone()
    }

    /// Forgets every session rule.
    pub fn clear(&self) {
        *self.rules.write() = RuleSet::new();
    }

    pub(crate) fn read(&self) -> parking_lot::RwLockReadGuard<'_, RuleSet> {
        self.rules.read()
    }
}

fn globset_escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\' | '!') {
            out.push('[');
            out.push(c);
            out.push(']');
        } else {
            out.push(c);
        }
    }
    out
}
