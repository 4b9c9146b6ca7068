//! How a listener is registered ([`ListenerSpec`], [`Priority`]) and the
//! entry a hook point keeps for it.

use std::sync::Arc;

use super::{AgentId, Order, Scope};

/// The relative order of listeners on one hook point. Higher runs first (outer).
///
/// Listeners with equal priority run in registration order: the first registered
/// is the outermost. The default is [`Priority::NORMAL`] (0). To place a
/// listener relative to a *particular* listener, name it with an
/// [`Order`](super::Order) instead of guessing a number that beats its priority.
///
/// ```
/// use tack_hook::Priority;
/// assert!(Priority::EARLY > Priority::NORMAL);
/// assert!(Priority::NORMAL > Priority::LATE);
/// assert_eq!(Priority::default(), Priority::NORMAL);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority(pub i32);

impl Priority {
    /// Outer than the default: sees the input first and the output last
    /// (audit, security gates).
    pub const EARLY: Priority = Priority(100);
    /// The default.
    pub const NORMAL: Priority = Priority(0);
    /// Inner than the default: closest to the hook's default (e.g. the tool body).
    pub const LATE: Priority = Priority(-100);
}

/// How a listener is registered: its name, its scope and its priority.
///
/// The name appears in tracing, in error messages ("listener `audit` panicked")
/// and in the provenance of the decisions the listener makes; it need not be
/// unique, but a name that says who registered it helps the people reading logs.
///
/// ```
/// use tack_hook::{AgentId, ListenerSpec, Priority, Scope};
/// let spec = ListenerSpec::new("audit").with_priority(Priority::EARLY);
/// assert_eq!(spec.name(), "audit");
/// assert_eq!(spec.scope(), &Scope::Global);
///
/// let scoped = ListenerSpec::for_agent(AgentId::new("a"), "only-a");
/// assert_eq!(scoped.scope(), &Scope::Agent(AgentId::new("a")));
///
/// // A bare name is a global listener with normal priority.
/// let from_str: ListenerSpec = "plain".into();
/// assert_eq!(from_str.priority(), Priority::NORMAL);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListenerSpec {
    pub(crate) name: Arc<str>,
    pub(crate) scope: Scope,
    pub(crate) priority: Priority,
}

impl ListenerSpec {
    /// A global listener with normal priority.
    pub fn new(name: impl Into<Arc<str>>) -> Self {
        Self {
            name: name.into(),
            scope: Scope::Global,
            priority: Priority::NORMAL,
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

    /// Sets the priority.
    pub fn with_priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
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

    /// The listener's priority.
    pub fn priority(&self) -> Priority {
        self.priority
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
    pub(crate) priority: Priority,
    pub(crate) order: Option<Order>,
    pub(crate) listener: Arc<L>,
}

impl<L: ?Sized> Entry<L> {
    pub(crate) fn constrained(&self) -> bool {
        self.order.as_ref().is_some_and(|o| !o.is_empty())
    }
}
