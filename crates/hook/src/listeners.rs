//! The listener list shared by every kind of hook point: registration,
//! ordering, published snapshots and disposal.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use parking_lot::Mutex;
use tack_replicated::{Replaced, Replicated};

use super::disposer::Undo;
use super::entry::Entry;
use super::memo::next_stamp;
use super::order::{Conflict, arrange};
use super::view::{Own, Rank, Run, Slot, Snapshot, View, base_rank};
use super::{AgentId, Disposer, Order, OrderError, Scope};

/// The change a publication carries, made again in the snapshot it replaces.
enum Change<L: ?Sized> {
    /// A global listener added at its rank.
    Added(Rank, Arc<Entry<L>>),
    /// The global listener at a rank removed.
    Removed(Rank),
    /// An agent's list replaced by `run` (`None`: the agent has no listener
    /// left), one listener `added` or removed. The new list is built once
    /// and shared by both snapshots.
    Agent {
        agent: AgentId,
        run: Option<Run<L>>,
        added: bool,
    },
    /// Nothing in the lists (a listener they do not hold was removed).
    Nothing,
    /// Every list built anew (ranks recomputed for [`Order`] constraints).
    Rebuilt,
}

/// What only registration and disposal touch, under the writers' lock.
struct Registrations<L: ?Sized, M> {
    /// Every listener by base key (priority descending, then registration
    /// order); sorted only when [`Order`] constraints rank them anew.
    base: HashMap<Rank, Arc<Entry<L>>, foldhash::fast::RandomState>,
    /// How many listeners have [`Order`] constraints.
    constrained: usize,
    /// The snapshot the next change is made in: up to date, and (unless a
    /// dispatch still holds an older snapshot) sharing no node with the
    /// published one, so a change is made in place.
    working: Arc<Snapshot<L, M>>,
    next_id: u64,
}

/// The published snapshot and each thread's own copy of it (see
/// [`Replicated`]): a separate allocation whose reference count only that
/// thread's dispatches touch, so dispatches on different threads write to
/// no shared cache line. Made again (a shallow copy: a few pointers) when
/// the thread first dispatches after a change; each change empties every
/// copy, so a disposed listener is not kept alive by the copy of a thread
/// that stopped dispatching.
type Published<L, M> = Replicated<Snapshot<L, M>>;

/// The registered listeners of one hook point.
///
/// * **Dispatch** reads its thread's copy of the published snapshot
///   (`Published`), checked against the published version (one atomic
///   load of a line only a change writes), so it writes to nothing another
///   thread's dispatches write, then finds the agent's own list in a hash
///   map: the same cost for one agent or 100,000, and no cache of views
///   that could turn into a slow path. A thread loads the published
///   snapshot only to copy it after a change.
/// * **Registration and disposal** change one list of a persistent
///   structure and publish a new snapshot: O(log n) in the number of
///   listeners (plus the size of the one agent's own list). While some
///   listener has [`Order`] constraints, the chain order is recomputed on
///   each change instead (O(n) per change; constraints are few).
/// * A dispatch keeps the snapshot it started with: registering or disposing
///   during it changes later dispatches only.
pub struct ListenerList<L: ?Sized + Send + Sync, M: Send + Sync = ()> {
    /// The latest snapshot and each thread's copy of it.
    published: Published<L, M>,
    /// How many listeners the published snapshot holds.
    len: AtomicUsize,
    registrations: Mutex<Registrations<L, M>>,
}

/// What a change replaced (the snapshot and the threads' copies it
/// emptied), to drop once the registrations' lock is released.
type Stale<L, M> = Option<Replaced<Snapshot<L, M>, Arc<Snapshot<L, M>>>>;

impl<L: ?Sized + Send + Sync + 'static> ListenerList<L, ()> {
    /// An empty list.
    pub fn new() -> Arc<Self> {
        Self::with_meta(())
    }
}

impl<L: ?Sized + Send + Sync + 'static, M: Clone + Send + Sync + 'static> ListenerList<L, M> {
    /// A list whose every view carries `meta` (a waterfall's name and default).
    pub(crate) fn with_meta(meta: M) -> Arc<Self> {
        let working = Snapshot::empty(next_stamp(), meta);
        Arc::new(Self {
            // Not shared with the working one: that is changed in place.
            published: Replicated::new(working.clone()),
            len: AtomicUsize::new(0),
            registrations: Mutex::new(Registrations {
                base: HashMap::default(),
                constrained: 0,
                working: Arc::new(working),
                next_id: 0,
            }),
        })
    }

    /// The listeners a dispatch for `agent` runs, in order.
    #[inline]
    pub fn view(&self, agent: Option<&AgentId>) -> View<L, M> {
        View::of(self.snapshot(), agent)
    }

