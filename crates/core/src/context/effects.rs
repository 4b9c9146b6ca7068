//! The side effects one execution's body asked for.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::time::Instant;

use parking_lot::Mutex;

use crate::model::DeferredContext;

/// The side effects a tool body asks the loop for: deferred context and
/// concluding the turn. Shared between the context (which writes) and the
/// pipeline (which reads after the body).
///
/// ```
/// use tack_core::host::RunEffects;
/// let effects = RunEffects::new();
/// effects.defer_context("remember: the tests are slow");
/// assert_eq!(effects.take_deferred()[0].text(), "remember: the tests are slow");
/// assert!(!effects.concluded());
/// ```
///
/// A host that builds the context with
/// `tack_core::host::NewRunContext::with_fresh_effects`
/// gets the effects, and the context, inside the execution's own allocation
/// (the first context of an execution allocates nothing; a later one
/// allocates once for both).
#[derive(Clone, Default)]
pub struct RunEffects {
    handle: Handle,
}

/// Where the effects live: an allocation of their own, or inside the run
/// context they were made with.
#[derive(Clone)]
enum Handle {
    Own(Arc<EffectsInner>),
    InContext(Arc<crate::context::Shared>),
    InExecution(Arc<super::ToolExecution>),
}

impl Default for Handle {
    fn default() -> Self {
        Self::Own(Arc::default())
    }
}

/// The effects themselves.
#[derive(Default)]
pub(crate) struct EffectsInner {
    deferred: Mutex<Vec<DeferredContext>>,
    /// Whether `deferred` may hold anything: set (under its lock) by each
    /// push, so taking from an execution that deferred nothing (most)
    /// takes no lock.
    any_deferred: AtomicBool,
    concluded: AtomicBool,
    dispatched: AtomicBool,
    /// When the call's time budget ends: fixed by the first `tools/execute`
    /// wrapper that asks, the same for every later attempt of the call.
    deadline: OnceLock<Instant>,
}

impl EffectsInner {
    pub(crate) fn defer_context(&self, message: DeferredContext) {
        let mut deferred = self.deferred.lock();
        deferred.push(message);
        self.any_deferred.store(true, Ordering::Release);
    }

    fn take_deferred(&self) -> Vec<DeferredContext> {
        if !self.any_deferred.load(Ordering::Acquire) {
            return Vec::new();
        }
        let mut deferred = self.deferred.lock();
        self.any_deferred.store(false, Ordering::Relaxed);
        std::mem::take(&mut *deferred)
    }

    pub(crate) fn conclude_turn(&self) {
        self.concluded.store(true, Ordering::Release);
    }

    pub(crate) fn mark_dispatched(&self) {
        self.dispatched.store(true, Ordering::Release);
    }

    pub(crate) fn deadline(&self, budget: Duration) -> Instant {
        *self.deadline.get_or_init(|| Instant::now() + budget)
    }
}

impl RunEffects {
    /// No effects yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The effects held inside the run context `shared`.
    pub(crate) fn in_context(shared: Arc<crate::context::Shared>) -> Self {
        Self {
            handle: Handle::InContext(shared),
        }
    }

    /// The effects held in the run slot of `execution`.
    pub(crate) fn in_execution(execution: Arc<super::ToolExecution>) -> Self {
        Self {
            handle: Handle::InExecution(execution),
        }
    }

    pub(crate) fn inner(&self) -> &EffectsInner {
        match &self.handle {
            Handle::Own(inner) => inner,
            Handle::InContext(shared) => shared.effects(),
            Handle::InExecution(execution) => &execution.run().effects,
        }
    }

    /// Queues a context (text, or content blocks) to append after this call's
    /// result.
    pub fn defer_context(&self, message: impl Into<DeferredContext>) {
        self.inner().defer_context(message.into());
    }

    /// Asks to end the turn after this call (honoured only if it succeeds).
    pub fn conclude_turn(&self) {
        self.inner().conclude_turn();
    }

    /// Takes the queued contexts.
    pub fn take_deferred(&self) -> Vec<DeferredContext> {
        self.inner().take_deferred()
    }

    /// Whether the body asked to conclude the turn.
    pub fn concluded(&self) -> bool {
        self.inner().concluded.load(Ordering::Acquire)
    }

    /// Records that the tool body was started (set by the `tools/execute`
    /// default just before it calls the body).
    pub fn mark_dispatched(&self) {
        self.inner().mark_dispatched();
    }

    /// Whether the tool body was started: what a `CANCELLED` outcome reports,
    /// and what decides whether a late cancellation may replace a success.
    pub fn dispatched(&self) -> bool {
        self.inner().dispatched.load(Ordering::Acquire)
    }
}

impl fmt::Debug for RunEffects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunEffects")
            .field("deferred", &self.inner().deferred.lock().len())
            .field("concluded", &self.concluded())
            .finish()
    }
}
