//! What one dispatch reads: an immutable snapshot of a hook point's
//! listeners, indexed by scope, and the view of it for one agent.
//!
//! The snapshot keeps the global listeners in one list and each agent's own
//! listeners in a list of its own, every list sorted by [`Rank`] (the chain
//! order across all scopes). A dispatch for agent A walks the global list and
//! A's list side by side, taking the lower rank each step: the merged order
//! without building it, so the cost of a dispatch does not depend on how
//! many other agents have listeners.

use std::sync::{Arc, OnceLock};

use super::AgentId;
use super::entry::Entry;
use super::memo::next_stamp;

/// A listener's place in the chain order of its hook point, across every
/// scope: lower runs first (outer).
///
/// Without [`Order`](super::Order) constraints it is the base key (priority
/// descending, then registration order), which never changes once given, so
/// adding or removing a listener touches no other listener's rank.
pub(crate) type Rank = u128;

/// The base key of a listener: higher rank first, then registration order.
///
/// Below 2^96 (the descending priority takes 32 bits above the 64 of the
/// registration number), so a [`Pos`] holds it with an agent index in 16 bytes.
pub(crate) fn base_rank(rank: i32, id: u64) -> Rank {
    let descending = (i64::from(i32::MAX) - i64::from(rank)) as u64;
    (Rank::from(descending) << 64) | Rank::from(id)
}

/// One listener in a list, with its rank, and its listener beside the
/// entry: a dispatch calls the listener without reading the entry (for an
/// agent's list, one cache line fewer when many agents take turns).
pub(crate) struct Slot<L: ?Sized> {
    pub(crate) rank: Rank,
    pub(crate) entry: Arc<Entry<L>>,
    listener: Arc<L>,
}

impl<L: ?Sized> Slot<L> {
    pub(crate) fn new(rank: Rank, entry: Arc<Entry<L>>) -> Self {
        Self {
            rank,
            listener: entry.listener.clone(),
            entry,
        }
    }
}

impl<L: ?Sized> Clone for Slot<L> {
    fn clone(&self) -> Self {
        Self {
            rank: self.rank,
            entry: self.entry.clone(),
            listener: self.listener.clone(),
        }
    }
}

/// Listeners by rank, as one list (a snapshot's flat global list).
pub(crate) type Flat<L> = Arc<[Slot<L>]>;

/// One agent's own listeners, by rank. Small (an agent has a few listeners),
/// so it is copied on write.
pub(crate) type Run<L> = Arc<Own<L>>;

/// The listeners of one agent's list: most often one, kept inline (beside
/// the list's count, so a dispatch reads one line for it).
pub(crate) enum Own<L: ?Sized> {
    One(Slot<L>),
    Many(Box<[Slot<L>]>),
}

impl<L: ?Sized> std::ops::Deref for Own<L> {
    type Target = [Slot<L>];

    #[inline]
    fn deref(&self) -> &[Slot<L>] {
        match self {
            Own::One(slot) => std::slice::from_ref(slot),
            Own::Many(slots) => slots,
        }
    }
}

impl<L: ?Sized> FromIterator<Slot<L>> for Own<L> {
    fn from_iter<I: IntoIterator<Item = Slot<L>>>(slots: I) -> Self {
        let slots: Vec<Slot<L>> = slots.into_iter().collect();
        match <[Slot<L>; 1]>::try_from(slots) {
            Ok([one]) => Own::One(one),
            Err(slots) => Own::Many(slots.into_boxed_slice()),
        }
    }
}

/// Each agent's own listeners: a persistent map, hashed with a fast seeded
/// hash (every dispatch for an agent looks its list up).
pub(crate) type AgentRuns<L> = imbl::GenericHashMap<
    AgentId,
    Run<L>,
    foldhash::fast::RandomState,
    imbl::shared_ptr::DefaultSharedPtr,
>;

