//! The session's journal: each model request and each tool call is a
//! Restate `ctx.run` step.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use async_trait::async_trait;
use parking_lot::Mutex;
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use tack_agent::{ChatModel, Message, ModelError, ModelObserver, Reply, Retry, StepJournal, Usage};
use tack_core::host::ToolSchema;
use tack_core::host::{NewOutcome, NewToolError};
use tack_core::policy::{ApprovalOutcome, ApprovalRequest};
use tack_core::tool::{ErrorCode, Outcome, ToolCall, ToolError};
use tack_pipeline::Pipeline;
use tokio_util::sync::CancellationToken;

use crate::approval::{ApprovalAnswer, ApprovalScope, PendingApproval, SCOPE};
use crate::stored::{ModelRecord, StoredReply};

/// The state key of the approval a session waits for.
pub const PENDING_APPROVAL: &str = "pending_approval";

/// The message of an interrupted call that was not run again (its
/// outcome's code is `EXECUTION_FAILED`).
pub const INTERRUPTED_MESSAGE: &str = "the call was interrupted (the process running it stopped) before its outcome was recorded; it may or may not have taken effect, and it was not run again because its tool is not declared idempotent";

/// How many times one call may be asked for approval before it is refused.
const MAX_APPROVAL_ROUNDS: usize = 8;

/// One journaled run of a call: its frozen outcome, or the approval it
/// needs before its body may run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum CallStep {
    Done(Box<Outcome>),
    NeedsApproval(Box<ApprovalRequest>),
}

/// The [`StepJournal`] of one invocation of a session's `turn` handler.
pub(crate) struct RestateJournal<'a, 'ctx> {
    pub(crate) ctx: &'a ObjectContext<'ctx>,
    model_steps: AtomicUsize,
}

impl<'a, 'ctx> RestateJournal<'a, 'ctx> {
    pub(crate) fn new(ctx: &'a ObjectContext<'ctx>) -> Self {
        Self {
            ctx,
            model_steps: AtomicUsize::new(0),
        }
    }

    /// Journals a marker that the call's run `name` starts; whether the
    /// marker was recorded by an earlier attempt of this invocation (the
    /// call was started before and its outcome never recorded).
    async fn started_before(&self, name: &str) -> Result<bool, TerminalError> {
        let fresh = Arc::new(AtomicBool::new(false));
        let mark = Arc::clone(&fresh);
        self.ctx
            .run(move || async move {
                mark.store(true, Ordering::SeqCst);
                Ok(())
            })
            .name(format!("start {name}"))
            .await?;
        Ok(!fresh.load(Ordering::SeqCst))
    }

    /// One journaled run of `call` with the approval `answers` given so far.
    async fn run_once(
        &self,
        pipeline: &Pipeline,
        call: &ToolCall,
        cancel: &CancellationToken,
        answers: &[ApprovalOutcome],
        round: usize,
    ) -> Result<CallStep, TerminalError> {
        let name = if round == 0 {
            format!("call {}", call.call_id)
        } else {
            format!("call {} (approval {round})", call.call_id)
        };
        let interrupted = self.started_before(&name).await?;
        let idempotent = pipeline
            .registry()
            .get(&call.name, call.agent.as_ref())
            .is_some_and(|tool| tool.definition().is_idempotent());
        let (pipeline, call, cancel) = (pipeline.clone(), call.clone(), cancel.clone());
        let answers = answers.to_vec();
        let Json(step) = self
            .ctx
            .run(move || async move {
                if interrupted && !idempotent {
                    return Ok(Json(CallStep::Done(Box::new(interrupted_outcome(&call)))));
                }
                Ok(Json(run_call(&pipeline, call, cancel, answers).await))
            })
            .name(name)
            .await?;
        Ok(step)
    }
}

/// Runs `call` with the approval answers given so far: its outcome, or the
/// question an approval asked that has no answer yet (the call is then
/// dropped before its body ran).
async fn run_call(
    pipeline: &Pipeline,
    call: ToolCall,
    cancel: CancellationToken,
    answers: Vec<ApprovalOutcome>,
) -> CallStep {
    let (scope, mut asked) = ApprovalScope::new(answers);
    let run = SCOPE.scope(scope, pipeline.execute(call, cancel));
    tokio::pin!(run);
    tokio::select! {
        outcome = &mut run => CallStep::Done(Box::new((*outcome.as_logged()).clone())),
        Ok(request) = &mut asked => CallStep::NeedsApproval(Box::new(request)),
    }
}

