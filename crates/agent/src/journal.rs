//! Where a host journals the loop's effects (a durable-execution engine).

use std::sync::Arc;

use async_trait::async_trait;
use tack_core::host::ToolSchema;
use tack_core::tool::{Outcome, ToolCall};
use tack_pipeline::Pipeline;
use tokio_util::sync::CancellationToken;

use crate::message::{Message, Reply};
use crate::model::observe::ModelObserver;
use crate::model::{ChatModel, ModelError};

/// The loop's two kinds of effect, handed to a host that records them:
/// each model request and each tool call.
/// [`Agent::run_journaled`](crate::Agent::run_journaled) calls these instead of asking the model
/// and running the batch itself, so a host on a durable-execution engine
/// can record each step's result and, on a replay after a crash, return
/// the recorded result instead of running the step again.
///
/// A journaled batch runs its calls one at a time, in model order (a
/// journal records steps in a fixed order); everything else in the loop
/// (history, events, deferred context, hooks, a tool concluding the turn)
/// is the same as [`Agent::run`](crate::Agent::run).
#[async_trait]
pub trait StepJournal: Send + Sync {
    /// The model's reply to `messages`: ask `model` (reporting to
    /// `observer`), or return the reply recorded for this step.
    ///
    /// # Errors
    ///
    /// The model's error.
    async fn model_step(
        &self,
        model: &Arc<dyn ChatModel>,
        messages: &[Message],
        tools: &[ToolSchema],
        observer: &dyn ModelObserver,
    ) -> Result<Reply, ModelError>;

    /// The outcome of `call`: run it through `pipeline` under `cancel`, or
    /// return the outcome recorded for it.
    async fn tool_call(
        &self,
        pipeline: &Pipeline,
        call: ToolCall,
        cancel: CancellationToken,
    ) -> Arc<Outcome>;
}
