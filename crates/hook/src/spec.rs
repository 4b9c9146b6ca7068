//! How a listener is registered ([`ListenerSpec`]) and the entry a hook
//! point keeps for it.

use std::sync::Arc;

use super::{AgentId, Order, Scope};

/// How a listener is registered: its name and its scope. Where it goes in
/// the chain is an [`Order`] (`tap_with`, `register_with`); without one, it
/// goes at [`Order::NORMAL`].
///
/// The name appears in tracing, in error messages ("listener `audit` panicked")
/// and in the provenance of the decisions the listener makes; it need not be
/// unique, but a name that says who registered it helps the people reading logs.
///
/// ```
/// use tack_hook::{AgentId, ListenerSpec, Scope};
/// let spec = ListenerSpec::new("audit");
/// assert_eq!(spec.name(), "audit");
/// assert_eq!(spec.scope(), &Scope::Global);
///
/// let scoped = ListenerSpec::for_agent(AgentId::new("a"), "only-a");
/// assert_eq!(scoped.scope(), &Scope::Agent(AgentId::new("a")));
///
/// // A bare name is a global listener.
/// let from_str: ListenerSpec = "plain".into();
/// assert_eq!(from_str.scope(), &Scope::Global);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListenerSpec {
    pub(crate) name: Arc<str>,
    pub(crate) scope: Scope,
}

impl ListenerSpec {
    /// A global listener.
    pub fn new(name: impl Into<Arc<str>>) -> Self {
        Self {
            name: name.into(),
            scope: Scope::Global,
        }
    }

    /// A listener that only dispatches made for `agent` reach.
    pub fn for_agent(agent: impl Into<AgentId>, name: impl Into<Arc<str>>) -> Self {
        Self::new(name).with_scope(Scope::Agent(agent.into()))
    }

    /// Sets the scope.
    pub fn with_scope(mut self, scope: impl Into<Scope>) -> Self {
        self.scope = scope.into();
        self
    }

    /// The listener's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The listener's scope.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }
}

impl From<&str> for ListenerSpec {
    fn from(name: &str) -> Self {
        Self::new(name)
    }
}

impl From<String> for ListenerSpec {
    fn from(name: String) -> Self {
        Self::new(name)
    }
}

impl From<(Scope, &str)> for ListenerSpec {
    fn from((scope, name): (Scope, &str)) -> Self {
        Self::new(name).with_scope(scope)
    }
}

/// One registered listener.
pub(crate) struct Entry<L: ?Sized> {
    pub(crate) name: Arc<str>,
    pub(crate) scope: Scope,
    /// Higher runs first (see [`Order`]).
    pub(crate) rank: i32,
    pub(crate) order: Option<Order>,
    pub(crate) listener: Arc<L>,
}

impl<L: ?Sized> Entry<L> {
    pub(crate) fn constrained(&self) -> bool {
        self.order.as_ref().is_some_and(|o| !o.is_empty())
    }
}
