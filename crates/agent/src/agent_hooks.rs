//! The agent's own hook points: a prompt is submitted, a batch of tool
//! calls is answered, the agent is about to stop, a turn ends on a model
//! error, a session starts or ends, the user is needed.
//!
//! They are waterfalls like the tool hook points: a listener gets the input
//! and `next`, and returns a decision (or delegates). A panicking listener
//! fails closed where that is safe (a prompt is blocked) and is ignored
//! where it is not (the agent stops, no context is added).

use std::sync::Arc;

use tack_core::hook::Waterfall;
use tack_core::tool::{Outcome, ToolCall};

/// Name of the prompt hook point.
pub const USER_PROMPT_SUBMIT: &str = "agent/user-prompt-submit";
/// Name of the stop hook point.
pub const STOP: &str = "agent/stop";
/// Name of the session-start hook point.
pub const SESSION_START: &str = "agent/session-start";
/// Name of the session-end hook point.
pub const SESSION_END: &str = "agent/session-end";
/// Name of the notification hook point.
pub const NOTIFICATION: &str = "agent/notification";
/// Name of the tool-batch hook point.
pub const POST_TOOL_BATCH: &str = "agent/post-tool-batch";
/// Name of the model-failure hook point.
pub const STOP_FAILURE: &str = "agent/stop-failure";

/// The user's prompt, before it reaches the history or the model.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptSubmit {
    /// The prompt.
    pub prompt: String,
}

/// What the prompt's listeners decided: block it, or let it through with
/// extra context.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptDecision {
    /// Why the prompt is blocked (it is not added and the model is not asked).
    pub blocked: Option<String>,
    /// Context added after the prompt.
    pub context: Vec<String>,
}

impl PromptDecision {
    /// Let the prompt through.
    pub fn accept() -> Self {
        Self::default()
    }

    /// Block the prompt with `reason`.
    pub fn block(mut self, reason: impl Into<String>) -> Self {
        self.blocked = Some(reason.into());
        self
    }

    /// Add context after the prompt.
    pub fn add_context(mut self, context: impl Into<String>) -> Self {
        self.context.push(context.into());
        self
    }
}

/// The agent is about to end its turn with an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StopCheck {
    /// The answer.
    pub answer: String,
    /// Whether the agent already goes on because a stop listener asked it
    /// to in this turn (so a listener can let it stop).
    pub stop_hook_active: bool,
}

/// Whether the agent stops.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StopDecision {
    /// Go on instead, telling the model this.
    pub continue_with: Option<String>,
}

impl StopDecision {
    /// Let the agent stop.
    pub fn stop() -> Self {
        Self::default()
    }

    /// Keep the agent going; `reason` is what the model is told.
    pub fn keep_going(reason: impl Into<String>) -> Self {
        Self {
            continue_with: Some(reason.into()),
        }
    }
}

/// A batch of tool calls the model made in one step, every call answered:
/// the results are in the history, and the model is not asked yet.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ToolBatch {
    /// The calls, as the model made them, in its order.
    pub calls: Vec<ToolCall>,
    /// Their outcomes, one per call, in the same order.
    pub outcomes: Vec<Arc<Outcome>>,
}

/// What the batch's listeners decided: context for the model, or the end
/// of the turn.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BatchDecision {
    /// Context added after the batch's results, before the model is asked
    /// again.
    pub context: Vec<String>,
    /// End the turn instead of asking the model again, for this reason
    /// (added to the history after the context, so the model reads it when
    /// the conversation goes on).
    pub stop: Option<String>,
}

impl BatchDecision {
    /// Ask the model again, adding nothing.
    pub fn accept() -> Self {
        Self::default()
    }

    /// Add context after the batch's results.
    pub fn add_context(mut self, context: impl Into<String>) -> Self {
        self.context.push(context.into());
        self
    }

    /// End the turn with `reason` (the first reason given is kept).
    pub fn stop(mut self, reason: impl Into<String>) -> Self {
        self.stop.get_or_insert_with(|| reason.into());
        self
    }
}

/// A turn ends because the model could not answer (after the model's own
/// retries).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModelFailure {
    /// The kind of error ([`ModelError::kind`](crate::ModelError::kind)):
    /// `rate_limit`, `authentication_failed`, `server_error`, ….
    pub kind: String,
    /// Its details ([`ModelError::details`](crate::ModelError::details)).
    pub details: String,
    /// The error as the user is shown it.
    pub message: String,
}

/// A session starts (`startup`) or resumes (`resume`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionStartInput {
    /// `startup` or `resume`.
    pub source: String,
}

/// A session ends.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionEndInput {
    /// Why, e.g. `exit`.
    pub reason: String,
}

/// The user is needed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NotificationInput {
    /// What kind, e.g. `permission_prompt`.
    pub kind: String,
    /// The message.
    pub message: String,
}

