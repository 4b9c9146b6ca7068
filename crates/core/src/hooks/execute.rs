//! `tools/execute`: wrappers around the tool body.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::context::ToolRunContext;
use crate::hook::Provenance;
use crate::tool::{BodyFuture, ToolError, ToolExecution, ToolHandler};

/// The input of `tools/execute`: the run context the body will get (and
/// through it the execution), and the body itself (the hook's default runs
/// it).
///
/// A wrapper may replace the cancellation signal — the only stage allowed to —
/// with [`child_cancellation`](Self::child_cancellation), which keeps the
/// caller's cancellation reaching the body.
#[derive(Clone)]
pub struct ExecuteRequest {
    pub(crate) context: ToolRunContext,
    pub(crate) handler: Arc<dyn ToolHandler>,
    pub(crate) timeout: Option<Duration>,
}

impl fmt::Debug for ExecuteRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecuteRequest")
            .field("call_id", self.execution().call_id())
            .field("tool", &self.execution().name())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl ExecuteRequest {
    /// The execution.
    pub fn execution(&self) -> &Arc<ToolExecution> {
        self.context.execution()
    }

    /// The context the body will run with.
    pub fn context(&self) -> &ToolRunContext {
        &self.context
    }

    /// The time budget the tool declared.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// When this call's time budget ends, on tokio's clock (wait for it with
    /// `tokio::time::sleep_until`). The first wrapper that asks fixes it, at
    /// `budget` from now; every later ask for the same call — by any
    /// wrapper, with any budget — gets that same instant. So a deadline
    /// wrapper that a retry runs again (through [`Next::fork`]) gives the
    /// second attempt only the time the first one left, and the call as a
    /// whole keeps its budget.
    ///
    /// [`Next::fork`]: crate::hook::Next::fork
    ///
    /// ```
    /// use std::time::Duration;
    /// use tack_core::hooks::ExecuteRequest;
    ///
    /// fn attempt_budget(request: &ExecuteRequest) -> Duration {
    ///     let deadline = request.call_deadline(Duration::from_secs(5));
    ///     deadline.saturating_duration_since(tokio::time::Instant::now())
    /// }
    /// ```
    pub fn call_deadline(&self, budget: Duration) -> Instant {
        self.context.effects().deadline(budget)
    }

    /// The cancellation signal the body will get.
    pub fn cancellation(&self) -> &CancellationToken {
        self.context.cancellation()
    }

    /// Replaces the body's cancellation signal with a child of the current one
    /// (so the caller's cancellation still reaches the body) and returns the
    /// child, which the wrapper may cancel on its own (a deadline).
    pub fn child_cancellation(mut self) -> (Self, CancellationToken) {
        let child = self.context.cancellation().child_token();
        self.context = self.context.with_cancellation(child.clone());
        (self, child)
    }

    /// Runs the body with this request's arguments and context: what the hook's
    /// default does. A signal that is already cancelled when the body would
    /// start (say, the caller cancelled while a wrapper was waiting) means the
    /// body never starts: the output is a `CANCELLED` error and the run
    /// effects do not record a dispatch.
    pub async fn run_body(self) -> ExecuteOutput {
        match self.start() {
            Ok(body) => body.await.into(),
            Err(output) => output,
        }
    }

    /// Starts the body, or answers `CANCELLED` without starting it when the
    /// signal is already cancelled.
    pub(crate) fn start(self) -> Result<BodyFuture, ExecuteOutput> {
        if self.context.is_cancelled() {
            let error = ToolError::cancelled_before_start(self.execution().name());
            return Err(ExecuteOutput::err(error));
        }
        self.context.effects().mark_dispatched();
        let arguments = self.execution().arguments().clone();
        Ok(self.handler.call(arguments, self.context))
    }
}

/// The output of `tools/execute`: the body's value or error, and who produced
/// it (stamped by the hook point: the default for the body, or the wrapper
/// that short-circuited or replaced it, e.g. a timeout).
///
/// ```
/// use serde_json::json;
/// use tack_core::hooks::ExecuteOutput;
/// use tack_core::tool::ToolError;
/// let out = ExecuteOutput::err(ToolError::timeout("timed out after 5000 ms"));
/// assert!(out.result().is_err());
/// assert!(ExecuteOutput::ok(json!(1)).result().is_ok());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ExecuteOutput {
    result: Result<Value, ToolError>,
    provenance: Option<Provenance>,
}

impl ExecuteOutput {
    /// A value (validated against the output schema afterwards).
    pub fn ok(value: Value) -> Self {
        Ok(value).into()
    }

    /// A failure.
    pub fn err(error: ToolError) -> Self {
        Err(error).into()
    }

    /// The value or error.
    pub fn result(&self) -> &Result<Value, ToolError> {
        &self.result
    }

    /// Takes the value or error.
    pub fn into_result(self) -> Result<Value, ToolError> {
        self.result
    }

    /// Who produced it.
    pub fn provenance(&self) -> Option<&Provenance> {
        self.provenance.as_ref()
    }

    /// Splits into the value or error and who produced it.
    pub fn into_parts(self) -> (Result<Value, ToolError>, Option<Provenance>) {
        (self.result, self.provenance)
    }

    pub(crate) fn provenance_slot(&mut self) -> Option<&mut Option<Provenance>> {
        Some(&mut self.provenance)
    }
}

impl From<Result<Value, ToolError>> for ExecuteOutput {
    fn from(result: Result<Value, ToolError>) -> Self {
        Self {
            result,
            provenance: None,
        }
    }
}
