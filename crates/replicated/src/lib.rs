//! # tack-replicated
//!
//! Internal to tack (not part of any crate's public API): a published value
//! with one copy per thread that reads it, emptied when the value changes.
//!
//! tack reads a few values on every tool call and changes them rarely: the
//! listener snapshot of each hook point and the capabilities (`tack-core`),
//! the tool catalogue (`tack-pipeline`). Read through one shared `Arc` (or a
//! lock), every call on every thread would write the same reference count
//! (or the lock's reader count): a cache line the threads then pass back and
//! forth. [`Replicated`] gives each thread a copy of its own instead, on its
//! own cache line:
//!
//! * a **read** ([`Replicated::with_copy`]) locks the calling thread's copy
//!   (a lock only that thread and a change take, so it is never contended
//!   while nothing changes) and reads it; only the first read after a
//!   change (which emptied the copy) loads the published value and makes
//!   the copy again;
//! * a **change** ([`Replicated::publish`], [`Replicated::update`]) replaces
//!   the published value, moves the version, and empties every thread's
//!   copy: the next read on each thread sees the new value, and a replaced
//!   value is not kept alive by a thread that stopped reading. What it emptied comes back ([`Replaced`]) for the caller to
//!   drop once it released its own locks: dropping a value may run code
//!   that changes it again.
//!
//! Once a change has returned, no read sees a value older than the one it
//! published, on any thread. (A read that overlaps a change may see the
//! value before it or after it.)
//!
//! ```
//! use std::sync::Arc;
//! use tack_replicated::Replicated;
//!
//! let settings: Replicated<String> = Replicated::new("first".to_owned());
//! // Each thread's copy here is an `Arc` of its own around a clone.
//! let read = || settings.with_copy(|p| Arc::new(String::clone(p)), |mine| mine.clone());
//! assert_eq!(*read(), "first");
//! drop(settings.publish(Arc::new("second".to_owned())));
//! assert_eq!(*read(), "second");
//! ```
//!
//! It is a crate of its own because `tack-core` and `tack-pipeline` both use
//! it and it must stay out of `tack-core`'s public API (the plugin contract).
//! It depends on no tack crate, and only `tack-core` and `tack-pipeline`
//! depend on it, so the dependency rule (plugins depend on `tack-core` only,
//! the pipeline on `tack-core`) is unchanged.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use arc_swap::{ArcSwap, Guard};
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use thread_local::ThreadLocal;

/// A published value `T` and each reading thread's copy `C` of it (by
/// default an `Arc<T>` of the thread's own).
///
/// See the [crate documentation](crate) for how reads and changes work.
pub struct Replicated<T, C: Send = Arc<T>> {
    /// The latest value: loaded without a lock by a thread's first read
    /// after a change, and by readers that need no copy
    /// ([`load`](Self::load)).
    published: ArcSwap<T>,
    /// The number of the change that published [`published`](Self::published)
    /// (moved after it): orders a copy being made against a change (see
    /// [`copy_again`](Self::copy_again)).
    version: AtomicU64,
    /// Whether a thread made a copy since the last change emptied them (when
    /// none did, a change has nothing to empty).
    copied: AtomicBool,
    /// How many copies reads made (each is a first read after a change, or
    /// a thread's first read): a read that makes none took no lock but its
    /// thread's own and loaded nothing but the version.
    made: AtomicU64,
    /// Serializes changes.
    writer: Mutex<()>,
    /// Each thread's copy (`None` until it reads, and after each change),
    /// each on its own cache line.
    copies: ThreadLocal<CachePadded<Mutex<Option<C>>>>,
}

/// What a change replaced: the value published before it and the threads'
/// copies it emptied. Drop it once the caller's own locks are released: it
/// may hold the last reference to something whose drop changes the
/// [`Replicated`] value again.
#[must_use = "dropped once the caller's own locks are released"]
pub struct Replaced<T, C> {
    /// The value published before the change.
    pub previous: Arc<T>,
    /// The threads' copies the change emptied.
    pub copies: Vec<C>,
}

impl<T: Default + Send + Sync, C: Send> Default for Replicated<T, C> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T: Send + Sync, C: Send> Replicated<T, C> {
    /// `value`, published at version 0; no thread has a copy yet.
    pub fn new(value: T) -> Self {
        Self::from_arc(Arc::new(value))
    }

