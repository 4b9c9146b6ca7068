//! Each thread's copies of the registered tools it calls.
//!
//! A call holds the tool it resolved to for its whole run, and the stages
//! clone the tool's name and handler; done on the one shared allocation,
//! every call on every thread would write the same reference counts, a
//! cache line the threads then pass back and forth. Instead each thread
//! calls through a copy of its own ([`RegisteredTool::thread_copy`]): the
//! same definition and validators, with a count only that thread writes.
//!
//! The same per-thread entry keeps the thread's copy of the published
//! catalogue, so a lookup reads the registry's generation (a plain load) and
//! this thread's entry, and loads the published catalogue only after a
//! change.

use std::collections::HashMap;
use std::sync::Arc;

use crossbeam_utils::CachePadded;
use foldhash::fast::RandomState;
use parking_lot::Mutex;
use thread_local::ThreadLocal;

use super::{Layers, RegisteredTool};

/// One thread's copies, made while the registry was at `generation`: the
/// catalogue, and by registration id the tools it called.
#[derive(Default)]
struct Copies {
    generation: u64,
    layers: Option<Arc<Layers>>,
    tools: HashMap<u64, Arc<RegisteredTool>, RandomState>,
}

impl Copies {
    /// Everything this thread keeps, taken out (to drop outside the lock:
    /// dropping a tool may run code that changes the registry).
    fn take(
        &mut self,
    ) -> (
        Option<Arc<Layers>>,
        HashMap<u64, Arc<RegisteredTool>, RandomState>,
    ) {
        (self.layers.take(), std::mem::take(&mut self.tools))
    }
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
    /// Looks a call up in this thread's copy of the catalogue at
    /// `generation` (read before: `load` gives the published catalogue,
    /// `current` reads the generation again): `lookup` picks the registered
    /// tool (if any) and what else the caller needs, and the tool comes back
    /// as this thread's copy of it.
    pub(crate) fn resolve<R>(
        &self,
        generation: u64,
        load: impl FnOnce() -> Arc<Layers>,
        current: impl Fn() -> u64,
        lookup: impl FnOnce(&Layers) -> (Option<&Arc<RegisteredTool>>, R),
    ) -> (Option<Arc<RegisteredTool>>, R) {
        let mut copies = self.threads.get_or_default().lock();
        if copies.generation != generation {
            let stale = copies.take();
            copies.generation = generation;
            drop(copies);
            drop(stale);
            copies = self.threads.get_or_default().lock();
        }
        let Copies { layers, tools, .. } = &mut *copies;
        let layers = layers.get_or_insert_with(load);
        let (shared, found) = lookup(layers);
        let Some(shared) = shared else {
            return (None, found);
        };
        if let Some(copy) = tools.get(&shared.id) {
            return (Some(copy.clone()), found);
        }
        let copy = Arc::new(shared.thread_copy());
        tools.insert(shared.id, copy.clone());
        // A change that moved the generation after it was read may have
        // emptied the threads' copies before these were kept: then they go
        // now (the call still runs on its copy).
        if current() != generation {
            let stale = copies.take();
            drop(copies);
            drop(stale);
        }
        (Some(copy), found)
    }

    /// Empties every thread's copies: called after each change is published.
    pub(crate) fn clear(&self) {
        let stale: Vec<_> = self
            .threads
            .iter()
            .map(|copies| copies.lock().take())
            .collect();
        drop(stale);
    }
}
