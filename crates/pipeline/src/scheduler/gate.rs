//! The admission gate of the call of a turn being admitted: the pipeline tells the scheduler
//! when the call's admission (parse, validate, pre-execute, approval, guards)
//! is over, through the `admitted` option of the call. Only then may the next
//! call start, so policy runs in model order.

use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Context;

use futures::task::AtomicWaker;

/// Whether one call's admission is over, and who to wake when it is.
#[derive(Default)]
pub(crate) struct Gate {
    admitted: AtomicBool,
    waker: AtomicWaker,
}

impl Gate {
    /// Marks the call's admission over and wakes the scheduler.
    pub(crate) fn admit(&self) {
        if !self.admitted.swap(true, Ordering::AcqRel) {
            self.waker.wake();
        }
    }

    /// Makes the gate ready for the next call (once the previous call's
    /// admission is over, nothing else admits through it).
    pub(crate) fn reset(&self) {
        self.admitted.store(false, Ordering::Release);
    }

    /// Whether the call's admission is over; registers `cx` to hear of it.
    pub(crate) fn poll_admitted(&self, cx: &Context<'_>) -> bool {
        if self.admitted.load(Ordering::Acquire) {
            return true;
        }
        self.waker.register(cx.waker());
        self.admitted.load(Ordering::Acquire)
    }
}