    /// Whether a dispatch for `agent` would run any listener: read from
    /// this thread's copy of the published snapshot.
    #[inline]
    pub fn reaches_any(&self, agent: Option<&AgentId>) -> bool {
        if self.len.load(Ordering::Acquire) == 0 {
            return false;
        }
        let snapshot = self.snapshot();
        // An agent's list is dropped once empty, so having one means having
        // a listener.
        !snapshot.global.is_empty()
            || agent.is_some_and(|a| !snapshot.agents.is_empty() && snapshot.agents.contains_key(a))
    }

    /// The published snapshot, as this thread's copy of it.
    #[inline]
    fn snapshot(&self) -> Arc<Snapshot<L, M>> {
        self.published.with_copy(
            |published| {
                // The first dispatch after a change of the global list
                // builds its flat list, for every thread.
                published.flatten();
                Arc::new(Snapshot::clone(published))
            },
            |mine| mine.clone(),
        )
    }

    /// Adds a listener named `name` in `scope` at the normal rank; the
    /// returned disposer removes exactly this registration.
    ///
    /// The name appears in tracing, in error messages ("listener `audit`
    /// panicked") and in the provenance of the decisions the listener makes;
    /// it need not be unique.
    pub fn insert(self: &Arc<Self>, scope: Scope, name: Arc<str>, listener: Arc<L>) -> Disposer {
        self.insert_ranked(scope, name, Order::NORMAL.rank(), listener)
    }

    /// Adds a listener named `name` in `scope` at `rank` (higher runs
    /// first, see [`Order`]); the returned disposer removes exactly this
    /// registration.
    pub fn insert_ranked(
        self: &Arc<Self>,
        scope: Scope,
        name: Arc<str>,
        rank: i32,
        listener: Arc<L>,
    ) -> Disposer {
        // Dropped after the lock (see `publish`).
        let stale;
        let key = {
            let mut regs = self.registrations.lock();
            let (key, entry) = Self::entry(&mut regs, scope, name, rank, None, listener);
            let change = if regs.constrained == 0 {
                let change = Self::add_ranked(Arc::make_mut(&mut regs.working), key, entry.clone());
                Self::record(&mut regs, key, entry);
                change
            } else {
                Self::record(&mut regs, key, entry);
                // A plain registration cannot fail: a conflict it completes
                // (a listener registered under a name older constraints
                // disagree about) is resolved leniently and logged.
                let ranks = Self::arranged(Self::ranked(&regs.base), true).unwrap_or_default();
                Self::rebuild(&mut regs, &ranks);
                Change::Rebuilt
            };
            stale = self.publish(&mut regs, change);
            key
        };
        drop(stale);
        self.disposer(key)
    }

    /// Adds a listener named `name` in `scope`, placed by `order` (resolved
    /// now, against the listeners registered in every scope).
    ///
    /// # Errors
    ///
    /// [`OrderError`] for a name no listener has, or a conflict; nothing is
    /// registered then.
    pub fn insert_ordered(
        self: &Arc<Self>,
        hook: &'static str,
        scope: Scope,
        name: Arc<str>,
        order: Order,
        listener: Arc<L>,
    ) -> Result<Disposer, OrderError> {
        if order.is_empty() {
            return Ok(self.insert_ranked(scope, name, order.rank(), listener));
        }
        // Dropped after the lock: a refused listener may own disposers of
        // this same list (see `publish`).
        let refused;
        let stale;
        let key = {
            let mut regs = self.registrations.lock();
            for (relation, target) in order.constraints() {
                // Constrained registrations are rare and O(n) anyway.
                if !regs.base.values().any(|e| e.name == *target) {
                    return Err(OrderError::UnknownListener {
                        hook,
                        listener: name,
                        relation: relation.as_str(),
                        target: target.clone(),
                        known: regs
                            .working
                            .chain()
                            .iter()
                            .map(|e| e.name.clone())
                            .collect(),
                    });
                }
            }
            let rank = order.rank();
            let (key, entry) =
                Self::entry(&mut regs, scope, name.clone(), rank, Some(order), listener);
            refused = entry.clone();
            let mut base = Self::ranked(&regs.base);
            base.push((key, &entry));
            let ranks = Self::arranged(base, false).map_err(|c| OrderError::Conflict {
                hook,
                listener: name,
                placing: c.placing,
                after: c.after,
                before: c.before,
            })?;
            Self::record(&mut regs, key, entry);
            Self::rebuild(&mut regs, &ranks);
            stale = self.publish(&mut regs, Change::Rebuilt);
            key
        };
        drop((stale, refused));
        Ok(self.disposer(key))
    }

