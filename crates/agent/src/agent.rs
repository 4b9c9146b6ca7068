//! The loop.

use std::sync::Arc;

use tack_core::hook::{AgentId, Disposer};
use tack_core::hooks::CodeDispatchEvent;
use tack_core::tool::{ContentBlock, DeferredContext, Outcome, ToolCall};
use tack_pipeline::{Pipeline, TurnScheduler};
use tokio_util::sync::CancellationToken;

use crate::agent_hooks::{
    AgentHooks, ModelFailure, PromptSubmit, SessionEndInput, SessionStartInput, StopCheck,
    ToolBatch,
};
use crate::bus::EventBus;
use crate::event::{Event, TurnEndReason};
use crate::journal::StepJournal;
use crate::log::writer::LogError;
use crate::message::{Message, Reply};
use crate::model::observe::{ModelObserver, Retry, Usage};
use crate::model::{ChatModel, ModelError};

/// The default step limit: model calls per turn.
pub const DEFAULT_MAX_STEPS: usize = 16;

/// The name of the agent's `tools/code-dispatch` listener (it writes the
/// sub-calls of `run_code` programs to the session log).
pub const CODE_DISPATCH_LISTENER: &str = "tack-agent/session-log";

/// The system prompt used when none is given.
/// The system prompt an [`Agent`] starts with unless the builder sets another.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are a coding agent working in a workspace through tools. \
Use a tool when the user's request needs one; read tool errors and adjust; answer in text when done.";

/// What one [`Agent::step`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepOutcome {
    /// The model answered in text.
    Answered(String),
    /// A batch of tool calls ran; `concluded` if a tool concluded the turn.
    ToolsRan {
        /// How many calls ran.
        calls: usize,
        /// Whether a tool concluded the turn.
        concluded: bool,
    },
    /// The session's cancellation signal fired before or while the model was
    /// asked: nothing was added to the history.
    Cancelled,
    /// The model replied with neither text nor a tool call (an empty batch):
    /// a malformed reply. Nothing was added to the history.
    EmptyReply,
}

/// How a turn ([`Agent::run`]) ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunEnd {
    /// The model answered in text.
    Answered(String),
    /// A tool concluded the turn.
    Concluded,
    /// The step limit was reached before an answer.
    StepLimit {
        /// The limit.
        steps: usize,
    },
    /// The cancellation signal fired: running calls ended `CANCELLED` (their
    /// results are in the history and the log) and the model was not asked
    /// again.
    Cancelled,
    /// The model replied with neither text nor a tool call, so the turn
    /// ended without an answer (`turn/end` reason `empty_reply`).
    EmptyReply,
    /// An `agent/user-prompt-submit` listener blocked the prompt: it was not
    /// added and the model was not asked (`turn/end` reason `prompt_blocked`).
    PromptBlocked {
        /// Why.
        reason: String,
    },
}

/// The source of the contexts agent hooks add.
pub const HOOK_CONTEXT_SOURCE: &str = "hooks";

/// Why the loop stopped early. Tool failures never land here: they are
/// content the model reads.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The model could not answer.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The session log could not be written: the session stops rather than
    /// run unrecorded.
    #[error("{0}")]
    Log(String),
}

impl From<LogError> for AgentError {
    fn from(e: LogError) -> Self {
        AgentError::Log(e.to_string())
    }
}

/// An agent loop over a pipeline: history, model, scheduler, events.
///
/// See the [crate documentation](crate) for an example.
pub struct Agent {
    model: Arc<dyn ChatModel>,
    scheduler: TurnScheduler,
    bus: Arc<EventBus>,
    history: Vec<Message>,
    system_prompt: String,
    max_steps: usize,
    cancel: CancellationToken,
    observer: Option<Arc<dyn ModelObserver>>,
    usage: Usage,
    hooks: AgentHooks,
    agent: Option<AgentId>,
    /// Logs the sub-calls of `run_code` programs (`tools/code-dispatch`).
    _code_dispatch: Disposer,
}

