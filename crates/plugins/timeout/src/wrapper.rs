//! The `tools/execute` wrapper: deadline, grace period, abandonment.

use std::pin::pin;
use std::time::Duration;

use tack_core::hook::{Disposer, ListenerSpec, Next, OrderError, Priority, WaterfallListener};
use tack_core::hooks::{ExecuteOutput, ExecuteRequest, ToolHooks};
use tack_core::tool::{ToolError, ToolErrorCode};

use crate::TimeoutPolicy;

/// The name of the `tools/execute` listener (the provenance of a `TIMEOUT`).
pub const LISTENER_NAME: &str = "timeout";

impl TimeoutPolicy {
    /// The wrapper's registration: named [`LISTENER_NAME`], in the policy's
    /// scope, at [`Priority::EARLY`].
    pub(crate) fn spec(&self) -> ListenerSpec {
        ListenerSpec::new(LISTENER_NAME)
            .with_scope(self.scope.clone())
            .with_priority(Priority::EARLY)
    }

    /// Registers the wrapper on `hooks` directly (without a plugin host),
    /// returning its disposer. Installed as a plugin, it belongs to the
    /// plugin's footprint instead.
    ///
    /// # Errors
    ///
    /// [`OrderError`] when the policy is placed before or after a listener
    /// that is not registered on `tools/execute` (register that one first).
    pub fn attach(&self, hooks: &ToolHooks) -> Result<Disposer, OrderError> {
        hooks.execute().register_with(
            self.spec(),
            self.order.clone(),
            TimeoutWrapper::new(self.clone()),
        )
    }
}

/// The wrapper listener (one per installed policy).
pub(crate) struct TimeoutWrapper {
    policy: TimeoutPolicy,
}

impl TimeoutWrapper {
    pub(crate) fn new(policy: TimeoutPolicy) -> Self {
        Self { policy }
    }
}

impl WaterfallListener<ExecuteRequest, ExecuteOutput> for TimeoutWrapper {
    fn call(
        &self,
        request: ExecuteRequest,
        next: Next<ExecuteRequest, ExecuteOutput>,
    ) -> impl Future<Output = ExecuteOutput> + Send {
        let budget = self.policy.budget_for(request.timeout());
        let grace = self.policy.grace;
        async move {
            match budget {
                // No budget: the body sees the caller's own signal.
                None => next.run(request).await,
                Some(budget) => run_with_deadline(request, next, budget, grace).await,
            }
        }
    }
}

async fn run_with_deadline(
    request: ExecuteRequest,
    next: Next<ExecuteRequest, ExecuteOutput>,
    budget: Duration,
    grace: Duration,
) -> ExecuteOutput {
    let tool = request.execution().name().to_owned();
    let caller = request.cancellation().clone();
    let (request, child) = request.child_cancellation();
    let mut body = pin!(next.run(request));

    let deadline_won = tokio::select! {
        biased;
        output = &mut body => return output,
        () = caller.cancelled() => false,
        () = tokio::time::sleep(budget) => true,
    };

    if deadline_won {
        child.cancel();
        // Whatever the body answers now is the answer to a cancelled call:
        // the deadline's outcome stands (even a later caller cancellation
        // does not change it).
        let stopped = tokio::time::timeout(grace, &mut body).await.is_ok();
        if !stopped {
            tracing::warn!(
                tool = %tool,
                budget_ms = budget.as_millis() as u64,
                grace_ms = grace.as_millis() as u64,
                "tool ignored its cancellation signal; abandoning it"
            );
        }
        let mut message = format!("tool `{tool}` timed out after {} ms", budget.as_millis());
        if !stopped {
            message.push_str(&format!(
                " (it did not stop within the {} ms grace period and was abandoned)",
                grace.as_millis()
            ));
        }
        message.push_str("; try a smaller piece of work, or ask the user to raise the timeout");
        return ExecuteOutput::err(ToolError::with_code(ToolErrorCode::Timeout, message));
    }

    // The caller cancelled first: the child token already carries it to the
    // body. Its own answer stands if it comes within the grace period.
    match tokio::time::timeout(grace, &mut body).await {
        Ok(output) => output,
        Err(_) => {
            tracing::warn!(
                tool = %tool,
                grace_ms = grace.as_millis() as u64,
                "cancelled tool did not stop within the grace period; abandoning it"
            );
            ExecuteOutput::err(ToolError::with_code(
                ToolErrorCode::Cancelled,
                format!(
                    "the call of tool `{tool}` was cancelled; the tool did not stop within {} ms and was abandoned, so it may have done part of its work",
                    grace.as_millis()
                ),
            ))
        }
    }
}