    fn entry(
        regs: &mut Registrations<L, M>,
        scope: Scope,
        name: Arc<str>,
        rank: i32,
        order: Option<Order>,
        listener: Arc<L>,
    ) -> (Rank, Arc<Entry<L>>) {
        let id = regs.next_id;
        regs.next_id += 1;
        let entry = Entry {
            name,
            scope,
            rank,
            order,
            listener,
        };
        (base_rank(entry.rank, id), Arc::new(entry))
    }

    /// Adds `entry` to the indexes (not to the working snapshot).
    fn record(regs: &mut Registrations<L, M>, key: Rank, entry: Arc<Entry<L>>) {
        regs.constrained += usize::from(entry.constrained());
        regs.base.insert(key, entry);
    }

    /// Puts `entry` into its scope's list of `snapshot` at `rank`: O(log n)
    /// for a global listener, O(log n + k) for one of an agent with k.
    fn add_ranked(snapshot: &mut Snapshot<L, M>, rank: Rank, entry: Arc<Entry<L>>) -> Change<L> {
        let agent = match &entry.scope {
            Scope::Global => {
                snapshot.len += 1;
                snapshot.global.insert(rank, entry.clone());
                return Change::Added(rank, entry);
            }
            Scope::Agent(agent) => agent.clone(),
        };
        let slot = Slot::new(rank, entry);
        let run: Run<L> = match snapshot.agents.get(&agent) {
            Some(run) => {
                let at = run.partition_point(|s| s.rank < rank);
                Arc::new(
                    run[..at]
                        .iter()
                        .cloned()
                        .chain(std::iter::once(slot))
                        .chain(run[at..].iter().cloned())
                        .collect(),
                )
            }
            None => Arc::new(Own::One(slot)),
        };
        let change = Change::Agent {
            agent,
            run: Some(run),
            added: true,
        };
        Self::replay(snapshot, &change);
        change
    }

    /// Takes the listener ranked `rank` out of its scope's list of `snapshot`.
    fn remove_ranked(snapshot: &mut Snapshot<L, M>, rank: Rank, scope: &Scope) -> Change<L> {
        match scope {
            Scope::Global => {
                if snapshot.global.remove(&rank).is_none() {
                    return Change::Nothing;
                }
                snapshot.len -= 1;
                Change::Removed(rank)
            }
            Scope::Agent(agent) => {
                let Some(run) = snapshot.agents.get(agent) else {
                    return Change::Nothing;
                };
                if !run.iter().any(|s| s.rank == rank) {
                    return Change::Nothing;
                }
                let kept = (run.len() > 1)
                    .then(|| Arc::new(run.iter().filter(|s| s.rank != rank).cloned().collect()));
                let change = Change::Agent {
                    agent: agent.clone(),
                    run: kept,
                    added: false,
                };
                Self::replay(snapshot, &change);
                change
            }
        }
    }

    /// Makes `change` in `snapshot`: an agent's list set to the one the
    /// change carries (shared, not rebuilt), a global listener added or
    /// removed.
    fn replay(snapshot: &mut Snapshot<L, M>, change: &Change<L>) {
        match change {
            Change::Added(rank, entry) => {
                snapshot.len += 1;
                snapshot.global.insert(*rank, entry.clone());
            }
            Change::Removed(rank) => {
                if snapshot.global.remove(rank).is_some() {
                    snapshot.len -= 1;
                }
            }
            Change::Agent { agent, run, added } => {
                match run {
                    Some(run) => {
                        snapshot.agents.insert(agent.clone(), run.clone());
                    }
                    None => {
                        snapshot.agents.remove(agent);
                    }
                }
                if *added {
                    snapshot.len += 1;
                } else {
                    snapshot.len -= 1;
                }
            }
            Change::Nothing | Change::Rebuilt => {}
        }
    }

    /// Every listener with its base key (in no particular order).
    fn ranked(
        base: &HashMap<Rank, Arc<Entry<L>>, foldhash::fast::RandomState>,
    ) -> Vec<(Rank, &Arc<Entry<L>>)> {
        base.iter().map(|(key, entry)| (*key, entry)).collect()
    }

    /// The chain rank of every listener (by base key) when some have
    /// [`Order`] constraints: its place in the arranged order.
    fn arranged(
        mut base: Vec<(Rank, &Arc<Entry<L>>)>,
        lenient: bool,
    ) -> Result<HashMap<Rank, Rank>, Conflict> {
        base.sort_unstable_by_key(|(key, _)| *key);
        let (keys, entries): (Vec<Rank>, Vec<&Arc<Entry<L>>>) = base.into_iter().unzip();
        let at = arrange(
            entries.len(),
            |i| &entries[i].name,
            |i| entries[i].order.as_ref(),
            lenient,
        )?;
        Ok(at
            .into_iter()
            .enumerate()
            .map(|(place, i)| (keys[i], place as Rank))
            .collect())
    }