    /// `value` (already shared), published at version 0.
    pub fn from_arc(value: Arc<T>) -> Self {
        Self {
            published: ArcSwap::new(value),
            version: AtomicU64::new(0),
            copied: AtomicBool::new(false),
            made: AtomicU64::new(0),
            writer: Mutex::new(()),
            copies: ThreadLocal::new(),
        }
    }

    /// The published value, without a copy (for reads that are not on every
    /// call: a lock-free load whose guard is meant to be held briefly).
    #[inline]
    pub fn load(&self) -> Guard<Arc<T>> {
        self.published.load()
    }

    /// The published value, owned (the shared reference count is written).
    pub fn load_full(&self) -> Arc<T> {
        self.published.load_full()
    }

    /// The number of changes published so far: a value derived from the
    /// published one at version `v` is stale once this is past `v`.
    #[inline]
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::SeqCst)
    }

    /// Runs `read` on this thread's copy of the published value: the copy
    /// `make` made from it at this thread's first read since the last
    /// change (or ever). `read` may change the copy (a per-thread cache
    /// derived from the value); the next change empties it.
    ///
    /// `make` and `read` run under this thread's copy's lock: they must not
    /// read or change this `Replicated` value (that would deadlock).
    #[inline]
    pub fn with_copy<R>(
        &self,
        make: impl FnOnce(&Arc<T>) -> C,
        read: impl FnOnce(&mut C) -> R,
    ) -> R {
        #[cfg(feature = "counting")]
        counting::count(&counting::READS);
        let mut copy = self.copies.get_or_default().lock();
        // Emptied by every change (under this lock), so a copy is never
        // older than the last change that returned.
        if let Some(value) = &mut *copy {
            return read(value);
        }
        self.copy_again(copy, make, read)
    }

    /// The slow path of [`with_copy`](Self::with_copy): this thread's copy
    /// made from the published value.
    #[cold]
    fn copy_again<R>(
        &self,
        mut copy: parking_lot::MutexGuard<'_, Option<C>>,
        make: impl FnOnce(&Arc<T>) -> C,
        read: impl FnOnce(&mut C) -> R,
    ) -> R {
        // Marked, then the version read (sequentially consistent: the store
        // and the load are not reordered). A change that moves the version
        // after that read sees the mark and empties this copy once this
        // lock is released; one that moved it before published its value
        // first, so the load below sees that value (or a later one).
        self.copied.store(true, Ordering::SeqCst);
        self.made.fetch_add(1, Ordering::Relaxed);
        #[cfg(feature = "counting")]
        counting::count(&counting::COPIES);
        let _ = self.version.load(Ordering::SeqCst);
        let published = self.published.load();
        let out = read(copy.insert(make(&published)));
        drop(copy);
        out
    }

    /// Publishes `next`, moves the version and empties every thread's copy.
    /// When it returns, every read on any thread sees `next` (or a later
    /// value).
    pub fn publish(&self, next: Arc<T>) -> Replaced<T, C> {
        let _writer = self.writer.lock();
        self.publish_locked(next)
    }

    /// Publishes what `change` makes of the published value (changes are
    /// serialized: none is made between the read and the publication).
    pub fn update(&self, change: impl FnOnce(&Arc<T>) -> Arc<T>) -> Replaced<T, C> {
        let _writer = self.writer.lock();
        let next = change(&self.published.load_full());
        self.publish_locked(next)
    }

    fn publish_locked(&self, next: Arc<T>) -> Replaced<T, C> {
        // Published before the version moves: a read that sees the new
        // version loads the new value.
        let previous = self.published.swap(next);
        self.version.fetch_add(1, Ordering::SeqCst);
        let copies = if self.copied.swap(false, Ordering::SeqCst) {
            self.copies
                .iter()
                .filter_map(|copy| copy.lock().take())
                .collect()
        } else {
            Vec::new()
        };
        Replaced { previous, copies }
    }

    /// How many threads hold a copy now (for tests and diagnostics).
    pub fn copies_held(&self) -> usize {
        self.copies
            .iter()
            .filter(|copy| copy.lock().is_some())
            .count()
    }

    /// How many copies reads have made so far (for tests that check a read
    /// makes none: no load of the published value, no lock but the
    /// thread's own).
    pub fn copies_made(&self) -> u64 {
        self.made.load(Ordering::Relaxed)
    }
}

impl<T: std::fmt::Debug, C: Send> std::fmt::Debug for Replicated<T, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replicated")
            .field("published", &**self.published.load())
            .field("version", &self.version.load(Ordering::SeqCst))
            .finish_non_exhaustive()
    }
}

