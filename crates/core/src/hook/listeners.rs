//! The listener list shared by every kind of hook point: registration, ordering,
//! copy-on-write snapshots and disposal.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::RwLock;

use super::order::{Conflict, arrange};
use super::{AgentId, Disposer, Order, OrderError, Scope};

/// The relative order of listeners on one hook point. Higher runs first (outer).
///
/// Listeners with equal priority run in registration order: the first registered
/// is the outermost. The default is [`Priority::NORMAL`] (0). To place a
/// listener relative to a *particular* listener, name it with an
/// [`Order`](super::Order) instead of guessing a number that beats its priority.
///
/// ```
/// use tack_core::hook::Priority;
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
/// use tack_core::hook::{AgentId, ListenerSpec, Priority, Scope};
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
    name: Arc<str>,
    scope: Scope,
    priority: Priority,
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
    pub fn for_agent(agent: AgentId, name: impl Into<Arc<str>>) -> Self {
        Self::new(name).with_scope(Scope::Agent(agent))
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

/// One registered listener inside a snapshot.
pub(crate) struct Entry<L: ?Sized> {
    pub(crate) id: u64,
    pub(crate) name: Arc<str>,
    pub(crate) scope: Scope,
    pub(crate) priority: Priority,
    pub(crate) order: Option<Arc<Order>>,
    pub(crate) listener: Arc<L>,
}

impl<L: ?Sized> Clone for Entry<L> {
    fn clone(&self) -> Self {
        Self {
            id: self.id,
            name: self.name.clone(),
            scope: self.scope.clone(),
            priority: self.priority,
            order: self.order.clone(),
            listener: self.listener.clone(),
        }
    }
}

/// An immutable, ordered view of the listeners one dispatch runs (those whose
/// scope reaches the dispatch's agent), with the hook's shared data `M`.
pub(crate) struct ViewData<L: ?Sized, M> {
    pub(crate) entries: Box<[Entry<L>]>,
    pub(crate) meta: M,
}

/// A shared [`ViewData`]: one pointer, cheap to clone.
pub(crate) type View<L, M = ()> = Arc<ViewData<L, M>>;

/// Views kept for agent dispatches, at most this many agents (then built per dispatch).
const MAX_CACHED_AGENT_VIEWS: usize = 64;

struct State<L: ?Sized, M> {
    /// Every registration in base order: priority descending, then registration order.
    entries: Vec<Entry<L>>,
    /// Every registration in chain order: the base order rearranged by the
    /// [`Order`] constraints.
    ordered: Vec<Entry<L>>,
    /// The view of a dispatch for no agent, or for any agent when no listener is agent-scoped.
    global_view: View<L, M>,
    /// Cached views of agents that have agent-scoped listeners.
    agent_views: Vec<(AgentId, View<L, M>)>,
    has_agent_scoped: bool,
}

/// The registered listeners of one hook point.
///
/// Copy-on-write: registration and disposal rebuild the views under a write
/// lock; a dispatch takes its view with one read lock and one reference-count
/// increment and never holds the lock while listeners run.
pub(crate) struct ListenerList<L: ?Sized, M = ()> {
    state: RwLock<State<L, M>>,
    meta: M,
    next_id: AtomicU64,
}

impl<L: ?Sized + Send + Sync + 'static> ListenerList<L, ()> {
    pub(crate) fn new() -> Arc<Self> {
        Self::with_meta(())
    }
}

impl<L: ?Sized + Send + Sync + 'static, M: Clone + Send + Sync + 'static> ListenerList<L, M> {
    /// A list whose every view carries `meta` (a waterfall's name and default).
    pub(crate) fn with_meta(meta: M) -> Arc<Self> {
        let global_view = Self::build_view(&[], None, &meta);
        Arc::new(Self {
            state: RwLock::new(State {
                entries: Vec::new(),
                ordered: Vec::new(),
                global_view,
                agent_views: Vec::new(),
                has_agent_scoped: false,
            }),
            meta,
            next_id: AtomicU64::new(0),
        })
    }

    fn build_view(entries: &[Entry<L>], agent: Option<&AgentId>, meta: &M) -> View<L, M> {
        Arc::new(ViewData {
            entries: entries
                .iter()
                .filter(|e| e.scope.reaches(agent))
                .cloned()
                .collect(),
            meta: meta.clone(),
        })
    }

