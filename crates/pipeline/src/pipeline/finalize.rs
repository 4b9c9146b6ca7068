//! Stage 5, finalize: [`tools/post-execute`](super::post_execute), then what
//! the call's run left behind (deferred context, a late cancellation, a
//! concluded turn), then the tool's `finalize_content`, once, for every
//! outcome of a known tool ([`Finalized`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use tack_core::host::NewOutcome;
use tack_core::host::RunEffects;

use tack_core::hook::AgentId;
use tack_core::tool::{Failure, Outcome, ToolCall, ToolExecution};
use tokio_util::sync::CancellationToken;

use super::execute::{Executed, LATE_CANCELLATION_NOTE};
use super::options::CancelCause;
use super::{Pipeline, Stage};
use crate::registry::RegisteredTool;

/// A call's outcome in its final form, ready to be frozen and published.
pub(crate) struct Finalized {
    pub(crate) agent: Option<AgentId>,
    pub(crate) execution: Option<Arc<ToolExecution>>,
    pub(crate) outcome: Outcome,
}

/// Finalization that waits for `tools/post-execute` listeners.
pub(crate) type PendingFinalize<'a> = Pin<Box<dyn Future<Output = Finalized> + Send + 'a>>;

impl Pipeline {
    /// Post-processes and finalizes `executed`: at once when no
    /// `tools/post-execute` listener reaches the call (no future is built),
    /// else as a boxed future to await. `cause` explains a cancellation the
    /// call's turn made after a sibling failed.
    pub(crate) fn finalize<'a>(
        &'a self,
        executed: Executed,
        cancel: &'a CancellationToken,
        cause: Option<&OnceLock<CancelCause>>,
    ) -> Result<Finalized, PendingFinalize<'a>> {
        let Executed {
            call,
            tool,
            execution,
            effects,
            mut outcome,
        } = executed;
        if let Some(effects) = &effects {
            // Deferred context survives a failure of the same call.
            outcome.deferred_context = effects.take_deferred();
        }
        if let Some(content) = cause
            .and_then(OnceLock::get)
            .and_then(|cause| cause.explain(&outcome))
        {
            outcome.content = content;
        }
        let agent = call.agent;
        self.record(&outcome.call_id, Stage::PostExecute);
        if !self.hooks().post_execute().has_listeners(agent.as_ref()) {
            return Ok(self.conclude(tool, agent, execution, effects, outcome, cancel));
        }
        Err(Box::pin(async move {
            let outcome = self
                .post_process(&tool, agent.as_ref(), execution.as_ref(), outcome)
                .await;
            self.conclude(tool, agent, execution, effects, outcome, cancel)
        }))
    }

    /// After `tools/post-execute`: the late-cancellation note, a concluded
    /// turn, `finalize_content`.
    fn conclude(
        &self,
        tool: Arc<RegisteredTool>,
        agent: Option<AgentId>,
        execution: Option<Arc<ToolExecution>>,
        effects: Option<RunEffects>,
        mut outcome: Outcome,
        cancel: &CancellationToken,
    ) -> Finalized {
        if outcome.is_success()
            && cancel.is_cancelled()
            && !outcome.notes.iter().any(|n| n == LATE_CANCELLATION_NOTE)
        {
            outcome.notes.push(LATE_CANCELLATION_NOTE.to_owned());
        }
        outcome.concluded_turn =
            outcome.is_success() && effects.as_ref().is_some_and(|e| e.concluded());
        let outcome = self.finalize_content(&tool, outcome);
        Finalized {
            agent,
            execution,
            outcome,
        }
    }

    /// The tool's `finalize_content` (total: a panicking finalizer keeps the content).
    fn finalize_content(&self, tool: &RegisteredTool, mut outcome: Outcome) -> Outcome {
        self.record(&outcome.call_id, Stage::Finalize);
        if let Some(content) = tool.definition.finalize_content(&outcome) {
            outcome.content = content;
        }
        outcome
    }

    /// A call refused before any stage ran (a duplicate id in a batch):
    /// finalized as its tool's when the name resolves, then published.
    pub(crate) fn refuse_unrun(&self, call: ToolCall, failure: Failure) -> Arc<Outcome> {
        self.record(&call.call_id, Stage::Resolve);
        let mut outcome = Outcome::failure(call.call_id.clone(), call.name.clone(), failure);
        if let Ok(tool) = self.lookup(&call) {
            outcome = self.finalize_content(&tool, outcome);
        }
        self.publish(Finalized {
            agent: call.agent,
            execution: None,
            outcome,
        })
    }
}
