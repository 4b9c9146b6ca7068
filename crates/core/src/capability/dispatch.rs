//! Nested dispatch: how a composite tool (such as `run_code`) calls other tools.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::model::{Outcome, ToolCall};

use super::batch::{DispatchBatch, SerialBatch};

/// Runs a tool call through the complete pipeline. Implemented by the host's
/// pipeline; reached from a tool body through
/// [`ToolRunContext::dispatcher`](crate::context::ToolRunContext::dispatcher).
///
/// A composite tool sets the call's [`parent`](ToolCall::parent) to its own
/// execution's token so the pipeline knows the call is nested.
pub trait ToolDispatcher: Send + Sync + 'static {
    /// Runs `call`; always ends in exactly one outcome (the same frozen value
    /// the `tools/result` observers saw).
    fn dispatch(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Arc<Outcome>>;

    /// [`dispatch`](Self::dispatch), calling `admitted` once the call's
    /// admission (resolve, parse, validate, `tools/pre-execute`, approval,
    /// guards) is over, whatever it decided, and before the body starts.
    ///
    /// This is the mechanism beneath the turn scheduler's ordering: start a
    /// call, wait for its `admitted`, then start the next one. Pre-execute
    /// listeners, guards and approval prompts then see one call at a time, in
    /// that order. A composite tool that runs many calls wants
    /// [`open_batch`](Self::open_batch), which applies all of the turn
    /// scheduler's rules, this one included.
    ///
    /// `admitted` runs at most once, on the task polling the returned future,
    /// and must not block. If the future is dropped before admission ends it
    /// is dropped uncalled, so a caller waiting on it (say, through a
    /// `oneshot` sender moved into it) should treat the drop as the end.
    ///
    /// The default, for dispatchers that cannot tell when admission ends,
    /// calls `admitted` when the whole call has ended: later than it could,
    /// never too early (a caller that waits for it runs its calls one at a
    /// time).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use futures::future::BoxFuture;
    /// use tack_core::capability::ToolDispatcher;
    /// use tack_core::tool::{Outcome, ToolCall};
    /// use tack_core::host::NewOutcome;
    /// use tokio_util::sync::CancellationToken;
    ///
    /// /// Succeeds at once with `null`, logging when it runs.
    /// struct Logged(Arc<Mutex<Vec<&'static str>>>);
    /// impl ToolDispatcher for Logged {
    ///     fn dispatch(&self, call: ToolCall, _cancel: CancellationToken) -> BoxFuture<'static, Arc<Outcome>> {
    ///         let log = self.0.clone();
    ///         Box::pin(async move {
    ///             log.lock().unwrap().push("ran");
    ///             Arc::new(Outcome::success(call.call_id, call.name, serde_json::Value::Null, vec![]))
    ///         })
    ///     }
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let log = Arc::new(Mutex::new(Vec::new()));
    /// let dispatcher = Logged(log.clone());
    /// let admitted = log.clone();
    /// let outcome = dispatcher
    ///     .dispatch_admitted(
    ///         ToolCall::new("c1", "echo", "{}"),
    ///         CancellationToken::new(),
    ///         Box::new(move || admitted.lock().unwrap().push("admitted")),
    ///     )
    ///     .await;
    /// assert!(outcome.is_success());
    /// // The default cannot see admission: it reports it once the call ended.
    /// assert_eq!(*log.lock().unwrap(), ["ran", "admitted"]);
    /// # });
    /// ```
    fn dispatch_admitted(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        admitted: Box<dyn FnOnce() + Send + 'static>,
    ) -> BoxFuture<'static, Arc<Outcome>> {
        let outcome = self.dispatch(call, cancel);
        Box::pin(async move {
            let outcome = outcome.await;
            admitted();
            outcome
        })
    }

    /// Opens a [`DispatchBatch`]: the calls a composite tool submits to it
    /// run under the rules the host's turn scheduler applies to a model's
    /// calls (admission in submission order, parallel-safe calls overlap,
    /// exclusive calls run alone, conflicting resources serialize, every
    /// call ends in one outcome). `cancel` is the batch's signal; at most
    /// `max_parallel` calls overlap (and never more than the host allows;
    /// `0` counts as `1`).
    ///
    /// The default, for dispatchers that know no scheduler, runs each call
    /// alone, in submission order, through [`dispatch`](Self::dispatch):
    /// the rules hold, nothing overlaps.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures::future::BoxFuture;
    /// use tack_core::capability::{BatchEvent, ToolDispatcher};
    /// use tack_core::tool::{Outcome, ToolCall};
    /// use tack_core::host::NewOutcome;
    /// use tokio_util::sync::CancellationToken;
    ///
    /// /// Succeeds at once with the call's arguments as a string.
    /// struct Echo;
    /// impl ToolDispatcher for Echo {
    ///     fn dispatch(&self, call: ToolCall, _cancel: CancellationToken) -> BoxFuture<'static, Arc<Outcome>> {
    ///         let value = serde_json::Value::String(call.arguments.to_string());
    ///         Box::pin(async move { Arc::new(Outcome::success(call.call_id, call.name, value, vec![])) })
    ///     }
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let dispatcher = Echo;
    /// let mut batch = dispatcher.open_batch(CancellationToken::new(), 4);
    /// assert_eq!(batch.submit(ToolCall::new("c1", "echo", "a")), 0);
    /// assert_eq!(batch.submit(ToolCall::new("c2", "echo", "b")), 1);
    /// let mut seen = Vec::new();
    /// while let Some(event) = batch.next_event().await {
    ///     seen.push(match event {
    ///         BatchEvent::Started(i) => format!("start {i}"),
    ///         BatchEvent::Ended(i, outcome) => format!("end {i} {}", outcome.value().unwrap()),
    ///         _ => unreachable!(),
    ///     });
    ///     if seen.len() == 2 {
    ///         // A stream: a call submitted mid-way queues behind the others.
    ///         assert_eq!(batch.submit(ToolCall::new("c3", "echo", "c")), 2);
    ///     }
    /// }
    /// // The default runs each call alone, in submission order.
    /// assert_eq!(seen, [
    ///     "start 0", "end 0 \"a\"", "start 1", "end 1 \"b\"", "start 2", "end 2 \"c\"",
    /// ]);
    /// # });
    /// ```
    fn open_batch(
        &self,
        cancel: CancellationToken,
        max_parallel: usize,
    ) -> Box<dyn DispatchBatch + '_> {
        let _ = max_parallel; // one at a time is within any bound
        Box::new(SerialBatch::new(self, cancel))
    }
}

impl fmt::Debug for dyn ToolDispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDispatcher").finish_non_exhaustive()
    }
}