/// The agent's own listener goes with it: agents come and go over one
/// long-lived pipeline (a durable endpoint builds one per turn).
impl Drop for Agent {
    fn drop(&mut self) {
        self._code_dispatch.dispose();
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.model.name())
            .field("history", &self.history.len())
            .field("max_steps", &self.max_steps)
            .finish_non_exhaustive()
    }
}

/// Builds an [`Agent`].
#[must_use]
pub struct AgentBuilder {
    model: Arc<dyn ChatModel>,
    pipeline: Pipeline,
    bus: Option<Arc<EventBus>>,
    system_prompt: String,
    max_steps: usize,
    cancel: CancellationToken,
    observer: Option<Arc<dyn ModelObserver>>,
    history: Vec<Message>,
    usage: Usage,
    hooks: AgentHooks,
    agent: Option<AgentId>,
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder").finish_non_exhaustive()
    }
}

impl AgentBuilder {
    /// Where events go (default: a bus with no log and no observers).
    pub fn events(mut self, bus: Arc<EventBus>) -> Self {
        self.bus = Some(bus);
        self
    }

    /// The system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = prompt.into();
        self
    }

    /// The step limit: model calls per turn. It is at least 1, so 0 counts
    /// as 1; a host taking it from a user should refuse 0 (`tack` does).
    pub fn max_steps(mut self, steps: usize) -> Self {
        self.max_steps = steps.max(1);
        self
    }

    /// The session's cancellation signal (each batch runs under a child).
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Receives the model's text as it arrives and its retries (token
    /// usage is also logged by the agent as `model/usage` events).
    pub fn model_observer(mut self, observer: Arc<dyn ModelObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Starts from an earlier session's history and token usage (see
    /// [`history_from_records`](crate::history_from_records)): the next turn
    /// continues that conversation.
    pub fn resume(mut self, history: Vec<Message>, usage: Usage) -> Self {
        self.history = history;
        self.usage = usage;
        self
    }

    /// The agent's hook points (default: fresh ones with no listeners); a
    /// host keeps a clone to attach listeners.
    pub fn hooks(mut self, hooks: AgentHooks) -> Self {
        self.hooks = hooks;
        self
    }

    /// The agent's id in the registry (default: none, the unmasked view).
    /// The model is offered the tools this agent sees, and every call the
    /// model makes is tagged with this id — replacing any id the model put
    /// there — so the registry's per-agent masks
    /// (`ToolRegistry::restrict`) and presentation apply to the loop: a tool
    /// masked for the agent is absent from its schemas and ends
    /// `UNKNOWN_TOOL` if called.
    pub fn agent(mut self, id: impl Into<AgentId>) -> Self {
        self.agent = Some(id.into());
        self
    }

    /// The agent. It logs the sub-calls `run_code` programs make (the
    /// registry's `tools/code-dispatch` events) for as long as it lives.
    pub fn build(self) -> Agent {
        let bus = self.bus.unwrap_or_else(|| Arc::new(EventBus::new(None)));
        let sink = Arc::clone(&bus);
        // A failed write is kept by the bus and stops the loop at its next event.
        let code_dispatch = self.pipeline.hooks().code_dispatch().tap(
            CODE_DISPATCH_LISTENER,
            move |event: &Arc<CodeDispatchEvent>| {
                let _ = sink.emit(Event::from(&**event));
            },
        );
        Agent {
            model: self.model,
            scheduler: TurnScheduler::new(self.pipeline),
            bus,
            _code_dispatch: code_dispatch,
            history: self.history,
            system_prompt: self.system_prompt,
            max_steps: self.max_steps,
            cancel: self.cancel,
            observer: self.observer,
            usage: self.usage,
            hooks: self.hooks,
            agent: self.agent,
        }
    }
}

