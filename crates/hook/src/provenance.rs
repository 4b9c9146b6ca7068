//! Who decided: the hook point and listener behind an output.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The listener (or default) that produced an output.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decider {
    /// No listener decided: the hook point's default did (allow, the tool body, identity).
    Default,
    /// The named listener decided.
    Listener(Arc<str>),
}

impl fmt::Display for Decider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decider::Default => f.write_str("the default"),
            Decider::Listener(name) => write!(f, "listener `{name}`"),
        }
    }
}

/// Which hook point and which of its listeners decided an outcome.
///
/// Waterfall hook points created with
/// [`Waterfall::with_provenance`](super::Waterfall::with_provenance) stamp it
/// automatically: the provenance of an output is the listener that *created*
/// it. A listener that passes `next`'s output through unchanged leaves the inner
/// decider in place; one that returns a new value is stamped with its own name.
///
/// ```
/// use tack_hook::Provenance;
/// let p = Provenance::listener("tools/pre-execute", "permission");
/// assert_eq!(p.to_string(), "tools/pre-execute › listener `permission`");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Provenance {
    /// The hook point or pipeline stage, e.g. `tools/pre-execute`, `guard`, `approval`.
    pub hook: Cow<'static, str>,
    /// Who decided within it.
    pub decider: Decider,
}

impl Provenance {
    /// A decision made by a named listener of `hook`.
    pub fn listener(hook: impl Into<Cow<'static, str>>, name: impl Into<Arc<str>>) -> Self {
        Self {
            hook: hook.into(),
            decider: Decider::Listener(name.into()),
        }
    }

    /// A decision made by the default of `hook`.
    pub fn default_of(hook: impl Into<Cow<'static, str>>) -> Self {
        Self {
            hook: hook.into(),
            decider: Decider::Default,
        }
    }
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} › {}", self.hook, self.decider)
    }
}
