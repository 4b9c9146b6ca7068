//! What one turn shares with the pipeline while its calls run: which call is
//! running (a task-local), when its admission ended, and why the turn was
//! cancelled.
//!
//! The pipeline tells the scheduler when a call's admission (parse, validate,
//! pre-execute, approval, guards) is over, through the `admitted` callback of
//! `ToolRegistry::execute_admitted`. Only then may the next call start, so
//! policy runs in model order.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::Context;

use futures::task::AtomicWaker;
use tack_core::hook::Next;
use tack_core::hook::{Disposer, ListenerSpec, Priority};
use tack_core::hooks::{PostDecision, PostExecuteInput};
use tack_core::tool::{CallId, ContentBlock, ErrorCode, Outcome};

use crate::ToolRegistry;

/// The name of the listeners a turn installs.
pub(crate) const LISTENER: &str = "turn-scheduler";

tokio::task_local! {
    /// The turn call being polled (set around each call's future).
    static CURRENT: Arc<CallContext>;
}

/// Why the turn cancelled its remaining calls.
pub(crate) struct SiblingFailure {
    pub(crate) call_id: CallId,
    pub(crate) tool: String,
    pub(crate) code: ErrorCode,
    pub(crate) message: String,
}

/// State of one turn, shared with its listeners.
#[derive(Default)]
pub(crate) struct TurnShared {
    pub(crate) failure: OnceLock<SiblingFailure>,
}

/// One call of a turn, as its listeners see it.
pub(crate) struct CallContext {
    turn: Arc<TurnShared>,
    call_id: CallId,
    admitted: AtomicBool,
    waker: AtomicWaker,
}

impl CallContext {
    pub(crate) fn new(turn: Arc<TurnShared>, call_id: CallId) -> Self {
        Self {
            turn,
            call_id,
            admitted: AtomicBool::new(false),
            waker: AtomicWaker::new(),
        }
    }

    /// Marks the call's admission over and wakes the scheduler.
    pub(crate) fn admit(&self) {
        if !self.admitted.swap(true, Ordering::AcqRel) {
            self.waker.wake();
        }
    }

    /// Whether the call's admission is over; registers `cx` to hear of it.
    pub(crate) fn poll_admitted(&self, cx: &Context<'_>) -> bool {
        if self.admitted.load(Ordering::Acquire) {
            return true;
        }
        self.waker.register(cx.waker());
        self.admitted.load(Ordering::Acquire)
    }

    /// Runs `future` (the call's pipeline) with this call as the current one.
    pub(crate) fn scope<F: Future>(self: Arc<Self>, future: F) -> impl Future<Output = F::Output> {
        CURRENT.scope(self, future)
    }
}

/// The current call, if it belongs to `turn`.
fn current_of<R>(turn: &Arc<TurnShared>, f: impl FnOnce(&CallContext) -> R) -> Option<R> {
    CURRENT
        .try_with(|call| Arc::ptr_eq(&call.turn, turn).then(|| f(call)))
        .ok()
        .flatten()
}

/// The content a call cancelled because of a sibling's failure carries, so
/// the model can tell it from a user interrupt.
fn sibling_content(outcome: &Outcome, cause: &SiblingFailure) -> Option<Vec<ContentBlock>> {
    let failure = outcome.failure_info()?;
    if failure.code != ErrorCode::Cancelled || outcome.call_id == cause.call_id {
        return None;
    }
    let why = format!(
        "call `{}` (`{}`) failed ({}: {}), and this turn cancels its remaining calls when one fails",
        cause.call_id, cause.tool, cause.code, cause.message
    );
    let text = if failure.dispatched {
        format!(
            "CANCELLED: `{}` was stopped because {why}. The tool had started, so part of its work may have happened; check before calling it again. ({})",
            outcome.tool, failure.message
        )
    } else {
        format!(
            "CANCELLED: `{}` was not run because {why}. Nothing was done; call it again if it is still needed.",
            outcome.tool
        )
    };
    Some(vec![ContentBlock::text(text)])
}

/// The listeners a turn installs while it runs; dropping it removes them.
pub(crate) struct TurnListeners {
    _disposers: Vec<Disposer>,
}

impl TurnListeners {
    /// `siblings`: an innermost `tools/post-execute` listener that explains
    /// cancellations caused by a sibling's failure.
    pub(crate) fn install(registry: &ToolRegistry, turn: &Arc<TurnShared>, siblings: bool) -> Self {
        let hooks = registry.hooks();
        let mut disposers = Vec::new();
        if siblings {
            let turn = turn.clone();
            // Innermost of every `tools/post-execute` listener, whatever they
            // are named: ordering by name (`Order`) places a listener next to
            // listeners it knows; "inside everything, including listeners
            // registered later" is what the lowest priority says. Outer
            // listeners (a redactor) still see and may change its content.
            disposers.push(hooks.post_execute().tap(
                ListenerSpec::new(LISTENER).with_priority(Priority(i32::MIN)),
                move |input: PostExecuteInput, next: Next<PostExecuteInput, PostDecision>| {
                    let content = current_of(&turn, |call| {
                        if call.call_id != input.outcome.call_id {
                            return None; // a nested call of a composite tool
                        }
                        let cause = turn.failure.get()?;
                        sibling_content(&input.outcome, cause)
                    })
                    .flatten();
                    async move {
                        let decision = next.run(input).await;
                        match content {
                            Some(content) => decision.replace_content(content),
                            None => decision,
                        }
                    }
                },
            ));
        }
        Self {
            _disposers: disposers,
        }
    }
}