impl Agent {
    /// A builder for an agent asking `model` and calling tools through
    /// `pipeline` (the tools of its registry).
    pub fn builder(model: Arc<dyn ChatModel>, pipeline: Pipeline) -> AgentBuilder {
        AgentBuilder {
            model,
            pipeline,
            bus: None,
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_owned(),
            max_steps: DEFAULT_MAX_STEPS,
            cancel: CancellationToken::new(),
            observer: None,
            history: Vec::new(),
            usage: Usage::default(),
            hooks: AgentHooks::new(),
            agent: None,
        }
    }

    /// The agent's hook points.
    pub fn hooks(&self) -> &AgentHooks {
        &self.hooks
    }

    fn push_hook_context(&mut self, hook: &str, text: String) -> Result<(), AgentError> {
        let context = DeferredContext::text_note(text).with_source(HOOK_CONTEXT_SOURCE);
        self.emit(Event::HookContext {
            hook: hook.to_owned(),
            context: context.clone(),
        })?;
        self.history.push(Message::Context(context));
        Ok(())
    }

    /// Starts (`startup`) or resumes (`resume`) the session for its
    /// `agent/session-start` listeners: the context they return is added to
    /// the history (and logged as `context/hook`). A failing listener adds
    /// nothing.
    ///
    /// # Errors
    ///
    /// [`AgentError::Log`].
    pub async fn start_session(&mut self, source: &str) -> Result<(), AgentError> {
        let hook = self.hooks.session_start().clone();
        if !hook.has_listeners(None) {
            return Ok(());
        }
        let input = SessionStartInput {
            source: source.to_owned(),
        };
        match hook.dispatch(None, input).await {
            Ok(contexts) => {
                for text in contexts {
                    self.push_hook_context("SessionStart", text)?;
                }
            }
            Err(error) => tracing::error!(%error, "an agent/session-start listener failed"),
        }
        Ok(())
    }

    /// Ends the session for its `agent/session-end` listeners (cleanup).
    pub async fn end_session(&self, reason: &str) {
        let hook = self.hooks.session_end();
        if !hook.has_listeners(None) {
            return;
        }
        let input = SessionEndInput {
            reason: reason.to_owned(),
        };
        if let Err(error) = hook.dispatch(None, input).await {
            tracing::error!(%error, "an agent/session-end listener failed");
        }
    }

    /// The tokens the model used in this session so far (resumed sessions
    /// included), as its provider reported them.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// The history so far (without the system prompt).
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// The session's cancellation signal: cancelling it ends the current turn
    /// (running calls end `CANCELLED`, the model is not asked again) and every
    /// later one, until [`set_cancellation`](Self::set_cancellation) replaces
    /// it.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Replaces the cancellation signal for later turns (an interactive host
    /// gives each turn its own, so cancelling one does not end the session).
    pub fn set_cancellation(&mut self, cancel: CancellationToken) {
        self.cancel = cancel;
    }

    /// The event bus.
    pub fn events(&self) -> &Arc<EventBus> {
        &self.bus
    }

    fn emit(&self, event: Event) -> Result<(), AgentError> {
        self.bus.emit(event)?;
        if let Some(failure) = self.bus.first_failure() {
            return Err(AgentError::Log(failure));
        }
        Ok(())
    }

    /// Adds a user message to the history (and the log).
    ///
    /// # Errors
    ///
    /// [`AgentError::Log`].
    pub fn push_user(&mut self, text: impl Into<String>) -> Result<(), AgentError> {
        let text = text.into();
        self.emit(Event::User { text: text.clone() })?;
        self.history.push(Message::User(text));
        Ok(())
    }

    /// One step: asks the model, and runs its batch of tool calls if it made
    /// one, appending one result per call in model order and then the
    /// deferred context. A reply with no tool call and no text (an empty
    /// batch) is [`StepOutcome::EmptyReply`]: never an answer.
    ///
    /// # Errors
    ///
    /// [`AgentError::Model`] or [`AgentError::Log`].
    pub async fn step(&mut self) -> Result<StepOutcome, AgentError> {
        self.step_with(None).await
    }