/// `agent/user-prompt-submit`.
pub type UserPromptSubmitHook = Waterfall<PromptSubmit, PromptDecision>;
/// `agent/stop`.
pub type StopHook = Waterfall<StopCheck, StopDecision>;
/// `agent/session-start`: context to add.
pub type SessionStartHook = Waterfall<SessionStartInput, Vec<String>>;
/// `agent/session-end`.
pub type SessionEndHook = Waterfall<SessionEndInput, ()>;
/// `agent/notification`.
pub type NotificationHook = Waterfall<NotificationInput, ()>;
/// `agent/post-tool-batch`.
pub type PostToolBatchHook = Waterfall<ToolBatch, BatchDecision>;
/// `agent/stop-failure`: observers only.
pub type StopFailureHook = Waterfall<ModelFailure, ()>;

/// The agent's hook points (cheap to clone: clones share the listeners).
///
/// ```
/// use tack_agent::{AgentHooks, PromptDecision};
/// let hooks = AgentHooks::new();
/// let _no_secrets = hooks.user_prompt_submit().tap("no-secrets", |input, next| async move {
///     if input.prompt.contains("password") {
///         return PromptDecision::accept().block("prompts must not contain passwords");
///     }
///     next.run(input).await
/// });
/// assert_eq!(hooks.user_prompt_submit().listener_count(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct AgentHooks {
    user_prompt_submit: UserPromptSubmitHook,
    stop: StopHook,
    session_start: SessionStartHook,
    session_end: SessionEndHook,
    notification: NotificationHook,
    post_tool_batch: PostToolBatchHook,
    stop_failure: StopFailureHook,
    /// A request to end the turn after the current tool batch.
    turn_end: std::sync::Arc<parking_lot::Mutex<Option<String>>>,
}

impl Default for AgentHooks {
    fn default() -> Self {
        Self::new()
    }
}

impl AgentHooks {
    /// Hook points with no listeners.
    pub fn new() -> Self {
        Self {
            user_prompt_submit: Waterfall::new(USER_PROMPT_SUBMIT, |_| async {
                PromptDecision::accept()
            }),
            stop: Waterfall::new(STOP, |_| async { StopDecision::stop() }),
            session_start: Waterfall::new(SESSION_START, |_| async { Vec::new() }),
            session_end: Waterfall::new(SESSION_END, |_| async {}),
            notification: Waterfall::new(NOTIFICATION, |_| async {}),
            post_tool_batch: Waterfall::new(POST_TOOL_BATCH, |_| async { BatchDecision::accept() }),
            stop_failure: Waterfall::new(STOP_FAILURE, |_| async {}),
            turn_end: Default::default(),
        }
    }

    /// Asks the agent to end its turn once the current batch of tool calls
    /// is answered (their results stay in the history), instead of asking
    /// the model again: e.g. a hook answered `"continue": false`. The turn
    /// ends `concluded`; `reason` is kept for the host to show. The first
    /// request of a batch wins.
    ///
    /// ```
    /// let hooks = tack_agent::AgentHooks::new();
    /// hooks.request_turn_end("the build is broken; fix it first");
    /// assert_eq!(hooks.take_turn_end().as_deref(), Some("the build is broken; fix it first"));
    /// assert_eq!(hooks.take_turn_end(), None);
    /// ```
    pub fn request_turn_end(&self, reason: impl Into<String>) {
        self.turn_end.lock().get_or_insert_with(|| reason.into());
    }

    /// Takes the pending request to end the turn, if any.
    pub fn take_turn_end(&self) -> Option<String> {
        self.turn_end.lock().take()
    }

    /// `agent/user-prompt-submit`.
    pub fn user_prompt_submit(&self) -> &UserPromptSubmitHook {
        &self.user_prompt_submit
    }

    /// `agent/stop`.
    pub fn stop(&self) -> &StopHook {
        &self.stop
    }

    /// `agent/session-start`.
    pub fn session_start(&self) -> &SessionStartHook {
        &self.session_start
    }

    /// `agent/session-end`.
    pub fn session_end(&self) -> &SessionEndHook {
        &self.session_end
    }

    /// `agent/notification`.
    pub fn notification(&self) -> &NotificationHook {
        &self.notification
    }

    /// `agent/post-tool-batch`: after every call of a model's batch is
    /// answered and its results are in the history, before the model is
    /// asked again (also after [`Agent::rerun`](crate::Agent::rerun); not
    /// when the turn was cancelled).
    pub fn post_tool_batch(&self) -> &PostToolBatchHook {
        &self.post_tool_batch
    }

    /// `agent/stop-failure`: a turn ends because the model could not
    /// answer; what the listeners do changes nothing.
    pub fn stop_failure(&self) -> &StopFailureHook {
        &self.stop_failure
    }

    /// Tells the `agent/notification` listeners (a panicking one is logged
    /// and ignored).
    pub async fn notify(&self, kind: impl Into<String>, message: impl Into<String>) {
        if !self.notification.has_listeners(None) {
            return;
        }
        let input = NotificationInput {
            kind: kind.into(),
            message: message.into(),
        };
        if let Err(error) = self.notification.dispatch(None, input).await {
            tracing::error!(%error, "an agent/notification listener failed");
        }
    }
}