    /// The chain order of `entries` (see [`arrange`]).
    fn arranged(entries: &[Entry<L>], lenient: bool) -> Result<Vec<Entry<L>>, Conflict> {
        if entries.iter().all(|e| e.order.is_none()) {
            return Ok(entries.to_vec());
        }
        let at = arrange(
            entries.len(),
            |i| &entries[i].name,
            |i| entries[i].order.as_deref(),
            lenient,
        )?;
        Ok(at.into_iter().map(|i| entries[i].clone()).collect())
    }

    fn rebuild(&self, state: &mut State<L, M>) {
        // A plain registration or a disposal cannot fail: a conflict it
        // completes (a listener registered under a name older constraints
        // disagree about) is resolved leniently and logged.
        state.ordered = match Self::arranged(&state.entries, true) {
            Ok(ordered) => ordered,
            Err(_) => state.entries.clone(),
        };
        self.rebuild_views(state);
    }

    fn rebuild_views(&self, state: &mut State<L, M>) {
        state.global_view = Self::build_view(&state.ordered, None, &self.meta);
        state.agent_views.clear();
        state.has_agent_scoped = state
            .entries
            .iter()
            .any(|e| matches!(e.scope, Scope::Agent(_)));
    }

    /// The listeners a dispatch for `agent` runs, in order.
    #[inline]
    pub(crate) fn view(&self, agent: Option<&AgentId>) -> View<L, M> {
        {
            let state = self.state.read();
            let Some(agent) = agent.filter(|_| state.has_agent_scoped) else {
                return state.global_view.clone();
            };
            if let Some((_, view)) = state.agent_views.iter().find(|(a, _)| a.same(agent)) {
                return view.clone();
            }
        }
        let mut state = self.state.write();
        if let Some((_, view)) = state
            .agent_views
            .iter()
            .find(|(a, _)| agent.is_some_and(|x| a.same(x)))
        {
            return view.clone();
        }
        let view = Self::build_view(&state.ordered, agent, &self.meta);
        if let Some(agent) = agent
            && state.agent_views.len() < MAX_CACHED_AGENT_VIEWS
        {
            state.agent_views.push((agent.clone(), view.clone()));
        }
        view
    }

    /// Adds a listener; the returned disposer removes exactly this registration.
    pub(crate) fn insert(self: &Arc<Self>, spec: ListenerSpec, listener: Arc<L>) -> Disposer {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        {
            let mut state = self.state.write();
            Self::place(&mut state, Self::entry(id, spec, None, listener));
            self.rebuild(&mut state);
        }
        self.disposer(id)
    }