/// The outcome of an interrupted call that is not run again.
fn interrupted_outcome(call: &ToolCall) -> Outcome {
    Outcome::failure(
        call.call_id.clone(),
        call.name.clone(),
        ToolError::from_code(ErrorCode::ExecutionFailed, INTERRUPTED_MESSAGE),
    )
}

fn host_fault(call: &ToolCall, error: &TerminalError) -> Arc<Outcome> {
    Arc::new(Outcome::failure(
        call.call_id.clone(),
        call.name.clone(),
        ToolError::from_code(
            ErrorCode::Internal,
            format!("the durable journal failed: {error}"),
        ),
    ))
}

#[async_trait]
impl StepJournal for RestateJournal<'_, '_> {
    async fn model_step(
        &self,
        model: &Arc<dyn ChatModel>,
        messages: &[Message],
        tools: &[ToolSchema],
        observer: &dyn ModelObserver,
    ) -> Result<Reply, ModelError> {
        let step = self.model_steps.fetch_add(1, Ordering::SeqCst);
        let (model, messages, tools) = (Arc::clone(model), messages.to_vec(), tools.to_vec());
        let recorded = self
            .ctx
            .run(move || async move {
                let recorder = Recorder::default();
                let reply = model
                    .complete_observed(&messages, &tools, &recorder)
                    .await
                    .map_err(|e| TerminalError::new(e.to_string()))?;
                Ok(Json(ModelRecord {
                    reply: StoredReply::from_reply(&reply),
                    streamed: recorder.streamed.lock().clone(),
                    usage: *recorder.usage.lock(),
                }))
            })
            .name(format!("model {step}"))
            .await;
        let Json(record) = recorded.map_err(|e| ModelError::Config(format!("{}", e)))?;
        if !record.streamed.is_empty() {
            observer.text_delta(&record.streamed);
        }
        if let Some(usage) = record.usage {
            observer.usage(usage);
        }
        Ok(record.reply.to_reply())
    }

    async fn tool_call(
        &self,
        pipeline: &Pipeline,
        call: ToolCall,
        cancel: CancellationToken,
    ) -> Arc<Outcome> {
        let mut answers = Vec::new();
        for round in 0..MAX_APPROVAL_ROUNDS {
            let step = match self
                .run_once(pipeline, &call, &cancel, &answers, round)
                .await
            {
                Ok(step) => step,
                Err(error) => return host_fault(&call, &error),
            };
            let request = match step {
                CallStep::Done(outcome) => return Arc::new(*outcome),
                CallStep::NeedsApproval(request) => *request,
            };
            let (awakeable, answer) = self.ctx.awakeable::<Json<ApprovalAnswer>>();
            self.ctx.set(
                PENDING_APPROVAL,
                Json(PendingApproval { awakeable, request }),
            );
            let answer = answer.await;
            self.ctx.clear(PENDING_APPROVAL);
            match answer {
                Ok(Json(answer)) => answers.push(answer.to_outcome()),
                Err(error) => answers.push(ApprovalOutcome::Unavailable {
                    reason: Some(format!("the approval was rejected: {error}")),
                }),
            }
        }
        Arc::new(Outcome::failure(
            call.call_id.clone(),
            call.name.clone(),
            ToolError::from_code(
                ErrorCode::Denied,
                format!("the call asked for approval more than {MAX_APPROVAL_ROUNDS} times"),
            ),
        ))
    }
}

/// Keeps what a model reports while it answers, for the journal.
#[derive(Default)]
struct Recorder {
    streamed: Mutex<String>,
    usage: Mutex<Option<Usage>>,
}

impl ModelObserver for Recorder {
    fn text_delta(&self, text: &str) {
        self.streamed.lock().push_str(text);
    }

    fn usage(&self, usage: Usage) {
        *self.usage.lock().get_or_insert_default() += usage;
    }

    fn retry(&self, _retry: &Retry) {}
}