    async fn step_with(
        &mut self,
        journal: Option<&dyn StepJournal>,
    ) -> Result<StepOutcome, AgentError> {
        if self.cancel.is_cancelled() {
            return Ok(StepOutcome::Cancelled);
        }
        let schemas = self
            .scheduler
            .pipeline()
            .registry()
            .schemas(self.agent.as_ref());
        let mut messages = Vec::with_capacity(self.history.len() + 1);
        messages.push(Message::System(self.system_prompt.clone()));
        messages.extend(self.history.iter().cloned());
        let observer = StepObserver {
            host: self.observer.clone(),
            usage: parking_lot::Mutex::new(None),
            streamed: parking_lot::Mutex::new(String::new()),
        };
        let reply = tokio::select! {
            biased;
            () = self.cancel.cancelled() => return Ok(StepOutcome::Cancelled),
            reply = async {
                match journal {
                    Some(journal) => journal.model_step(&self.model, &messages, &schemas, &observer).await,
                    None => self.model.complete_observed(&messages, &schemas, &observer).await,
                }
            } => reply?,
        };
        if let Some(step) = observer.usage.lock().take() {
            self.usage += step;
            self.emit(Event::ModelUsage {
                usage: step,
                session: self.usage,
            })?;
        }
        let calls = match reply {
            Reply::Text(text) => return self.answer(text),
            Reply::ToolCalls(calls) if calls.is_empty() => return Ok(StepOutcome::EmptyReply),
            Reply::ToolCalls(calls) => calls,
        };
        // The agent's identity is the host's to give, never the model's.
        let calls: Vec<_> = match &self.agent {
            Some(agent) => calls
                .into_iter()
                .map(|c| c.with_agent(agent.clone()))
                .collect(),
            None => calls,
        };
        // Text streamed before the calls was shown: keep it, in order.
        let note = std::mem::take(&mut *observer.streamed.lock());
        if !note.trim().is_empty() {
            self.emit(Event::AssistantNote { text: note.clone() })?;
            self.history.push(Message::Assistant(note));
        }
        for (index, call) in calls.iter().enumerate() {
            self.emit(Event::ToolCall {
                call_id: call.call_id.to_string(),
                tool: call.name.clone(),
                arguments: call.arguments.clone(),
                index,
            })?;
        }
        self.history.push(Message::ToolCalls(calls.clone()));
        let count = calls.len();
        let (outcomes, batch) = match journal {
            Some(journal) => self.run_journaled_batch(calls, journal).await,
            None => self.run_batch(calls).await,
        };
        let mut concluded = false;
        for (index, outcome) in outcomes.iter().enumerate() {
            // The log keeps what the model saw: a value whose content a
            // listener replaced (redacted) is left out.
            self.emit(Event::ToolResult {
                outcome: outcome.as_logged(),
                index,
            })?;
            self.history.push(Message::ToolResult {
                call_id: outcome.call_id.to_string(),
                tool: outcome.tool.clone(),
                content: outcome.content.joined_text(),
                is_error: !outcome.is_success(),
            });
            concluded |= outcome.concluded_turn;
        }
        self.end_batch(batch, outcomes).await?;
        Ok(StepOutcome::ToolsRan {
            calls: count,
            concluded,
        })
    }

