//! What an agent id remembers of its own listener lists.
//!
//! A dispatch made for an agent looks the agent's own list up in the hook
//! point's snapshot: a hashed, persistent map. With many agents that map is
//! larger than a core's cache, and its nodes are in hash order, so each
//! lookup reads lines no other call brought in. The id a call carries is
//! different: the call has just cloned it (its count is in cache whichever
//! agent it is, in whatever order agents take turns). So the id keeps, in
//! the same allocation, the list each of a few hook points last gave it,
//! stamped with the snapshot it came from; a dispatch on that same snapshot
//! takes it from there without the map.
//!
//! The map stays the authority: a remembered list is used only for the
//! snapshot it was read from (every published snapshot has a stamp of its
//! own, never reused), and it is held weakly, so a disposed listener is not
//! kept alive by an id that stopped calling.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

/// A stamp no snapshot has: the value of a slot that remembers nothing.
const NO_STAMP: u64 = 0;

/// The stamp of a new snapshot, or the identity of a new hook point: unique
/// in the process (a 64-bit count never wraps).
pub(crate) fn next_stamp() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(NO_STAMP + 1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// How many hook points an id remembers a list for at once (pre- and
/// post-execute listeners for an agent, and a little room).
const WAYS: usize = 4;

/// The lists an [`AgentId`](super::AgentId) remembers.
#[derive(Default)]
pub(crate) struct Memo {
    ways: Mutex<Ways>,
    /// How many times a list was looked up rather than remembered.
    #[cfg(test)]
    lookups: std::sync::atomic::AtomicUsize,
}

// The lock is held only to read or replace whole entries and to look the
// agent's list up in a snapshot's map (no listener or host code runs under
// it), so a panic can leave no entry half-written: the memo stays usable
// after one (see `AgentId`'s unwind safety).
impl std::panic::RefUnwindSafe for Memo {}
impl std::panic::UnwindSafe for Memo {}

#[derive(Default)]
struct Ways {
    slots: [Remembered; WAYS],
    /// The slot the next hook point new to this id takes.
    next: usize,
}

#[derive(Default)]
struct Remembered {
    /// The hook point this slot is for.
    point: u64,
    /// The snapshot the list was read from ([`NO_STAMP`]: none).
    stamp: u64,
    /// The agent's list in that snapshot (`None`: it had none there).
    list: Option<Weak<dyn Any + Send + Sync>>,
}

impl Memo {
    /// The agent's list in the snapshot `stamp` of hook point `point`: the
    /// remembered one when it was read from that snapshot, or else what
    /// `look_up` finds (then remembered).
    ///
    /// Never waits: when another thread is reading this id's memo at the
    /// same moment, this one looks the list up itself.
    #[inline]
    pub(crate) fn list<R: Any + Send + Sync>(
        &self,
        point: u64,
        stamp: u64,
        look_up: impl FnOnce() -> Option<Arc<R>>,
    ) -> Option<Arc<R>> {
        #[cfg(test)]
        let look_up = || {
            self.lookups.fetch_add(1, Ordering::Relaxed);
            look_up()
        };
        let Some(mut ways) = self.ways.try_lock() else {
            return look_up();
        };
        if let Some(slot) = ways.slots.iter().find(|s| s.point == point)
            && slot.stamp == stamp
        {
            match &slot.list {
                None => return None,
                // The snapshot a dispatch reads holds its lists, so for a
                // matching stamp the upgrade succeeds and the type is `R`
                // (stamps are unique); were either not so, it is looked up.
                Some(list) => {
                    if let Some(list) = list.upgrade().and_then(|l| l.downcast::<R>().ok()) {
                        return Some(list);
                    }
                }
            }
        }
        let found = look_up();
        let at = match ways.slots.iter().position(|s| s.point == point) {
            Some(at) => at,
            None => {
                let at = ways.next;
                ways.next = (at + 1) % WAYS;
                at
            }
        };
        ways.slots[at] = Remembered {
            point,
            stamp,
            list: found
                .as_ref()
                .map(|list| Arc::downgrade(list) as Weak<dyn Any + Send + Sync>),
        };
        found
    }

    /// How many times a list was looked up rather than remembered.
    #[cfg(test)]
    pub(crate) fn lookups(&self) -> usize {
        self.lookups.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_remembered_for_its_snapshot_only() {
        let memo = Memo::default();
        let (point, first, second) = (next_stamp(), next_stamp(), next_stamp());
        let lookups = std::cell::Cell::new(0);
        let look_up = |list: &Arc<u32>| {
            lookups.set(lookups.get() + 1);
            Some(list.clone())
        };
        let list = Arc::new(7u32);
        assert_eq!(
            memo.list(point, first, || look_up(&list)),
            Some(list.clone())
        );
        assert_eq!(
            memo.list(point, first, || look_up(&list)),
            Some(list.clone())
        );
        assert_eq!(lookups.get(), 1, "the second read is remembered");
        let other = Arc::new(8u32);
        assert_eq!(
            memo.list(point, second, || look_up(&other)),
            Some(other.clone())
        );
        assert_eq!(lookups.get(), 2, "a new snapshot is looked up again");
    }

    #[test]
    fn having_no_list_is_remembered_too() {
        let memo = Memo::default();
        let (point, stamp) = (next_stamp(), next_stamp());
        let mut lookups = 0;
        for _ in 0..3 {
            let found: Option<Arc<u32>> = memo.list(point, stamp, || {
                lookups += 1;
                None
            });
            assert_eq!(found, None);
        }
        assert_eq!(lookups, 1);
    }

    #[test]
    fn a_remembered_list_is_held_weakly() {
        let memo = Memo::default();
        let (point, stamp) = (next_stamp(), next_stamp());
        let list = Arc::new(String::from("listeners"));
        memo.list(point, stamp, || Some(list.clone()));
        let weak = Arc::downgrade(&list);
        drop(list);
        assert!(weak.upgrade().is_none(), "the memo keeps no list alive");
        // Read again for the same stamp: the list is gone, so it is looked up.
        let again = Arc::new(String::from("again"));
        assert_eq!(
            memo.list(point, stamp, || Some(again.clone())),
            Some(again.clone())
        );
    }

    #[test]
    fn each_hook_point_keeps_its_own_slot() {
        let memo = Memo::default();
        let points: Vec<u64> = (0..WAYS).map(|_| next_stamp()).collect();
        let stamp = next_stamp();
        let lists: Vec<Arc<usize>> = (0..WAYS).map(Arc::new).collect();
        for (point, list) in points.iter().zip(&lists) {
            memo.list(*point, stamp, || Some(list.clone()));
        }
        for (point, list) in points.iter().zip(&lists) {
            let found = memo.list(*point, stamp, || panic!("remembered"));
            assert_eq!(found, Some(list.clone()));
        }
        // A point past the ways takes the oldest slot; the others stay.
        let extra = next_stamp();
        memo.list(extra, stamp, || Some(Arc::new(99usize)));
        for (point, list) in points.iter().zip(&lists).skip(1) {
            let found = memo.list(*point, stamp, || panic!("remembered"));
            assert_eq!(found, Some(list.clone()));
        }
    }
}
