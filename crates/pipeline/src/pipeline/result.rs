//! Stage 6, result: the finalized outcome frozen and shown to the
//! `tools/result` observers; what every caller gets back.

use std::sync::Arc;

use tack_core::hooks::ExecutionRecord;
use tack_core::host::{NewExecutionRecord, NewOutcome};
use tack_core::tool::Outcome;
use tokio_util::sync::CancellationToken;

use super::finalize::Finalized;
use super::resolve::Unresolved;
use super::{Pipeline, Stage};

impl Pipeline {
    /// Publishes the outcome: notifies the `tools/result` observers.
    pub(crate) fn publish(&self, finalized: Finalized) -> Arc<Outcome> {
        let Finalized {
            agent,
            execution,
            mut outcome,
        } = finalized;
        self.record(&outcome.call_id, Stage::Result);
        // A rewrite of the arguments is part of the record (rewrite.rs).
        if let Some(execution) = execution
            .as_ref()
            .filter(|e| e.original_arguments().is_some())
        {
            Arc::make_mut(&mut outcome).record_rewrite(execution);
        }
        let observers = self.hooks().result();
        // The count only: without any observer, no record is built and no
        // listener list is read; with observers, `notify` reads it once (and
        // reaches none when none is this agent's).
        if observers.listener_count() != 0 {
            // The record takes the agent: nothing after it needs it.
            let record = Arc::new(ExecutionRecord::new(agent, execution, outcome.clone()));
            observers.notify(record.agent.as_ref(), &record);
        }
        match outcome.failure_info() {
            None => tracing::debug!(status = "ok", "tool call finished"),
            Some(f) => {
                tracing::debug!(status = "error", code = %f.code(), message = %f.message(), "tool call finished")
            }
        }
        outcome
    }

    /// Publishes the outcome of a call whose name did not resolve (no tool:
    /// nothing to post-process or finalize).
    pub(crate) fn publish_unresolved(
        &self,
        unresolved: Unresolved,
        cancel: &CancellationToken,
    ) -> Arc<Outcome> {
        let (call, failure) = self.unresolved_failure(unresolved, cancel);
        let outcome = Arc::new(Outcome::failure(
            call.call_id.clone(),
            call.name.clone(),
            failure,
        ));
        self.publish(Finalized {
            agent: call.agent,
            execution: None,
            outcome,
        })
    }
}