    /// Rebuilds the working snapshot from every listener, ranked by `ranks`
    /// (a listener missing from it keeps its base key). O(n).
    fn rebuild(regs: &mut Registrations<L, M>, ranks: &HashMap<Rank, Rank>) {
        let mut snapshot = Snapshot::empty(regs.working.point, regs.working.meta.clone());
        let mut ranked: Vec<(Rank, &Arc<Entry<L>>)> = regs
            .base
            .iter()
            .map(|(key, entry)| (ranks.get(key).copied().unwrap_or(*key), entry))
            .collect();
        ranked.sort_by_key(|(rank, _)| *rank);
        let mut agents: HashMap<AgentId, Vec<Slot<L>>> = HashMap::new();
        for (rank, entry) in ranked {
            match &entry.scope {
                Scope::Global => {
                    snapshot.global.insert(rank, entry.clone());
                }
                Scope::Agent(agent) => agents
                    .entry(agent.clone())
                    .or_default()
                    .push(Slot::new(rank, entry.clone())),
            }
        }
        snapshot.agents = agents
            .into_iter()
            .map(|(agent, run)| (agent, Arc::new(run.into_iter().collect())))
            .collect();
        snapshot.len = regs.base.len();
        regs.working = Arc::new(snapshot);
    }

    /// Publishes the working snapshot, in which `change` was just made, and
    /// takes the snapshot it replaces back as the next working one, made up
    /// to date by making `change` again. Unless a dispatch still holds the
    /// replaced snapshot, nothing else shares its nodes, so the next change
    /// is made in place: no path of the persistent maps is copied, and a
    /// change costs two in-place updates.
    ///
    /// Returns the threads' copies it emptied. The caller drops them after
    /// releasing the registrations' lock: a copy may hold the last reference
    /// to a disposed listener, and dropping a listener may run disposers it
    /// owns of this same list, which take that lock.
    #[must_use = "dropped after the registrations' lock is released"]
    fn publish(&self, regs: &mut Registrations<L, M>, change: Change<L>) -> Stale<L, M> {
        let global = match &change {
            Change::Added(..) | Change::Removed(_) | Change::Rebuilt => true,
            Change::Agent { .. } | Change::Nothing => false,
        };
        // A change of an agent's list leaves the global list as it was, so
        // the flat list a dispatch may have built for the published snapshot
        // still holds; after any other change the first dispatch builds it.
        let flat = match (global, self.published.load().flat.get()) {
            (false, Some(flat)) => OnceLock::from(flat.clone()),
            _ => OnceLock::new(),
        };
        let working = Arc::make_mut(&mut regs.working);
        working.flat = flat.clone();
        // A stamp of its own: lists agent ids remember from an earlier
        // snapshot are not taken for this one.
        working.stamp = next_stamp();
        self.len.store(working.len, Ordering::Release);
        // The working snapshot is published, and the one it replaces comes
        // back as the working one. Once it is swapped out, its count says
        // who holds it (a dispatch still running on it). Each thread copies
        // the new snapshot when it next dispatches; the old copies go now,
        // so a disposed listener is not kept alive by a thread that stopped
        // dispatching.
        let mut replaced = self.published.publish(regs.working.clone());
        if matches!(change, Change::Rebuilt) {
            // Rebuilt from scratch: the replaced one is of no use (dropped
            // with the copies, after the lock).
            return Some(replaced);
        }
        std::mem::swap(&mut regs.working, &mut replaced.previous);
        // Made up to date in place unless a dispatch still holds it (then
        // copied first: a few pointers, the nodes shared until changed).
        let next = Arc::make_mut(&mut regs.working);
        Self::replay(next, &change);
        next.flat = flat;
        Some(replaced)
    }

    fn disposer(self: &Arc<Self>, key: Rank) -> Disposer {
        let list: Weak<Self> = Arc::downgrade(self);
        Disposer::undo(list, key)
    }

    fn remove(&self, key: Rank) {
        // Dropped after the lock: the removed listener may own disposers of
        // this same list (see `publish`).
        let removed;
        let stale;
        {
            let mut regs = self.registrations.lock();
            let Some(entry) = regs.base.remove(&key) else {
                return;
            };
            removed = entry.clone();
            stale = self.remove_locked(&mut regs, key, entry);
        }
        drop((stale, removed));
    }

