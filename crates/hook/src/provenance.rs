//! Who decided: the hook point and listener behind an output.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Which hook point and which of its listeners decided an outcome.
///
/// Waterfall hook points created with
/// [`Waterfall::with_provenance`](super::Waterfall::with_provenance) stamp it
/// automatically: the provenance of an output is the listener that *created*
/// it. A listener that passes `next`'s output through unchanged leaves the inner
/// provenance in place; one that returns a new value is stamped with its own
/// name. An output of the hook point's default has no listener.
///
/// ```
/// use tack_hook::Provenance;
/// let p = Provenance::listener("tools/pre-execute", "permission");
/// assert_eq!(p.to_string(), "tools/pre-execute › listener `permission`");
/// assert_eq!(p.listener.as_deref(), Some("permission"));
/// let d = Provenance::default_of("tools/execute");
/// assert_eq!((d.to_string().as_str(), d.listener), ("tools/execute › the default", None));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Provenance {
    /// The hook point or pipeline stage, e.g. `tools/pre-execute`, `guard`, `approval`.
    pub hook: Cow<'static, str>,
    /// The listener that decided within it, by name; `None` when no listener
    /// did and the hook point's default decided (allow, the tool body,
    /// identity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listener: Option<Arc<str>>,
}

impl Provenance {
    /// A decision made by a named listener of `hook`.
    pub fn listener(hook: impl Into<Cow<'static, str>>, name: impl Into<Arc<str>>) -> Self {
        Self {
            hook: hook.into(),
            listener: Some(name.into()),
        }
    }

    /// A decision made by the default of `hook`.
    pub fn default_of(hook: impl Into<Cow<'static, str>>) -> Self {
        Self {
            hook: hook.into(),
            listener: None,
        }
    }
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.listener {
            Some(name) => write!(f, "{} › listener `{name}`", self.hook),
            None => write!(f, "{} › the default", self.hook),
        }
    }
}