    /// Runs `calls` again, outside a turn, through the whole pipeline (hook
    /// points, permission, sandbox): calls the history already holds with a
    /// result, such as calls a `PreToolUse` hook deferred before the session
    /// stopped. Each new result replaces the call's earlier one in the
    /// history (the log records it as a `tool/result`, which a later resume
    /// reads the same way), and its deferred context follows. Calls the
    /// history holds no result for are skipped. Returns how many ran, and
    /// the reason when a listener asked to end the turn while they ran
    /// (a call deferred again).
    ///
    /// # Errors
    ///
    /// [`AgentError::Log`].
    pub async fn rerun(
        &mut self,
        calls: Vec<ToolCall>,
    ) -> Result<(usize, Option<String>), AgentError> {
        let _ = self.hooks.take_turn_end();
        let calls: Vec<ToolCall> = calls
            .into_iter()
            .filter(|call| self.result_index(&call.call_id.to_string()).is_some())
            .collect();
        if calls.is_empty() {
            return Ok((0, None));
        }
        let count = calls.len();
        let (outcomes, batch) = self.run_batch(calls).await;
        for (index, outcome) in outcomes.iter().enumerate() {
            self.emit(Event::ToolResult {
                outcome: outcome.as_logged(),
                index,
            })?;
            let call_id = outcome.call_id.to_string();
            if let Some(at) = self.result_index(&call_id) {
                self.history[at] = Message::ToolResult {
                    call_id,
                    tool: outcome.tool.clone(),
                    content: outcome.content.joined_text(),
                    is_error: !outcome.is_success(),
                };
            }
        }
        self.end_batch(batch, outcomes).await?;
        Ok((count, self.hooks.take_turn_end()))
    }

    /// The contexts a batch's results bring, logged and added to the
    /// history after them: a tool message carries text only, so images a
    /// result holds reach the model as a context, then each result's
    /// deferred contexts.
    fn push_contexts(&mut self, outcomes: &[Arc<Outcome>]) -> Result<(), AgentError> {
        for (index, outcome) in outcomes.iter().enumerate() {
            let images = image_context(outcome);
            for context in images.iter().chain(&outcome.deferred_context) {
                self.emit(Event::ContextDeferred {
                    call_id: outcome.call_id.to_string(),
                    index,
                    context: context.clone(),
                })?;
                self.history.push(Message::Context(context.clone()));
            }
        }
        Ok(())
    }

    /// Runs one batch through the scheduler; its calls are kept for the
    /// `agent/post-tool-batch` listeners when there are any.
    async fn run_batch(&self, calls: Vec<ToolCall>) -> (Vec<Arc<Outcome>>, Option<Vec<ToolCall>>) {
        let batch = self
            .hooks
            .post_tool_batch()
            .has_listeners(None)
            .then(|| calls.clone());
        let outcomes = self
            .scheduler
            .run_turn(calls, self.cancel.child_token())
            .await;
        (outcomes, batch)
    }

    /// Runs one batch through `journal`, one call at a time in model order.
    async fn run_journaled_batch(
        &self,
        calls: Vec<ToolCall>,
        journal: &dyn StepJournal,
    ) -> (Vec<Arc<Outcome>>, Option<Vec<ToolCall>>) {
        let batch = self
            .hooks
            .post_tool_batch()
            .has_listeners(None)
            .then(|| calls.clone());
        let cancel = self.cancel.child_token();
        let mut outcomes = Vec::with_capacity(calls.len());
        for call in calls {
            let pipeline = self.scheduler.pipeline();
            outcomes.push(journal.tool_call(pipeline, call, cancel.clone()).await);
        }
        (outcomes, batch)
    }

    /// Once a batch's results are in the history: their deferred context,
    /// then the batch listeners (not after a cancelled turn).
    async fn end_batch(
        &mut self,
        batch: Option<Vec<ToolCall>>,
        outcomes: Vec<Arc<Outcome>>,
    ) -> Result<(), AgentError> {
        self.push_contexts(&outcomes)?;
        if let Some(calls) = batch
            && !self.cancel.is_cancelled()
        {
            self.after_batch(calls, outcomes).await?;
        }
        Ok(())
    }

    /// Tells the `agent/post-tool-batch` listeners that every call of a
    /// batch is answered (not when the turn was cancelled: the model is not
    /// asked again anyway): the context they return follows the results, and
    /// a stop they ask for ends the turn once the batch is answered (its
    /// reason stays in the history, after the context). A failing listener
    /// adds nothing.
    async fn after_batch(
        &mut self,
        calls: Vec<ToolCall>,
        outcomes: Vec<Arc<Outcome>>,
    ) -> Result<(), AgentError> {
        let hook = self.hooks.post_tool_batch().clone();
        let decision = match hook.dispatch(None, ToolBatch { calls, outcomes }).await {
            Ok(decision) => decision,
            Err(error) => {
                tracing::error!(%error, "an agent/post-tool-batch listener failed");
                return Ok(());
            }
        };
        for text in decision.context {
            self.push_hook_context("PostToolBatch", text)?;
        }
        if let Some(reason) = decision.stop {
            self.push_hook_context("PostToolBatch", reason.clone())?;
            self.hooks.request_turn_end(reason);
        }
        Ok(())
    }

