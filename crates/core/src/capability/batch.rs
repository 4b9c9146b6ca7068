//! Batch dispatch: how a composite tool runs many nested calls under the
//! rules the turn scheduler applies to a model's calls.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::{BoxFuture, poll_fn};
use tokio_util::sync::CancellationToken;

use crate::model::{Outcome, ToolCall};

use super::ToolDispatcher;

/// What a [`DispatchBatch`] reports about its calls, each call by its
/// submission index (0 for the first call submitted, then 1, 2, …).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum BatchEvent {
    /// The call was started: its admission (resolve, parse, validate,
    /// `tools/pre-execute`, approval, guards) begins now. Reported once per
    /// call, before its [`Ended`](Self::Ended).
    Started(usize),
    /// The call ended with its one outcome (the same frozen value the
    /// `tools/result` observers saw).
    Ended(usize, Arc<Outcome>),
}

/// A batch of nested calls a composite tool submits, one at a time or
/// many at once, and the host runs under the rules of its turn scheduler:
///
/// * calls are *started* in submission order, and a call starts only once
///   the previous call's admission is over, so policy (pre-execute
///   listeners, approval prompts, guards) sees them one at a time, in
///   submission order;
/// * calls the host classifies as parallel-safe overlap (within the host's
///   bound and the batch's `max_parallel`); an exclusive call waits for
///   everything before it, runs alone, and nothing after it starts before it
///   ends; parallel calls whose resource claims conflict do not overlap;
/// * cancelling the batch's token cancels the running calls, and calls not
///   started yet still go through the pipeline and end `CANCELLED`, not run;
/// * every submitted call ends in exactly one [`BatchEvent::Ended`].
///
/// It is a stream: [`submit`](Self::submit) may be called at any time, also
/// between two events, and a call submitted later is queued behind the ones
/// submitted before it. Nothing runs unless the batch is polled
/// ([`poll_event`](Self::poll_event), or `next_event().await`
/// on `dyn DispatchBatch`). Open one with [`ToolDispatcher::open_batch`].
pub trait DispatchBatch: Send {
    /// Queues `call` behind every call submitted before it and returns its
    /// submission index.
    fn submit(&mut self, call: ToolCall) -> usize;

    /// Starts what the rules allow and reports the next event:
    /// `Ready(None)` once every submitted call has ended (a call submitted
    /// afterwards is run as usual). Registers `cx` to be woken when there is
    /// more to report.
    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<BatchEvent>>;
}

impl dyn DispatchBatch + '_ {
    /// The next event; `None` once every submitted call has ended.
    pub fn next_event(&mut self) -> impl Future<Output = Option<BatchEvent>> + '_ {
        poll_fn(move |cx| self.poll_event(cx))
    }
}

impl fmt::Debug for dyn DispatchBatch + '_ {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DispatchBatch").finish_non_exhaustive()
    }
}

/// The batch of [`ToolDispatcher::open_batch`]'s default: every call alone,
/// in submission order, through [`ToolDispatcher::dispatch`] (the rules
/// hold trivially: nothing overlaps). A dispatcher that overrides
/// `open_batch` can fall back on it.
pub struct SerialBatch<'a, D: ?Sized> {
    dispatcher: &'a D,
    cancel: CancellationToken,
    submitted: usize,
    queue: VecDeque<(usize, ToolCall)>,
    running: Option<(usize, BoxFuture<'static, Arc<Outcome>>)>,
}

impl<'a, D: ToolDispatcher + ?Sized> SerialBatch<'a, D> {
    /// An empty batch over `dispatcher`; `cancel` is passed to every call.
    pub fn new(dispatcher: &'a D, cancel: CancellationToken) -> Self {
        Self {
            dispatcher,
            cancel,
            submitted: 0,
            queue: VecDeque::new(),
            running: None,
        }
    }
}

impl<D: ?Sized> fmt::Debug for SerialBatch<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SerialBatch")
            .field("submitted", &self.submitted)
            .field("queued", &self.queue.len())
            .field("running", &self.running.as_ref().map(|(index, _)| index))
            .finish_non_exhaustive()
    }
}

impl<D: ToolDispatcher + ?Sized> DispatchBatch for SerialBatch<'_, D> {
    fn submit(&mut self, call: ToolCall) -> usize {
        let index = self.submitted;
        self.submitted += 1;
        self.queue.push_back((index, call));
        index
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<BatchEvent>> {
        match &mut self.running {
            Some((index, running)) => {
                let index = *index;
                let outcome = std::task::ready!(running.as_mut().poll(cx));
                self.running = None;
                Poll::Ready(Some(BatchEvent::Ended(index, outcome)))
            }
            None => match self.queue.pop_front() {
                Some((index, call)) => {
                    let running = self.dispatcher.dispatch(call, self.cancel.clone());
                    self.running = Some((index, running));
                    Poll::Ready(Some(BatchEvent::Started(index)))
                }
                None => Poll::Ready(None),
            },
        }
    }
}