    /// Adds a listener placed by `order` (resolved now, against the
    /// listeners registered in every scope).
    ///
    /// # Errors
    ///
    /// [`OrderError`] for a name no listener has, or a conflict; nothing is
    /// registered then.
    pub(crate) fn insert_ordered(
        self: &Arc<Self>,
        hook: &'static str,
        spec: ListenerSpec,
        order: Order,
        listener: Arc<L>,
    ) -> Result<Disposer, OrderError> {
        if order.is_empty() {
            return Ok(self.insert(spec, listener));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut state = self.state.write();
        for (relation, target) in order.constraints() {
            if !state.entries.iter().any(|e| e.name == *target) {
                return Err(OrderError::UnknownListener {
                    hook,
                    listener: spec.name,
                    relation,
                    target: target.clone(),
                    known: state.ordered.iter().map(|e| e.name.clone()).collect(),
                });
            }
        }
        let name = spec.name.clone();
        let mut entries = state.entries.clone();
        Self::place_in(&mut entries, Self::entry(id, spec, Some(order), listener));
        let ordered = Self::arranged(&entries, false).map_err(|c| OrderError::Conflict {
            hook,
            listener: name,
            placing: c.placing,
            after: c.after,
            before: c.before,
        })?;
        state.entries = entries;
        state.ordered = ordered;
        self.rebuild_views(&mut state);
        drop(state);
        Ok(self.disposer(id))
    }

    fn entry(id: u64, spec: ListenerSpec, order: Option<Order>, listener: Arc<L>) -> Entry<L> {
        Entry {
            id,
            name: spec.name,
            scope: spec.scope,
            priority: spec.priority,
            order: order.map(Arc::new),
            listener,
        }
    }

    fn place(state: &mut State<L, M>, entry: Entry<L>) {
        Self::place_in(&mut state.entries, entry);
    }

    /// Higher priority first; equal priority keeps registration order, so the
    /// new entry goes after every entry whose priority is >= its own.
    fn place_in(entries: &mut Vec<Entry<L>>, entry: Entry<L>) {
        let at = entries.partition_point(|e| e.priority >= entry.priority);
        entries.insert(at, entry);
    }

    fn disposer(self: &Arc<Self>, id: u64) -> Disposer {
        let list: Weak<Self> = Arc::downgrade(self);
        Disposer::new(move || {
            if let Some(list) = list.upgrade() {
                list.remove(id);
            }
        })
    }

    fn remove(&self, id: u64) {
        let mut state = self.state.write();
        if let Some(at) = state.entries.iter().position(|e| e.id == id) {
            state.entries.remove(at);
            self.rebuild(&mut state);
        }
    }

    /// Names of the listeners a dispatch for `agent` would reach, in order.
    pub(crate) fn names_for(&self, agent: Option<&AgentId>) -> Vec<Arc<str>> {
        self.view(agent)
            .entries
            .iter()
            .map(|e| e.name.clone())
            .collect()
    }

    /// How many listeners are registered, across every scope.
    pub(crate) fn len(&self) -> usize {
        self.state.read().entries.len()
    }
}

impl<L: ?Sized, M> fmt::Debug for ListenerList<L, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.read();
        f.debug_list()
            .entries(
                state
                    .ordered
                    .iter()
                    .map(|e| (&*e.name, &e.scope, e.priority)),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(view: &View<str>) -> Vec<&str> {
        view.entries.iter().map(|e| &*e.name).collect()
    }

    fn add(list: &Arc<ListenerList<str>>, spec: ListenerSpec) -> Disposer {
        let name: Arc<str> = Arc::from(spec.name());
        list.insert(spec, name)
    }

    #[test]
    fn insertion_keeps_priority_then_registration_order() {
        let list = ListenerList::<str>::new();
        let _a = add(&list, ListenerSpec::new("a"));
        let _b = add(&list, ListenerSpec::new("b").with_priority(Priority::EARLY));
        let _c = add(&list, ListenerSpec::new("c"));
        let _d = add(&list, ListenerSpec::new("d").with_priority(Priority(-1)));
        let _e = add(&list, ListenerSpec::new("e").with_priority(Priority::EARLY));
        assert_eq!(names(&list.view(None)), ["b", "e", "a", "c", "d"]);
    }

    #[test]
    fn agent_views_are_cached_and_rebuilt_on_change() {
        let list = ListenerList::<str>::new();
        let a = AgentId::new("a");
        let _g = add(&list, ListenerSpec::new("g"));
        // No agent-scoped listener yet: every agent shares the global view.
        assert!(Arc::ptr_eq(&list.view(Some(&a)), &list.view(None)));

        let only_a = add(&list, ListenerSpec::for_agent(a.clone(), "only-a"));
        let first = list.view(Some(&a));
        assert_eq!(names(&first), ["g", "only-a"]);
        assert!(Arc::ptr_eq(&first, &list.view(Some(&a))), "cached");
        assert_eq!(names(&list.view(Some(&AgentId::new("b")))), ["g"]);

        only_a.dispose();
        let after = list.view(Some(&a));
        assert!(!Arc::ptr_eq(&first, &after), "rebuilt after a change");
        assert_eq!(names(&after), ["g"]);
        assert_eq!(names(&first), ["g", "only-a"], "an old view is immutable");
    }

    #[test]
    fn views_beyond_the_cache_limit_are_still_correct() {
        let list = ListenerList::<str>::new();
        let agents: Vec<AgentId> = (0..MAX_CACHED_AGENT_VIEWS + 5)
            .map(|i| AgentId::new(format!("agent-{i}")))
            .collect();
        let _keep: Vec<Disposer> = agents
            .iter()
            .map(|a| add(&list, ListenerSpec::for_agent(a.clone(), a.as_str())))
            .collect();
        for agent in &agents {
            assert_eq!(names(&list.view(Some(agent))), [agent.as_str()]);
        }
        assert_eq!(list.state.read().agent_views.len(), MAX_CACHED_AGENT_VIEWS);
    }

    #[test]
    fn removing_an_unknown_id_changes_nothing() {
        let list = ListenerList::<str>::new();
        let _a = add(&list, ListenerSpec::new("a"));
        let before = list.view(None);
        list.remove(9_999);
        assert!(Arc::ptr_eq(&before, &list.view(None)));
    }
}