/// Every listener of a hook point at one moment, with the hook's shared data.
pub(crate) struct Snapshot<L: ?Sized, M> {
    /// The global listeners, by rank (a persistent B-tree: O(log n) to
    /// change one, and as many to step to the next).
    pub(crate) global: imbl::OrdMap<Rank, Arc<Entry<L>>>,
    /// Each agent's own listeners, by rank (persistent map: O(log n) to
    /// change one agent's list).
    pub(crate) agents: AgentRuns<L>,
    /// How many listeners there are, across every scope.
    pub(crate) len: usize,
    /// The global listeners as a flat list, by rank, when there are at most
    /// [`FLAT_MAX`] of them (built once by the first dispatch after a change
    /// of the global list, on whichever thread, so a run of registrations
    /// builds none): a dispatch then steps to the next listener by index
    /// instead of searching the tree. Past that size the tree is walked, so
    /// a change stays O(log n). Decided (built, or `None`) in every
    /// snapshot a dispatch reads: a thread's copy is made after it.
    pub(crate) flat: OnceLock<Option<Flat<L>>>,
    /// The hook point this snapshot is of (unique in the process).
    pub(crate) point: u64,
    /// This snapshot's own stamp, set when it is published (unique in the
    /// process): what an agent id's memo of its list is checked against.
    pub(crate) stamp: u64,
    pub(crate) meta: M,
}

/// The most global listeners a snapshot also keeps as a flat list.
pub(crate) const FLAT_MAX: usize = 256;

impl<L: ?Sized, M: Clone> Clone for Snapshot<L, M> {
    fn clone(&self) -> Self {
        Self {
            global: self.global.clone(),
            agents: self.agents.clone(),
            flat: self.flat.clone(),
            len: self.len,
            point: self.point,
            stamp: self.stamp,
            meta: self.meta.clone(),
        }
    }
}

impl<L: ?Sized, M> Snapshot<L, M> {
    /// A snapshot of hook point `point` without listeners.
    pub(crate) fn empty(point: u64, meta: M) -> Self {
        Self {
            global: imbl::OrdMap::new(),
            agents: AgentRuns::default(),
            flat: OnceLock::from(Some(Arc::from(Vec::new()))),
            len: 0,
            point,
            stamp: next_stamp(),
            meta,
        }
    }

    /// Builds the flat list of the global listeners from the tree unless it
    /// is built: a list when they are few (O(n) with n at most
    /// [`FLAT_MAX`]), none otherwise.
    pub(crate) fn flatten(&self) {
        self.flat.get_or_init(|| {
            (self.global.len() <= FLAT_MAX).then(|| {
                self.global
                    .iter()
                    .map(|(rank, entry)| Slot::new(*rank, entry.clone()))
                    .collect()
            })
        });
    }

    /// Every listener in chain order (for messages and `Debug`, not dispatch).
    pub(crate) fn chain(&self) -> Vec<Arc<Entry<L>>> {
        let mut all: Vec<(Rank, &Arc<Entry<L>>)> = self
            .global
            .iter()
            .map(|(rank, entry)| (*rank, entry))
            .chain(
                self.agents
                    .values()
                    .flat_map(|run| run.iter().map(|slot| (slot.rank, &slot.entry))),
            )
            .collect();
        all.sort_by_key(|(rank, _)| *rank);
        all.into_iter().map(|(_, entry)| entry.clone()).collect()
    }
}

/// A position in a [`View`]: how far along the global list (an index into
/// the flat list, or without one the lowest rank not yet passed) and the
/// agent's list (an index) the walk is.
///
/// Packed in 16 bytes aligned to 8 (every future of a chain holds one, and
/// a listener's boxed future that stays small is cheap to allocate): the
/// global position in the low 96 bits (a rank is below 2^96), the agent
/// index in the high 32.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pos {
    /// The agent index (high 32 bits) and the top 32 bits of the global
    /// position.
    high: u64,
    /// The low 64 bits of the global position.
    low: u64,
}