/// Per-thread counts of what reads did, across every [`Replicated`] value
/// (feature `counting`, for tests: a hot path's reads and copies pinned per
/// call). Each read takes exactly one lock, its thread's own copy's; each
/// copy made also loads the published value.
#[cfg(feature = "counting")]
pub mod counting {
    use std::cell::Cell;
    use std::thread::LocalKey;

    thread_local! {
        pub(crate) static READS: Cell<u64> = const { Cell::new(0) };
        pub(crate) static COPIES: Cell<u64> = const { Cell::new(0) };
    }

    pub(crate) fn count(counter: &'static LocalKey<Cell<u64>>) {
        counter.with(|c| c.set(c.get() + 1));
    }

    /// How many reads ([`with_copy`](crate::Replicated::with_copy)) this
    /// thread has made, of any value: each took one lock, its own copy's.
    pub fn reads() -> u64 {
        READS.with(Cell::get)
    }

    /// How many of those reads made a copy (loaded the published value).
    pub fn copies() -> u64 {
        COPIES.with(Cell::get)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(r: &Replicated<u64>) -> Arc<u64> {
        r.with_copy(|p| Arc::new(**p), |mine| mine.clone())
    }

    #[test]
    fn a_read_makes_a_copy_once_until_a_change() {
        let r = Replicated::<u64>::new(1);
        assert_eq!(*read(&r), 1);
        assert_eq!(*read(&r), 1);
        assert_eq!(r.copies_made(), 1, "the second read used the copy");
        assert_eq!(r.copies_held(), 1);
        let replaced = r.publish(Arc::new(2));
        assert_eq!(*replaced.previous, 1);
        assert_eq!(replaced.copies.len(), 1, "the change emptied the copy");
        assert_eq!(r.copies_held(), 0);
        assert_eq!(r.version(), 1);
        assert_eq!(*read(&r), 2);
        assert_eq!(r.copies_made(), 2);
    }

    #[test]
    fn the_copy_is_the_threads_own() {
        let r = Replicated::<u64>::new(7);
        let here = read(&r);
        let there = std::thread::scope(|s| s.spawn(|| read(&r)).join().expect("reads"));
        assert!(!Arc::ptr_eq(&here, &there), "each thread has its own copy");
        assert!(
            Arc::ptr_eq(&here, &read(&r)),
            "a thread reads its copy again"
        );
        assert_eq!(r.copies_held(), 2);
    }

    #[test]
    fn a_change_frees_what_idle_threads_copied() {
        let r = Replicated::<u64>::new(3);
        std::thread::scope(|s| {
            s.spawn(|| read(&r));
        });
        let weak = {
            let copy = r.copies.iter().find_map(|c| c.lock().clone());
            Arc::downgrade(&copy.expect("the thread's copy"))
        };
        drop(r.publish(Arc::new(4)));
        assert!(weak.upgrade().is_none(), "no copy keeps the old value");
    }

    #[test]
    fn update_reads_and_publishes_under_one_lock() {
        let r = Replicated::<u64>::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..250 {
                        drop(r.update(|v| Arc::new(**v + 1)));
                    }
                });
            }
        });
        assert_eq!(**r.load(), 1000, "no increment lost");
        assert_eq!(r.version(), 1000);
    }

    #[test]
    fn a_copy_may_be_a_cache_filled_by_reads() {
        let r: Replicated<u64, Vec<u64>> = Replicated::new(10);
        for i in 0..3 {
            r.with_copy(|p| vec![**p], |cache| cache.push(i));
        }
        assert_eq!(
            r.with_copy(|_| Vec::new(), |cache| cache.clone()),
            [10, 0, 1, 2]
        );
        drop(r.publish(Arc::new(20)));
        assert_eq!(r.with_copy(|p| vec![**p], |cache| cache.clone()), [20]);
    }

    proptest::proptest! {
        /// Whatever interleaving of changes and reads on one thread, a read
        /// returns the latest published value.
        #[test]
        fn reads_see_the_latest_value(steps in proptest::collection::vec(proptest::option::of(0u64..100), 1..60)) {
            let r = Replicated::<u64>::new(1000);
            let mut latest = 1000;
            for step in steps {
                match step {
                    Some(value) => {
                        drop(r.publish(Arc::new(value)));
                        latest = value;
                    }
                    None => proptest::prop_assert_eq!(*read(&r), latest),
                }
            }
            proptest::prop_assert_eq!(*read(&r), latest);
        }
    }
}