    fn remove_locked(
        &self,
        regs: &mut Registrations<L, M>,
        key: Rank,
        entry: Arc<Entry<L>>,
    ) -> Stale<L, M> {
        let was_constrained = regs.constrained > 0;
        regs.constrained -= usize::from(entry.constrained());
        let change = if was_constrained {
            // Back to base keys once no constraint is left.
            let ranks = if regs.constrained > 0 {
                Self::arranged(Self::ranked(&regs.base), true).unwrap_or_default()
            } else {
                HashMap::new()
            };
            Self::rebuild(regs, &ranks);
            Change::Rebuilt
        } else {
            Self::remove_ranked(Arc::make_mut(&mut regs.working), key, &entry.scope)
        };
        self.publish(regs, change)
    }

    /// Names of the listeners a dispatch for `agent` would reach, in order.
    pub fn names_for(&self, agent: Option<&AgentId>) -> Vec<Arc<str>> {
        self.view(agent)
            .entries
            .iter()
            .map(|e| e.name.clone())
            .collect()
    }

    /// How many listeners are registered, across every scope.
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// Whether no listener is registered in any scope (one atomic load).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<L: ?Sized + Send + Sync + 'static, M: Clone + Send + Sync + 'static> Undo
    for ListenerList<L, M>
{
    fn undo(&self, key: u128) {
        self.remove(key);
    }
}

impl<L: ?Sized + Send + Sync, M: Send + Sync> fmt::Debug for ListenerList<L, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let chain = self.published.load().chain();
        f.debug_list()
            .entries(chain.iter().map(|e| (&*e.name, &e.scope, e.rank)))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(view: &View<str>) -> Vec<&str> {
        view.entries.iter().map(|e| &*e.name).collect()
    }

    /// Registers a listener that is its own name.
    fn add(list: &Arc<ListenerList<str>>, scope: Scope, name: impl Into<Arc<str>>) -> Disposer {
        let name: Arc<str> = name.into();
        list.insert(scope, name.clone(), name)
    }

    fn add_at(list: &Arc<ListenerList<str>>, scope: Scope, name: &str, order: Order) -> Disposer {
        list.insert_ranked(scope, name.into(), order.rank(), name.into())
    }

    #[test]
    fn insertion_keeps_priority_then_registration_order() {
        let list = ListenerList::<str>::new();
        let _a = add(&list, Scope::Global, "a");
        let _b = add_at(&list, Scope::Global, "b", Order::EARLY);
        let _c = add(&list, Scope::Global, "c");
        let _d = add_at(&list, Scope::Global, "d", Order::ranked(-1));
        let _e = add_at(&list, Scope::Global, "e", Order::EARLY);
        assert_eq!(names(&list.view(None)), ["b", "e", "a", "c", "d"]);
    }

    #[test]
    fn extreme_priorities_keep_their_order() {
        let list = ListenerList::<str>::new();
        let _min = add_at(&list, Scope::Global, "min", Order::ranked(i32::MIN));
        let _max = add_at(&list, Scope::Global, "max", Order::ranked(i32::MAX));
        let _zero = add(&list, Scope::Global, "zero");
        assert_eq!(names(&list.view(None)), ["max", "zero", "min"]);
    }

    #[test]
    fn an_agent_view_merges_its_own_listeners_into_the_global_order() {
        let list = ListenerList::<str>::new();
        let (a, b) = (AgentId::new("a"), AgentId::new("b"));
        let _g1 = add(&list, Scope::Global, "g1");
        let _a1 = add(&list, Scope::Agent(a.clone()), "a1");
        let _b1 = add(&list, Scope::Agent(b.clone()), "b1");
        let _g2 = add_at(&list, Scope::Global, "g2", Order::LATE);
        let _a2 = add_at(&list, Scope::Agent(a.clone()), "a2", Order::EARLY);
        let _g3 = add(&list, Scope::Global, "g3");
        assert_eq!(names(&list.view(Some(&a))), ["a2", "g1", "a1", "g3", "g2"]);
        assert_eq!(names(&list.view(Some(&b))), ["g1", "b1", "g3", "g2"]);
        assert_eq!(names(&list.view(None)), ["g1", "g3", "g2"]);
        assert_eq!(
            names(&list.view(Some(&AgentId::new("nobody")))),
            ["g1", "g3", "g2"]
        );
        assert_eq!(list.len(), 6);
    }

