//! Each thread's copies of the registered tools it calls.
//!
//! A call holds the tool it resolved to for its whole run, and the stages
//! clone the tool's name and handler; done on the one shared allocation,
//! every call on every thread would write the same reference counts, a
//! cache line the threads then pass back and forth. Instead each thread
//! calls through a copy of its own ([`RegisteredTool::thread_copy`]): the
//! same definition and validators, with a count only that thread writes.

use std::collections::HashMap;
use std::sync::Arc;

use crossbeam_utils::CachePadded;
use foldhash::fast::RandomState;
use parking_lot::Mutex;
use thread_local::ThreadLocal;

use super::RegisteredTool;

/// One thread's copies, by registration id, made while the registry was at
/// `generation`.
#[derive(Default)]
struct Copies {
    generation: u64,
    tools: HashMap<u64, Arc<RegisteredTool>, RandomState>,
}

/// The copies of every thread that called a tool since the last change.
///
/// Each change of the registry empties them all (after publishing), so a
/// removed tool is not kept alive by a thread that stopped calling; a
/// thread's copies also go when it sees a newer generation than they were
/// made at. Each thread's copies sit on their own cache line; the lock is
/// uncontended (only its thread and a change take it).
#[derive(Default)]
pub(crate) struct ThreadCopies {
    threads: ThreadLocal<CachePadded<Mutex<Copies>>>,
}

impl ThreadCopies {
    /// This thread's copy of `shared`, read at `generation` (read before the
    /// snapshot `shared` comes from); `current` reads the generation again.
    pub(crate) fn copy_of(
        &self,
        generation: u64,
        shared: &Arc<RegisteredTool>,
        current: impl Fn() -> u64,
    ) -> Arc<RegisteredTool> {
        let mut copies = self.threads.get_or_default().lock();
        if copies.generation != generation {
            let stale = std::mem::take(&mut copies.tools);
            copies.generation = generation;
            drop(copies);
            // Dropping a tool may run code that changes the registry.
            drop(stale);
            copies = self.threads.get_or_default().lock();
        }
        if let Some(copy) = copies.tools.get(&shared.id) {
            return copy.clone();
        }
        let copy = Arc::new(shared.thread_copy());
        copies.tools.insert(shared.id, copy.clone());
        // A change that moved the generation after it was read may have
        // emptied the threads' copies before this one was kept: then it goes
        // now (the call still runs on it).
        if current() != generation {
            let stale = std::mem::take(&mut copies.tools);
            drop(copies);
            drop(stale);
        }
        copy
    }

    /// Empties every thread's copies: called after each change is published.
    pub(crate) fn clear(&self) {
        let stale: Vec<_> = self
            .threads
            .iter()
            .map(|copies| std::mem::take(&mut copies.lock().tools))
            .collect();
        drop(stale);
    }
}