    /// Where the history holds the last result of `call_id`.
    fn result_index(&self, call_id: &str) -> Option<usize> {
        self.history
            .iter()
            .rposition(|m| matches!(m, Message::ToolResult { call_id: c, .. } if c == call_id))
    }

    fn answer(&mut self, text: String) -> Result<StepOutcome, AgentError> {
        self.emit(Event::Assistant { text: text.clone() })?;
        self.history.push(Message::Assistant(text.clone()));
        Ok(StepOutcome::Answered(text))
    }

    /// One turn: adds `prompt` and steps until the model answers in text, a
    /// tool concludes the turn, the step limit is reached, the turn is
    /// cancelled or the model replies with nothing (a `turn/end` event says
    /// which).
    ///
    /// # Errors
    ///
    /// [`AgentError::Model`] or [`AgentError::Log`]; tool failures are not
    /// errors.
    pub async fn run(&mut self, prompt: impl Into<String>) -> Result<RunEnd, AgentError> {
        self.run_with(prompt.into(), None).await
    }

    /// [`run`](Self::run), with each model request and each tool call
    /// going through `journal` (see [`StepJournal`]): a durable host records
    /// them, and replays the recorded results after a crash.
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run).
    pub async fn run_journaled(
        &mut self,
        prompt: impl Into<String>,
        journal: &dyn StepJournal,
    ) -> Result<RunEnd, AgentError> {
        self.run_with(prompt.into(), Some(journal)).await
    }

    async fn run_with(
        &mut self,
        prompt: String,
        journal: Option<&dyn StepJournal>,
    ) -> Result<RunEnd, AgentError> {
        let check = self.hooks.user_prompt_submit().clone();
        let mut contexts = Vec::new();
        if check.has_listeners(None) {
            let input = PromptSubmit {
                prompt: prompt.clone(),
            };
            let blocked = match check.dispatch(None, input).await {
                Ok(decision) => {
                    contexts = decision.context;
                    decision.blocked
                }
                Err(error) => Some(format!(
                    "the prompt check failed ({error}), so the prompt was not sent"
                )),
            };
            if let Some(reason) = blocked {
                self.emit(Event::PromptBlocked {
                    reason: reason.clone(),
                })?;
                self.emit(Event::TurnEnd {
                    reason: TurnEndReason::PromptBlocked,
                    steps: 0,
                })?;
                return Ok(RunEnd::PromptBlocked { reason });
            }
        }
        // A request left over from an earlier turn does not end this one.
        let _ = self.hooks.take_turn_end();
        self.push_user(prompt)?;
        for text in contexts {
            self.push_hook_context("UserPromptSubmit", text)?;
        }
        let mut stop_hook_active = false;
        for steps in 1..=self.max_steps {
            let step = match self.step_with(journal).await {
                Ok(step) => step,
                Err(AgentError::Model(error)) => {
                    self.model_failed(&error).await;
                    return Err(AgentError::Model(error));
                }
                Err(error) => return Err(error),
            };
            let (end, reason) = match step {
                StepOutcome::Answered(text) => {
                    if steps < self.max_steps
                        && let Some(reason) = self.keep_going(&text, stop_hook_active).await
                    {
                        stop_hook_active = true;
                        self.push_hook_context("Stop", reason)?;
                        continue;
                    }
                    (RunEnd::Answered(text), TurnEndReason::Answered)
                }
                StepOutcome::ToolsRan {
                    concluded: true, ..
                } => (RunEnd::Concluded, TurnEndReason::Concluded),
                // A hook asked to end the turn (`"continue": false`).
                StepOutcome::ToolsRan { .. } if self.hooks.take_turn_end().is_some() => {
                    (RunEnd::Concluded, TurnEndReason::Concluded)
                }
                StepOutcome::ToolsRan { .. } if self.cancel.is_cancelled() => {
                    (RunEnd::Cancelled, TurnEndReason::Cancelled)
                }
                StepOutcome::ToolsRan { .. } => continue,
                StepOutcome::Cancelled => (RunEnd::Cancelled, TurnEndReason::Cancelled),
                StepOutcome::EmptyReply => (RunEnd::EmptyReply, TurnEndReason::EmptyReply),
            };
            self.emit(Event::TurnEnd { reason, steps })?;
            return Ok(end);
        }
        self.emit(Event::TurnEnd {
            reason: TurnEndReason::MaxSteps,
            steps: self.max_steps,
        })?;
        Ok(RunEnd::StepLimit {
            steps: self.max_steps,
        })
    }
}

