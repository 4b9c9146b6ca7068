//! The `tools/execute` wrapper: deadline, grace period, abandonment.

use std::pin::pin;
use std::time::Duration;

use tokio::time::Instant;

use tack_core::hook::{Next, WaterfallListener};
use tack_core::hooks::{ExecuteOutput, ExecuteRequest};
use tack_core::tool::ToolError;

use crate::Timeout;

/// The name of the `tools/execute` listener (the provenance of a `TIMEOUT`).
pub const LISTENER_NAME: &str = "timeout";

/// The wrapper listener (one per installed policy).
pub(crate) struct TimeoutWrapper {
    policy: Timeout,
}

impl TimeoutWrapper {
    pub(crate) fn new(policy: Timeout) -> Self {
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
    // The call's deadline, not this attempt's: a retry outside this wrapper
    // that runs it again gets only the time the earlier attempts left.
    let deadline = request.call_deadline(budget);
    if deadline <= Instant::now() {
        // Nothing left: the body does not start again.
        drop(next);
        return timed_out(&tool, budget, true);
    }
    let caller = request.cancellation().clone();
    let (request, child) = request.child_cancellation();
    let mut body = pin!(next.run(request));

    let deadline_won = tokio::select! {
        biased;
        output = &mut body => return output,
        () = caller.cancelled() => false,
        () = tokio::time::sleep_until(deadline) => true,
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
        if !stopped {
            let mut message = format!("tool `{tool}` timed out after {} ms", budget.as_millis());
            message.push_str(&format!(
                " (it did not stop within the {} ms grace period and was abandoned)",
                grace.as_millis()
            ));
            message.push_str(ADVICE);
            return ExecuteOutput::err(ToolError::timeout(message));
        }
        return timed_out(&tool, budget, false);
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
            ExecuteOutput::err(ToolError::cancelled(format!(
                "the call of tool `{tool}` was cancelled; the tool did not stop within {} ms and was abandoned, so it may have done part of its work",
                grace.as_millis()
            )))
        }
    }
}

/// What the model is told to do about a `TIMEOUT`.
const ADVICE: &str = "; try a smaller piece of work, or ask the user to raise the timeout";

/// The `TIMEOUT` of a call whose budget ran out; `before_start` when an
/// attempt found it spent already (a retry after the deadline), so its body
/// never started again.
fn timed_out(tool: &str, budget: Duration, before_start: bool) -> ExecuteOutput {
    let mut message = format!("tool `{tool}` timed out after {} ms", budget.as_millis());
    if before_start {
        message.push_str(" (the call's budget was spent before this attempt; it did not start)");
    }
    message.push_str(ADVICE);
    ExecuteOutput::err(ToolError::timeout(message))
}