/// The listeners one dispatch runs: the global list and the agent's own list
/// of one snapshot, merged as they are walked.
pub(crate) struct Entries<L: ?Sized, M> {
    snapshot: Arc<Snapshot<L, M>>,
    agent: Option<Run<L>>,
}

impl<L: ?Sized, M> Clone for Entries<L, M> {
    fn clone(&self) -> Self {
        Self {
            snapshot: self.snapshot.clone(),
            agent: self.agent.clone(),
        }
    }
}

impl<L: ?Sized, M> Entries<L, M> {
    /// The lists a walk steps through, read once for the whole walk.
    #[inline(always)]
    pub(crate) fn lists(&self) -> Lists<'_, L> {
        let global = match self.snapshot.flat.get() {
            Some(Some(flat)) => Global::Flat(flat),
            _ => Global::Tree(&self.snapshot.global),
        };
        Lists {
            global,
            own: self.agent.as_deref().map_or(&[], |own| own),
        }
    }

    /// The listener at `pos` (its entry, and the listener itself) and the
    /// position after it; `None` past the last.
    #[inline]
    pub(crate) fn at(&self, pos: Pos) -> Option<(&Entry<L>, &L, Pos)> {
        self.lists().at(pos)
    }

    /// The listeners in order.
    pub(crate) fn iter(&self) -> Iter<'_, L> {
        Iter {
            lists: self.lists(),
            pos: Pos::default(),
        }
    }
}

/// The global list of a snapshot as a walk reads it.
enum Global<'a, L: ?Sized> {
    /// Flat: a position's global part is an index into it.
    Flat(&'a [Slot<L>]),
    /// A tree: a position's global part is the lowest rank not yet passed.
    Tree(&'a imbl::OrdMap<Rank, Arc<Entry<L>>>),
}

/// The two lists of one view, merged as a walk steps through them: what a
/// walk reads at each step, looked up once before it.
pub(crate) struct Lists<'a, L: ?Sized> {
    global: Global<'a, L>,
    own: &'a [Slot<L>],
}

impl<'a, L: ?Sized> Lists<'a, L> {
    /// The listener at `pos` (its entry, and the listener itself) and the
    /// position after it; `None` past the last.
    #[inline(always)]
    pub(crate) fn at(&self, pos: Pos) -> Option<(&'a Entry<L>, &'a L, Pos)> {
        let own = self.own.get(pos.agent());
        let flat = match self.global {
            Global::Flat(flat) => flat,
            Global::Tree(tree) => return Self::at_in_tree(tree, pos, own),
        };
        // With a flat list the global position is an index into it, below
        // `FLAT_MAX`: all in `low`.
        let global = usize::try_from(pos.low).ok().and_then(|i| flat.get(i));
        match (global, own) {
            (Some(g), Some(a)) if a.rank < g.rank => {
                Some((&a.entry, &*a.listener, pos.next_agent()))
            }
            (Some(g), _) => Some((
                &g.entry,
                &*g.listener,
                Pos {
                    low: pos.low + 1,
                    ..pos
                },
            )),
            (None, Some(a)) => Some((&a.entry, &*a.listener, pos.next_agent())),
            (None, None) => None,
        }
    }

    /// [`at`](Self::at) without a flat list: the global position is the
    /// lowest rank not yet passed.
    fn at_in_tree(
        tree: &'a imbl::OrdMap<Rank, Arc<Entry<L>>>,
        pos: Pos,
        own: Option<&'a Slot<L>>,
    ) -> Option<(&'a Entry<L>, &'a L, Pos)> {
        let global = tree
            .get_next(&pos.global())
            .map(|(rank, entry)| (*rank, &**entry, &*entry.listener));
        match (global, own) {
            (Some((rank, _, _)), Some(a)) if a.rank < rank => {
                Some((&a.entry, &*a.listener, pos.next_agent()))
            }
            (Some((rank, entry, listener)), _) => {
                Some((entry, listener, pos.with_global(rank + 1)))
            }
            (None, Some(a)) => Some((&a.entry, &*a.listener, pos.next_agent())),
            (None, None) => None,
        }
    }
}

