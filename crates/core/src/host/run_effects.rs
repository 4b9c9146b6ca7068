//! The side effects one execution's body asked for.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

use crate::tool::DeferredContext;

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
#[derive(Clone, Default)]
pub struct RunEffects {
    inner: Arc<EffectsInner>,
}

#[derive(Default)]
struct EffectsInner {
    deferred: Mutex<Vec<DeferredContext>>,
    concluded: AtomicBool,
    dispatched: AtomicBool,
}

impl RunEffects {
    /// No effects yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues a context (text, or content blocks) to append after this call's
    /// result.
    pub fn defer_context(&self, message: impl Into<DeferredContext>) {
        self.inner.deferred.lock().push(message.into());
    }

    /// Asks to end the turn after this call (honoured only if it succeeds).
    pub fn conclude_turn(&self) {
        self.inner.concluded.store(true, Ordering::Release);
    }

    /// Takes the queued contexts.
    pub fn take_deferred(&self) -> Vec<DeferredContext> {
        std::mem::take(&mut *self.inner.deferred.lock())
    }

    /// Whether the body asked to conclude the turn.
    pub fn concluded(&self) -> bool {
        self.inner.concluded.load(Ordering::Acquire)
    }

    /// Records that the tool body was started (set by the `tools/execute`
    /// default just before it calls the body).
    pub fn mark_dispatched(&self) {
        self.inner.dispatched.store(true, Ordering::Release);
    }

    /// Whether the tool body was started: what a `CANCELLED` outcome reports,
    /// and what decides whether a late cancellation may replace a success.
    pub fn dispatched(&self) -> bool {
        self.inner.dispatched.load(Ordering::Acquire)
    }
}

impl fmt::Debug for RunEffects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunEffects")
            .field("deferred", &self.inner.deferred.lock().len())
            .field("concluded", &self.concluded())
            .finish()
    }
}
