//! Who a listener is registered for: every agent, or one.

use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::Arc;

use super::memo::Memo;

/// The identity of one agent in a host.
///
/// Cheap to clone (one shared allocation). Two ids are equal when their text
/// is equal. Keep the id an agent was given and pass it (or clones of it) to
/// every call: an id remembers the listener lists it was last dispatched
/// with, so a call for it need not look them up among every agent's.
///
/// ```
/// use tack_hook::AgentId;
/// let a = AgentId::new("reviewer");
/// assert_eq!(a.as_str(), "reviewer");
/// assert_eq!(a, AgentId::from("reviewer"));
/// ```
#[derive(Clone)]
pub struct AgentId(Arc<Named<dyn Remembers>>);

/// An id's text, and beside it (in the allocation a call touches when it
/// clones the id) the listener lists hook points last gave it.
struct Named<M: ?Sized> {
    text: Arc<str>,
    memo: M,
}

/// The memo behind a trait object: it is a cache that equality and hashing
/// never read, and kept out of sight this way an `AgentId` is not taken for
/// a key that can change (clippy's `mutable_key_type` looks through concrete
/// fields only), so hosts key maps by it without a warning.
///
/// Unwind-safe, as an id's text is: no listener or host code runs under the
/// memo's lock, and what it guards is only ever a whole entry or none.
trait Remembers: Send + Sync + RefUnwindSafe + UnwindSafe {
    fn memo(&self) -> &Memo;
}

impl Remembers for Memo {
    #[inline]
    fn memo(&self) -> &Memo {
        self
    }
}

// Text equality, with the shared pointers compared first: ids cloned from one
// source (the common case when a host looks an agent's listeners up) are then
// equal without reading the stored text, which may be out of cache.
impl PartialEq for AgentId {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.same(other)
    }
}

impl Eq for AgentId {}

// By text, as equality compares it.
impl PartialOrd for AgentId {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for AgentId {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

// Hashes the text, as equality compares it.
impl std::hash::Hash for AgentId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl AgentId {
    /// Creates an agent id from any string.
    pub fn new(id: impl Into<Arc<str>>) -> Self {
        let named: Arc<Named<Memo>> = Arc::new(Named {
            text: id.into(),
            memo: Memo::default(),
        });
        Self(named)
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0.text
    }

    /// Equality that first compares the shared pointers (the common case on a hot
    /// path: the same `AgentId` cloned around) and only then the text.
    #[inline]
    pub(crate) fn same(&self, other: &AgentId) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.text == other.0.text
    }

    /// What this id remembers of its listener lists (see [`Memo`]).
    #[inline]
    pub(crate) fn memo(&self) -> &Memo {
        self.0.memo.memo()
    }
}

impl fmt::Debug for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AgentId({:?})", self.as_str())
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for AgentId {
    fn from(value: &str) -> Self {
        Self::new(value)
    }
}

impl From<String> for AgentId {
    fn from(value: String) -> Self {
        Self::new(value)
    }
}

/// A clone (cheap: the name is shared), so every API that names an agent
/// takes `impl Into<AgentId>` and an `&AgentId` in hand works as well.
impl From<&AgentId> for AgentId {
    fn from(value: &AgentId) -> Self {
        value.clone()
    }
}

impl serde::Serialize for AgentId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for AgentId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(Self::new(text))
    }
}

/// Where a listener (or a tool, or a guard) applies.
///
/// A dispatch made for agent A reaches the [`Scope::Global`] listeners and the
/// listeners registered for `Scope::Agent(A)`, never those of another agent. A
/// dispatch made for no agent (`None`) reaches only the global listeners.
///
/// ```
/// use tack_hook::{AgentId, Scope};
/// let a = AgentId::new("a");
/// assert!(Scope::Global.reaches(Some(&a)));
/// assert!(Scope::Agent(a.clone()).reaches(Some(&a)));
/// assert!(!Scope::Agent(a).reaches(Some(&AgentId::new("b"))));
/// ```
///
/// Closed on purpose (no `#[non_exhaustive]`): a scope nobody knows can
/// never be treated as global (which would fail open), because there is
/// none. Every match over a scope — in a registry that picks a layer by it,
/// say — names both variants; a new kind of scope would be a breaking change
/// that makes each of those matches decide, never a catch-all arm.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Scope {
    /// Every agent of the host.
    #[default]
    Global,
    /// One agent only.
    Agent(AgentId),
}

impl Scope {
    /// Whether a dispatch made for `agent` reaches something registered in this scope.
    #[inline]
    pub fn reaches(&self, agent: Option<&AgentId>) -> bool {
        match self {
            Scope::Global => true,
            Scope::Agent(own) => agent.is_some_and(|a| own.same(a)),
        }
    }
}

impl From<AgentId> for Scope {
    fn from(agent: AgentId) -> Self {
        Scope::Agent(agent)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Global => f.write_str("global"),
            Scope::Agent(a) => write!(f, "agent {a}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An id stays what a shared string is to the compiler: sent and shared
    /// across threads, and captured by `catch_unwind` without a wrapper.
    #[test]
    fn an_id_is_send_sync_and_unwind_safe() {
        fn holds<T: Send + Sync + Unpin + UnwindSafe + RefUnwindSafe>() {}
        holds::<AgentId>();
        holds::<Scope>();
        let id = AgentId::new("a");
        assert!(std::panic::catch_unwind(|| id.as_str().len()).is_ok());
    }
}
