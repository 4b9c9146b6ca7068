//! Stage 5, finalize: [`tools/post-execute`](super::post_execute), then what
//! the call's run left behind (deferred context, a late cancellation, a
//! concluded turn), then the tool's `finalize_content`, once, for every
//! outcome of a known tool ([`Finalized`]).

use std::sync::{Arc, OnceLock};

use tack_core::hooks::{ExecutionRecord, PostDecision};
use tack_core::host::RunEffects;
use tack_core::host::{NewExecutionRecord, NewOutcome, NewToolExecution};

use tack_core::hook::AgentId;
use tack_core::host::Dispatch;
use tack_core::host::HookError;
use tack_core::tool::{Outcome, ToolCall, ToolError, ToolExecution};
use tokio_util::sync::CancellationToken;

use super::execute::{Executed, LATE_CANCELLATION_NOTE};
use super::options::CancelCause;
use super::{Pipeline, Stage};
use crate::registry::RegisteredTool;

/// A call's outcome in its final form, ready to be published. It is in the
/// allocation the caller gets back: the outcome is put there once, when it
/// is made (the same value `tools/post-execute` listeners see frozen), and
/// changed in place while nothing else holds it.
pub(crate) struct Finalized {
    pub(crate) agent: Option<AgentId>,
    pub(crate) execution: Option<Arc<ToolExecution>>,
    pub(crate) outcome: Arc<Outcome>,
}

/// Where finalization stands: done, or waiting for `tools/post-execute`.
pub(crate) enum Finalizing {
    /// Finalized at once (no `tools/post-execute` listener reaches the call).
    Done(Finalized),
    /// The listeners' dispatch to await, then [`Pipeline::resume_finalize`].
    Pending(PendingFinalize),
}

/// Finalization that waits for `tools/post-execute` listeners: their
/// dispatch (the one thing awaited), and what the call needs after it.
pub(crate) struct PendingFinalize {
    pub(crate) dispatch: Dispatch<ExecutionRecord, PostDecision>,
    rest: PostRest,
}

/// What a call waiting for `tools/post-execute` needs afterwards.
struct PostRest {
    tool: Arc<RegisteredTool>,
    agent: Option<AgentId>,
    execution: Option<Arc<ToolExecution>>,
    effects: Option<RunEffects>,
    frozen: Arc<Outcome>,
}

impl Pipeline {
    /// Post-processes and finalizes `executed`: at once when no
    /// `tools/post-execute` listener reaches the call, else the listeners'
    /// dispatch to await and hand to [`resume_finalize`](Self::resume_finalize).
    /// `cause` explains a cancellation the call's turn made after a sibling
    /// failed.
    pub(crate) fn finalize(
        &self,
        executed: Executed,
        cause: Option<&OnceLock<CancelCause>>,
    ) -> Finalizing {
        let Executed {
            call,
            tool,
            execution,
            effects,
            mut outcome,
        } = executed;
        if let Some(effects) = &effects {
            // Deferred context survives a failure of the same call.
            let deferred = effects.take_deferred();
            if !deferred.is_empty() {
                Arc::make_mut(&mut outcome).deferred_context = deferred;
            }
        }
        if let Some(content) = cause
            .and_then(OnceLock::get)
            .and_then(|cause| cause.explain(&outcome))
        {
            Arc::make_mut(&mut outcome).content = content.into();
        }
        let agent = call.agent;
        self.record(&outcome.call_id, Stage::PostExecute);
        let hook = self.hooks().post_execute();
        if hook.listener_count() != 0 {
            let record = ExecutionRecord::new(agent.clone(), execution.clone(), outcome.clone());
            match hook.try_dispatch(agent.as_ref(), record) {
                Ok(dispatch) => {
                    return Finalizing::Pending(PendingFinalize {
                        dispatch,
                        rest: PostRest {
                            tool,
                            agent,
                            execution,
                            effects,
                            frozen: outcome,
                        },
                    });
                }
                // Listeners, but none for this agent: the record (and its
                // share of the outcome) is dropped.
                Err(record) => drop(record),
            }
        }
        // Nothing waited since the execute stage looked for a late
        // cancellation: no need to look again.
        self.conclude(&tool, effects.as_ref(), &mut outcome, None);
        Finalizing::Done(Finalized {
            agent,
            execution,
            outcome,
        })
    }

    /// Finalization after the `tools/post-execute` listeners decided.
    /// `kept`: the caller's signal, unless the body's run took it into the
    /// execution.
    pub(crate) fn resume_finalize(
        &self,
        pending: PendingFinalize,
        decision: Result<PostDecision, HookError>,
        kept: Option<&CancellationToken>,
    ) -> Finalized {
        let PostRest {
            tool,
            agent,
            execution,
            effects,
            frozen,
        } = pending.rest;
        let mut outcome = self.post_processed(&tool, execution.as_ref(), frozen, decision);
        let cancel = kept.or_else(|| execution.as_ref()?.run_cancellation());
        self.conclude(&tool, effects.as_ref(), &mut outcome, cancel);
        Finalized {
            agent,
            execution,
            outcome,
        }
    }

    /// After `tools/post-execute`: the late-cancellation note (when `cancel`
    /// is given: the call waited for listeners since the execute stage
    /// looked), a concluded turn, `finalize_content`. The outcome is changed
    /// in place when nothing else holds it (a `tools/post-execute` listener
    /// that kept the frozen outcome keeps it unchanged: the change goes to a
    /// copy).
    fn conclude(
        &self,
        tool: &RegisteredTool,
        effects: Option<&RunEffects>,
        outcome: &mut Arc<Outcome>,
        cancel: Option<&CancellationToken>,
    ) {
        let late = outcome.is_success()
            && cancel.is_some_and(CancellationToken::is_cancelled)
            && !outcome.notes.iter().any(|n| n == LATE_CANCELLATION_NOTE);
        let concluded = outcome.is_success() && effects.is_some_and(|e| e.concluded());
        if late || concluded != outcome.concluded_turn {
            let outcome = Arc::make_mut(outcome);
            if late {
                outcome.notes.push(LATE_CANCELLATION_NOTE.to_owned());
            }
            outcome.concluded_turn = concluded;
        }
        self.finalize_content(tool, outcome);
    }

    /// The tool's `finalize_content` (total: a panicking finalizer keeps the content).
    fn finalize_content(&self, tool: &RegisteredTool, outcome: &mut Arc<Outcome>) {
        self.record(&outcome.call_id, Stage::Finalize);
        if let Some(content) = tool.definition.finalize_content(outcome) {
            Arc::make_mut(outcome).content = content;
        }
    }

    /// A call refused before any stage ran (a duplicate id in a batch):
    /// finalized as its tool's when the name resolves, then published.
    pub(crate) fn refuse_unrun(&self, call: ToolCall, failure: ToolError) -> Arc<Outcome> {
        self.record(&call.call_id, Stage::Resolve);
        let mut outcome = Arc::new(Outcome::failure(
            call.call_id.clone(),
            call.name.clone(),
            failure,
        ));
        if let Ok(tool) = self.lookup(&call) {
            self.finalize_content(&tool, &mut outcome);
        }
        self.publish(Finalized {
            agent: call.agent,
            execution: None,
            outcome,
        })
    }
}