    #[test]
    fn a_view_is_a_snapshot_and_disposal_touches_only_its_scope() {
        let list = ListenerList::<str>::new();
        let a = AgentId::new("a");
        let _g = add(&list, Scope::Global, "g");
        // No agent-scoped listener yet: every agent reads the global list.
        assert!(list.view(Some(&a)).same_as(&list.view(None)));

        let only_a = add(&list, Scope::Agent(a.clone()), "only-a");
        let first = list.view(Some(&a));
        assert_eq!(names(&first), ["g", "only-a"]);
        assert!(
            first.same_as(&list.view(Some(&a))),
            "unchanged until a change"
        );
        assert_eq!(names(&list.view(Some(&AgentId::new("b")))), ["g"]);

        only_a.dispose();
        let after = list.view(Some(&a));
        assert!(!after.same_as(&first), "a new snapshot after a change");
        assert_eq!(names(&after), ["g"]);
        assert_eq!(names(&first), ["g", "only-a"], "an old view is immutable");
        assert!(
            list.published.load().agents.is_empty(),
            "no empty agent list is kept"
        );
    }

    #[test]
    fn many_agents_each_see_only_their_own() {
        let list = ListenerList::<str>::new();
        let agents: Vec<AgentId> = (0..200)
            .map(|i| AgentId::new(format!("agent-{i}")))
            .collect();
        let _global = add(&list, Scope::Global, "global");
        let mut keep: Vec<Disposer> = agents
            .iter()
            .map(|a| add(&list, Scope::Agent(a.clone()), a.as_str()))
            .collect();
        for agent in &agents {
            assert_eq!(names(&list.view(Some(agent))), ["global", agent.as_str()]);
        }
        // Dispose every other one; the rest keep theirs.
        for (i, disposer) in keep.iter().enumerate() {
            if i % 2 == 0 {
                disposer.dispose();
            }
        }
        for (i, agent) in agents.iter().enumerate() {
            let expected: &[&str] = if i % 2 == 0 {
                &["global"]
            } else {
                &["global", agent.as_str()]
            };
            assert_eq!(names(&list.view(Some(agent))), expected);
        }
        assert_eq!(list.len(), 101);
        keep.drain(..).for_each(|d| d.dispose());
        assert_eq!(list.len(), 1);
    }

    #[test]
    fn constraints_rank_across_scopes_and_base_keys_return_without_them() {
        let list = ListenerList::<str>::new();
        let a = AgentId::new("a");
        let _x = add(&list, Scope::Global, "x");
        let _own = add(&list, Scope::Agent(a.clone()), "own");
        let before = list
            .insert_ordered(
                "unit/order",
                Scope::Agent(a.clone()),
                "first".into(),
                Order::before("x"),
                Arc::from("first"),
            )
            .expect("x is registered");
        // A later plain listener named `x` is still after `first`.
        let _x2 = add(&list, Scope::Global, "x");
        let _late = add(&list, Scope::Global, "late");
        assert_eq!(
            names(&list.view(Some(&a))),
            ["first", "x", "own", "x", "late"]
        );
        before.dispose();
        assert_eq!(names(&list.view(Some(&a))), ["x", "own", "x", "late"]);
        // Without constraints again, plain registrations land by base key.
        let _early = add_at(&list, Scope::Agent(a.clone()), "early", Order::EARLY);
        let _last = add(&list, Scope::Global, "last");
        assert_eq!(
            names(&list.view(Some(&a))),
            ["early", "x", "own", "x", "late", "last"]
        );
    }

    #[test]
    fn a_disposed_listener_is_freed_though_threads_copied_the_snapshot() {
        let list = ListenerList::<str>::new();
        let marker: Arc<str> = Arc::from("m");
        let disposer = list.insert(Scope::Global, "m".into(), marker.clone());
        std::thread::scope(|s| {
            s.spawn(|| assert_eq!(names(&list.view(None)), ["m"]));
        });
        assert_eq!(names(&list.view(None)), ["m"]);
        assert!(Arc::strong_count(&marker) > 1);
        disposer.dispose();
        assert_eq!(Arc::strong_count(&marker), 1, "no thread's copy keeps it");
        assert!(names(&list.view(None)).is_empty());
    }

    /// The names a dispatch for `agent` should run, given the live
    /// registrations (number, scope, priority).
    fn expected_names(
        live: &[(usize, Scope, i32, Disposer)],
        agent: Option<&AgentId>,
    ) -> Vec<String> {
        let mut expected: Vec<&(usize, Scope, i32, Disposer)> = live
            .iter()
            .filter(|(_, scope, _, _)| scope.reaches(agent))
            .collect();
        expected.sort_by_key(|(n, _, priority, _)| (std::cmp::Reverse(*priority), *n));
        expected.iter().map(|(n, ..)| n.to_string()).collect()
    }

    fn owned_names(view: &View<str>) -> Vec<String> {
        names(view).into_iter().map(str::to_owned).collect()
    }