impl Agent {
    /// Tells the `agent/stop-failure` listeners that the turn ends on
    /// `error` (a failing listener is logged and ignored).
    async fn model_failed(&self, error: &ModelError) {
        let hook = self.hooks.stop_failure();
        if !hook.has_listeners(None) {
            return;
        }
        let input = ModelFailure {
            kind: error.kind().to_owned(),
            details: error.details(),
            message: error.to_string(),
        };
        if let Err(error) = hook.dispatch(None, input).await {
            tracing::error!(%error, "an agent/stop-failure listener failed");
        }
    }

    /// Asks the `agent/stop` listeners whether to go on after `answer`.
    async fn keep_going(&self, answer: &str, stop_hook_active: bool) -> Option<String> {
        let hook = self.hooks.stop();
        if !hook.has_listeners(None) {
            return None;
        }
        let input = StopCheck {
            answer: answer.to_owned(),
            stop_hook_active,
        };
        match hook.dispatch(None, input).await {
            Ok(decision) => decision.continue_with,
            Err(error) => {
                tracing::error!(%error, "an agent/stop listener failed; the agent stops");
                None
            }
        }
    }
}

/// Forwards a step's reports to the host and keeps its usage.
struct StepObserver {
    host: Option<Arc<dyn ModelObserver>>,
    usage: parking_lot::Mutex<Option<Usage>>,
    /// The text streamed so far in this step.
    streamed: parking_lot::Mutex<String>,
}

impl ModelObserver for StepObserver {
    fn text_delta(&self, text: &str) {
        self.streamed.lock().push_str(text);
        if let Some(host) = &self.host {
            host.text_delta(text);
        }
    }

    fn usage(&self, usage: Usage) {
        *self.usage.lock().get_or_insert_default() += usage;
        if let Some(host) = &self.host {
            host.usage(usage);
        }
    }

    fn retry(&self, retry: &Retry) {
        if let Some(host) = &self.host {
            host.retry(retry);
        }
    }
}

/// The source of the contexts the loop makes from images in tool results.
pub const IMAGE_CONTEXT_SOURCE: &str = "tack-agent";

/// The images of `outcome`'s content as a context (with a caption naming the
/// call), or nothing when it has none.
fn image_context(outcome: &Outcome) -> Option<DeferredContext> {
    let images: Vec<ContentBlock> = outcome
        .content
        .iter()
        .filter(|block| matches!(block, ContentBlock::Image { .. }))
        .cloned()
        .collect();
    if images.is_empty() {
        return None;
    }
    let mut content = vec![ContentBlock::text(format!(
        "The image{} returned by {} (call {}):",
        if images.len() == 1 { "" } else { "s" },
        outcome.tool,
        outcome.call_id
    ))];
    content.extend(images);
    Some(DeferredContext::blocks(content).with_source(IMAGE_CONTEXT_SOURCE))
}
