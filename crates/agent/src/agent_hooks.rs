//! The agent's own hook points: a prompt is submitted, the agent is about to
//! stop, a session starts or ends, the user is needed.
//!
//! They are waterfalls like the tool hook points: a listener gets the input
//! and `next`, and returns a decision (or delegates). A panicking listener
//! fails closed where that is safe (a prompt is blocked) and is ignored
//! where it is not (the agent stops, no context is added).

use tack_core::hook::Waterfall;

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