    proptest::proptest! {
        /// Whatever registrations and disposals happen, in any scope, a
        /// dispatch for an agent runs exactly the global listeners and its
        /// own, in priority then registration order; and a view taken
        /// between the changes (a dispatch in progress, which keeps the
        /// snapshot it started with shared) still shows what it showed.
        #[test]
        fn views_match_the_filtered_base_order(
            steps in proptest::collection::vec(
                (0u8..4, -2i32..3, proptest::bool::weighted(0.3), 0usize..64, proptest::bool::weighted(0.2)),
                1..80,
            )
        ) {
            let list = ListenerList::<str>::new();
            let agents = [AgentId::new("a"), AgentId::new("b"), AgentId::new("c")];
            // (registration number, scope, priority, disposer) of the live ones.
            let mut live: Vec<(usize, Scope, i32, Disposer)> = Vec::new();
            // Views held across later changes, with what they showed.
            let mut held: Vec<(View<str>, Vec<String>)> = Vec::new();
            for (n, (scope, priority, dispose, which, hold)) in steps.into_iter().enumerate() {
                if hold {
                    let agent = agents.get(which % 4);
                    let view = list.view(agent);
                    let shown = owned_names(&view);
                    proptest::prop_assert_eq!(&shown, &expected_names(&live, agent));
                    held.push((view, shown));
                }
                if dispose && !live.is_empty() {
                    let (_, _, _, disposer) = live.remove(which % live.len());
                    disposer.dispose();
                    continue;
                }
                let scope = match scope {
                    0 => Scope::Global,
                    i => Scope::Agent(agents[usize::from(i) - 1].clone()),
                };
                let name = n.to_string();
                let name: Arc<str> = Arc::from(name.as_str());
                live.push((n, scope.clone(), priority, list.insert_ranked(scope, name.clone(), priority, name)));
            }
            for agent in [None, Some(&agents[0]), Some(&agents[1]), Some(&agents[2])] {
                let view = list.view(agent);
                let expected = expected_names(&live, agent);
                proptest::prop_assert_eq!(list.reaches_any(agent), !expected.is_empty());
                proptest::prop_assert_eq!(owned_names(&view), expected);
            }
            for (view, shown) in &held {
                proptest::prop_assert_eq!(&owned_names(view), shown);
            }
            proptest::prop_assert_eq!(list.len(), live.len());
        }
    }

    /// A dispatch reads this thread's copy of the snapshot: after the first,
    /// no dispatch loads the published snapshot or makes a copy (no lock but
    /// the thread's own, no shared count written), until a change.
    #[test]
    fn a_dispatch_makes_no_copy_until_a_change() {
        let list = ListenerList::<str>::new();
        let a = AgentId::new("a");
        let _g = add(&list, Scope::Global, "g");
        let _own = add(&list, Scope::Agent(a.clone()), "own");
        let first = list.view(Some(&a));
        let made = list.published.copies_made();
        for _ in 0..100 {
            assert!(first.same_as(&list.view(Some(&a))));
            assert!(list.reaches_any(None));
        }
        assert_eq!(list.published.copies_made(), made);
        let _later = add(&list, Scope::Global, "later");
        assert_eq!(names(&list.view(Some(&a))), ["g", "own", "later"]);
        assert_eq!(list.published.copies_made(), made + 1);
    }

    /// An agent id remembers its list for the snapshot it read it from: no
    /// lookup in the agents' map until a change (of any agent's list), and
    /// another id with the same text finds the same listeners.
    #[test]
    fn an_id_remembers_its_list_until_a_change() {
        let list = ListenerList::<str>::new();
        let a = AgentId::new("a");
        let _g = add(&list, Scope::Global, "g");
        let _own = add(&list, Scope::Agent(a.clone()), "own");
        assert_eq!(names(&list.view(Some(&a))), ["g", "own"]);
        let looked_up = a.memo().lookups();
        for _ in 0..100 {
            assert_eq!(names(&list.view(Some(&a.clone()))), ["g", "own"]);
        }
        assert_eq!(a.memo().lookups(), looked_up, "remembered");
        let twin = AgentId::new("a");
        assert_eq!(names(&list.view(Some(&twin))), ["g", "own"]);
        assert_eq!(twin.memo().lookups(), 1);

        let _b = add(&list, Scope::Agent(AgentId::new("b")), "b");
        assert_eq!(names(&list.view(Some(&a))), ["g", "own"]);
        assert_eq!(
            a.memo().lookups(),
            looked_up + 1,
            "a new snapshot: looked up"
        );
        let _mine = add(&list, Scope::Agent(a.clone()), "mine");
        assert_eq!(names(&list.view(Some(&a))), ["g", "own", "mine"]);
        assert_eq!(names(&list.view(Some(&twin))), ["g", "own", "mine"]);

        // An agent without a list of its own remembers that too.
        let c = AgentId::new("c");
        for _ in 0..10 {
            assert_eq!(names(&list.view(Some(&c))), ["g"]);
        }
        assert_eq!(c.memo().lookups(), 1);
    }

