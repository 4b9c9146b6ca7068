//! Nested dispatch: how a composite tool (such as `run_code`) calls other tools.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::tool::{Outcome, ToolCall};

/// What [`ToolDispatcher::dispatch_admitted`] calls once the call's admission
/// is over.
///
/// *Admission* is everything that decides whether the body may run: resolve,
/// parse, validate, `tools/pre-execute`, approval and guards.
pub type OnAdmitted = Box<dyn FnOnce() + Send + 'static>;

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
    /// This is how a composite tool runs policy in the order its calls were
    /// submitted while their bodies overlap: start a call, wait for its
    /// `admitted`, then start the next one. Pre-execute listeners, guards and
    /// approval prompts then see one call at a time, in that order — the rule
    /// the turn scheduler applies to a model's calls.
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
        admitted: OnAdmitted,
    ) -> BoxFuture<'static, Arc<Outcome>> {
        let outcome = self.dispatch(call, cancel);
        Box::pin(async move {
            let outcome = outcome.await;
            admitted();
            outcome
        })
    }
}

impl fmt::Debug for dyn ToolDispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDispatcher").finish_non_exhaustive()
    }
}