impl Pos {
    const GLOBAL_HIGH: u64 = u32::MAX as u64;

    #[inline]
    fn global(self) -> Rank {
        (Rank::from(self.high & Self::GLOBAL_HIGH) << 64) | Rank::from(self.low)
    }

    #[inline]
    fn agent(self) -> usize {
        // At most 32 bits: fits any `usize` this crate builds for.
        (self.high >> 32) as usize
    }

    #[inline]
    fn with_global(self, global: Rank) -> Self {
        debug_assert!(global >> 96 == 0, "a rank is below 2^96");
        Self {
            // The two parts of the rank; the truncations are the point.
            high: (self.high & !Self::GLOBAL_HIGH) | ((global >> 64) as u64 & Self::GLOBAL_HIGH),
            low: global as u64,
        }
    }

    #[inline]
    fn next_agent(self) -> Self {
        // An agent has fewer than 2^32 listeners of one hook point.
        Self {
            high: self.high + (1 << 32),
            ..self
        }
    }
}

/// The listeners of [`Entries`] in order.
pub(crate) struct Iter<'a, L: ?Sized> {
    lists: Lists<'a, L>,
    pos: Pos,
}

impl<'a, L: ?Sized> Iterator for Iter<'a, L> {
    type Item = &'a Entry<L>;

    fn next(&mut self) -> Option<Self::Item> {
        let (entry, _, next) = self.lists.at(self.pos)?;
        self.pos = next;
        Some(entry)
    }
}

/// What one dispatch reads: its listeners and the hook's shared data `M`.
/// Two pointers; cloning it copies no listener.
pub struct View<L: ?Sized, M = ()> {
    pub(crate) entries: Entries<L, M>,
}

impl<L: ?Sized, M> Clone for View<L, M> {
    fn clone(&self) -> Self {
        Self {
            entries: self.entries.clone(),
        }
    }
}

impl<L: ?Sized + Send + Sync + 'static, M> View<L, M> {
    /// The view of `snapshot` for a dispatch made for `agent`.
    #[inline]
    pub(crate) fn of(snapshot: Arc<Snapshot<L, M>>, agent: Option<&AgentId>) -> Self {
        // Decided before any walk, and never after: a position is an index
        // with a flat list and a rank without one.
        debug_assert!(
            snapshot.flat.get().is_some(),
            "a view reads a snapshot whose flat list was decided"
        );
        let agent = match agent {
            // Remembered by the id for this snapshot, or looked up.
            Some(agent) if !snapshot.agents.is_empty() => {
                agent.memo().list(snapshot.point, snapshot.stamp, || {
                    snapshot.agents.get(agent).cloned()
                })
            }
            _ => None,
        };
        Self {
            entries: Entries { snapshot, agent },
        }
    }
}

impl<L: ?Sized, M> View<L, M> {
    /// The listeners, in the order a dispatch runs them: each with the
    /// name it was registered under.
    pub fn listeners(&self) -> impl Iterator<Item = (&Arc<str>, &L)> {
        self.entries
            .iter()
            .map(|entry| (&entry.name, &*entry.listener))
    }

    /// The hook's shared data.
    #[inline]
    pub(crate) fn meta(&self) -> &M {
        &self.entries.snapshot.meta
    }

    /// How many handles there are on this view's snapshot.
    #[cfg(test)]
    pub(crate) fn holders(&self) -> usize {
        Arc::strong_count(&self.entries.snapshot)
    }

    /// Whether two views read the same snapshot for the same agent list.
    #[inline]
    pub(crate) fn same_as(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.entries.snapshot, &other.entries.snapshot)
            && match (&self.entries.agent, &other.entries.agent) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}
