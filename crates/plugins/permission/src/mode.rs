//! Modes: the baseline for calls no rule matches, settable per agent.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use parking_lot::RwLock;
use serde::{Deserialize, Serialize};
use tack_core::hook::AgentId;
use tack_core::tool::Tier;

use crate::Action;

/// A permission mode.
///
/// | mode | read-only tiers | writes | executes, network |
/// |---|---|---|---|
/// | `read-only` | allow | **deny** | **deny** |
/// | `ask` (default) | allow | ask | ask |
/// | `accept-edits` | allow | allow | ask |
/// | `allow-all` | allow | allow | allow |
///
/// The mode is the answer for a call no rule matches. Rules that match
/// decide instead, with two exceptions that keep modes meaningful:
/// `read-only` denies every non-read-only tier even if an allow rule matches,
/// and deny and ask rules apply in every mode (also `allow-all`).
///
/// ```
/// use tack_core::tool::Tier;
/// use tack_permission::{Action, Mode};
/// assert_eq!(Mode::default(), Mode::Ask);
/// assert_eq!(Mode::AcceptEdits.baseline(Tier::Writes), Action::Allow);
/// assert_eq!(Mode::AcceptEdits.baseline(Tier::Executes), Action::Ask);
/// assert_eq!("read-only".parse::<Mode>().unwrap(), Mode::ReadOnly);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Mode {
    /// Deny everything but read-only tiers.
    ReadOnly,
    /// Read-only tiers run, everything else asks.
    #[default]
    Ask,
    /// File edits run too; commands and network ask.
    AcceptEdits,
    /// Everything runs unless a deny or ask rule matches.
    AllowAll,
}

impl Mode {
    /// Every mode, in order of permissiveness.
    pub const ALL: [Mode; 4] = [Mode::ReadOnly, Mode::Ask, Mode::AcceptEdits, Mode::AllowAll];

    /// `read-only`, `ask`, `accept-edits`, `allow-all`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::Ask => "ask",
            Mode::AcceptEdits => "accept-edits",
            Mode::AllowAll => "allow-all",
        }
    }

    /// The decision for a call of `tier` that no rule matches.
    pub fn baseline(self, tier: Tier) -> Action {
        match (self, tier) {
            (_, Tier::ReadOnly) | (Mode::AllowAll, _) => Action::Allow,
            (Mode::ReadOnly, _) => Action::Deny,
            (Mode::AcceptEdits, Tier::Writes) => Action::Allow,
            _ => Action::Ask,
        }
    }

    /// The loosest decision any rule can reach for `tier` in this mode
    /// (`deny` for non-read-only tiers in `read-only` mode, else `allow`).
    pub fn floor(self, tier: Tier) -> Action {
        match self {
            Mode::ReadOnly if !tier.is_read_only() => Action::Deny,
            _ => Action::Allow,
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mode name that is not one of the four.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown permission mode `{0}`: expected `read-only`, `ask`, `accept-edits` or `allow-all`"
)]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| UnknownMode(s.to_owned()))
    }
}

/// The default mode and per-agent overrides; shared, so a host can switch an
/// agent's mode while the gate is installed (the next call sees it).
///
/// ```
/// use tack_core::hook::AgentId;
/// use tack_permission::{Mode, Modes};
/// let modes = Modes::new(Mode::Ask);
/// let planner = AgentId::new("planner");
/// modes.set_agent(planner.clone(), Mode::ReadOnly);
/// assert_eq!(modes.for_agent(Some(&planner)), Mode::ReadOnly);
/// assert_eq!(modes.for_agent(None), Mode::Ask);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Modes {
    inner: Arc<RwLock<ModesInner>>,
}

#[derive(Debug, Default)]
struct ModesInner {
    default: Mode,
    agents: HashMap<AgentId, Mode>,
}

impl Modes {
    /// `default` for every agent.
    pub fn new(default: Mode) -> Self {
        Self {
            inner: Arc::new(RwLock::new(ModesInner {
                default,
                agents: HashMap::new(),
            })),
        }
    }

    /// The mode of calls made for `agent` (or without an agent).
    pub fn for_agent(&self, agent: Option<&AgentId>) -> Mode {
        let inner = self.inner.read();
        agent
            .and_then(|a| inner.agents.get(a).copied())
            .unwrap_or(inner.default)
    }

    /// The default mode.
    pub fn default_mode(&self) -> Mode {
        self.inner.read().default
    }

    /// Sets the default mode.
    pub fn set_default(&self, mode: Mode) {
        self.inner.write().default = mode;
    }

    /// Sets one agent's mode.
    pub fn set_agent(&self, agent: impl Into<AgentId>, mode: Mode) {
        self.inner.write().agents.insert(agent.into(), mode);
    }

    /// Removes one agent's override (it follows the default again).
    pub fn clear_agent(&self, agent: impl Into<AgentId>) {
        self.inner.write().agents.remove(&agent.into());
    }
}