    /// What an id remembers does not keep a disposed listener alive.
    #[test]
    fn a_disposed_agent_listener_is_freed_though_its_id_remembered_the_list() {
        let list = ListenerList::<str>::new();
        let a = AgentId::new("a");
        let marker: Arc<str> = Arc::from("m");
        let disposer = list.insert(Scope::Agent(a.clone()), "m".into(), marker.clone());
        assert_eq!(names(&list.view(Some(&a))), ["m"]);
        assert_eq!(names(&list.view(Some(&a))), ["m"]);
        disposer.dispose();
        assert_eq!(
            Arc::strong_count(&marker),
            1,
            "the id's memo keeps no listener"
        );
        assert!(names(&list.view(Some(&a))).is_empty());
    }

    proptest::proptest! {
        /// Several hook points (more than an id remembers at once) changed
        /// in any order, each read after every change through the same ids:
        /// what an id remembers never shows a list other than its own in
        /// the snapshot read, and an id with the same text that remembers
        /// nothing agrees.
        #[test]
        fn remembered_lists_follow_every_change(
            steps in proptest::collection::vec(
                (0usize..6, 0u8..4, proptest::bool::weighted(0.3), 0usize..64),
                1..60,
            )
        ) {
            let lists: Vec<Arc<ListenerList<str>>> = (0..6).map(|_| ListenerList::new()).collect();
            let agents = [AgentId::new("a"), AgentId::new("b"), AgentId::new("c")];
            let mut live: Vec<Vec<(usize, Scope, i32, Disposer)>> = (0..6).map(|_| Vec::new()).collect();
            for (n, (at, scope, dispose, which)) in steps.into_iter().enumerate() {
                let (list, changed) = (&lists[at], &mut live[at]);
                if dispose && !changed.is_empty() {
                    let (_, _, _, disposer) = changed.remove(which % changed.len());
                    disposer.dispose();
                } else {
                    let scope = match scope {
                        0 => Scope::Global,
                        i => Scope::Agent(agents[usize::from(i) - 1].clone()),
                    };
                    let name: Arc<str> = Arc::from(n.to_string().as_str());
                    changed.push((n, scope.clone(), 0, list.insert(scope, name.clone(), name)));
                }
                for (list, live) in lists.iter().zip(&live) {
                    for agent in &agents {
                        let expected = expected_names(live, Some(agent));
                        proptest::prop_assert_eq!(owned_names(&list.view(Some(agent))), expected.clone());
                        let twin = AgentId::new(agent.as_str());
                        proptest::prop_assert_eq!(owned_names(&list.view(Some(&twin))), expected);
                    }
                }
            }
        }
    }

    /// One thread registers listeners (globally and for an agent) while
    /// others dispatch: once a registration returned, every dispatch that
    /// starts after it sees it, and every view is a whole snapshot (the
    /// first k registrations in order, nothing missing in between).
    #[test]
    fn dispatches_on_other_threads_see_each_change_once_it_returned() {
        use std::sync::atomic::AtomicBool;
        const CHANGES: usize = 300;
        let list = ListenerList::<str>::new();
        let a = AgentId::new("a");
        let returned = AtomicUsize::new(0);
        let done = AtomicBool::new(false);
        let mut keep = Vec::new();
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    while !done.load(Ordering::SeqCst) {
                        let floor = returned.load(Ordering::SeqCst);
                        let view = list.view(Some(&a));
                        let seen: Vec<usize> = names(&view)
                            .iter()
                            .map(|n| n.parse().expect("a number"))
                            .collect();
                        assert!(seen.len() >= floor, "{} seen after {floor}", seen.len());
                        assert!(
                            seen.iter().copied().eq(0..seen.len()),
                            "a whole snapshot in order: {seen:?}"
                        );
                    }
                });
            }
            for n in 0..CHANGES {
                // Every third one is the agent's own (merged in rank order).
                let scope = if n % 3 == 0 {
                    Scope::Agent(a.clone())
                } else {
                    Scope::Global
                };
                keep.push(add(&list, scope, n.to_string()));
                returned.store(n + 1, Ordering::SeqCst);
            }
            done.store(true, Ordering::SeqCst);
        });
        assert_eq!(names(&list.view(Some(&a))).len(), CHANGES);
    }

    #[test]
    fn removing_an_unknown_key_changes_nothing() {
        let list = ListenerList::<str>::new();
        let _a = add(&list, Scope::Global, "a");
        let before = list.view(None);
        list.remove(9_999);
        assert!(before.same_as(&list.view(None)));
    }
}
