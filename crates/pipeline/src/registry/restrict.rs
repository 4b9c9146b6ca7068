//! Agent-scoped allow/deny masks over the global tools.

use std::collections::BTreeSet;

/// A mask that hides global tools from one agent: keep only `allow` (when
/// given), then drop `deny`. Several masks on one agent intersect; the agent's
/// own tools are never masked.
///
/// ```
/// use tack_pipeline::Restriction;
/// let r = Restriction::allow(["read_file", "grep"]).and_deny(["grep"]);
/// assert!(r.permits("read_file"));
/// assert!(!r.permits("grep"));
/// assert!(!r.permits("bash"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Restriction {
    pub(crate) allow: Option<BTreeSet<String>>,
    pub(crate) deny: BTreeSet<String>,
}

impl Restriction {
    /// Only these global tools stay visible.
    pub fn allow<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            allow: Some(names.into_iter().map(Into::into).collect()),
            deny: BTreeSet::new(),
        }
    }

    /// These global tools are hidden.
    pub fn deny<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            allow: None,
            deny: names.into_iter().map(Into::into).collect(),
        }
    }

    /// Also hides these.
    pub fn and_deny<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.deny.extend(names.into_iter().map(Into::into));
        self
    }

    /// Whether a global tool named `name` stays visible under this mask.
    pub fn permits(&self, name: &str) -> bool {
        self.allow.as_ref().is_none_or(|a| a.contains(name)) && !self.deny.contains(name)
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &String> {
        self.allow.iter().flatten().chain(&self.deny)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.allow.is_none() && self.deny.is_empty()
    }
}

/// Why a restriction was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RestrictError {
    /// Neither allow nor deny names were given.
    #[error("a restriction needs names to allow or to deny; this one has neither")]
    Empty,
    /// The restriction names `run_code`.
    #[error(
        "`run_code` is reserved for the code-mode transport and cannot be restricted; set the agent's presentation instead"
    )]
    Reserved,
    /// The restriction names tools the agent does not inherit.
    #[error(
        "the restriction for agent `{agent}` names tools it does not inherit: {}; the global tools are: {}",
        unknown.join(", "),
        if inheritable.is_empty() { "(none)".to_owned() } else { inheritable.join(", ") }
    )]
    UnknownTools {
        /// The agent.
        agent: String,
        /// The names it does not inherit, in the restriction's order.
        unknown: Vec<String>,
        /// The global tool names, sorted (empty: there are none).
        inheritable: Vec<String>,
    },
}
