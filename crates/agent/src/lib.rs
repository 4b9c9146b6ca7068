//! # tack-agent
//!
//! tack's agent loop as a library for host applications:
//!
//! * [`Agent`]: the loop. It keeps the history, asks a [`ChatModel`] for the
//!   next step, runs a batch of tool calls through the turn scheduler, appends
//!   one tool-result message per call in model order and then the deferred
//!   context, and repeats until the model answers in text, a tool concludes
//!   the turn, or the step limit is reached. Tool failures are content the
//!   model reads: the loop never stops on them.
//! * Models: [`MockModel`] (deterministic, no key, no network),
//!   [`ScriptedModel`] (replays a JSON file of turns) and
//!   [`OpenAiCompatible`] (chat completions) and [`AnthropicMessages`] (the
//!   Messages API): both with tools, parallel tool calls, streaming
//!   ([`ModelObserver::text_delta`]), token [`Usage`], a request timeout and
//!   retries with backoff and jitter honouring `retry-after`
//!   ([`RetryPolicy`]). These two need the `http-models` feature (on by
//!   default; without it tack-agent builds no HTTP client at all).
//! * [`PluginSet`]: composes plugins, by value or by inventory name, into a
//!   `ToolRegistry` and one `Disposables`.
//! * The session log: every [`Event`] goes to an append-only JSONL
//!   [`SessionLog`] (by default in the per-user state directory, see
//!   [`SessionLog::create_for_workspace`]), each record hash-chained to the
//!   one before; [`read_log`] reads one back and verifies its order, schema
//!   and chain (a torn last line is skipped with a warning), and
//!   [`Renderer`] turns events into the lines a user sees, through the
//!   tools' own `present_*` functions, live or on replay, with control
//!   characters escaped ([`escape_line`], [`escape_block`]).
//! * Resuming: [`SessionLog::resume`] reopens a verified log (a torn last
//!   line cut off), [`history_from_records`] rebuilds the conversation, and
//!   [`EventBus::resuming`] with [`AgentBuilder::resume`] continue the same
//!   session and hash chain in the same file.
//!
//! ## Example
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use std::sync::Arc;
//! use tack_agent::{Agent, MockModel, PluginSet, RunEnd};
//! use tack_sandbox::{Sandbox, SandboxPolicy};
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("README.md"), "# hello\n").unwrap();
//! let plugins = PluginSet::new()
//!     .with(Sandbox::new(SandboxPolicy::workspace_write(dir.path())).unwrap())
//!     .with_named("builtin-tools")
//!     .build()
//!     .unwrap();
//! let mut agent = Agent::builder(Arc::new(MockModel::new()), plugins.pipeline.clone()).build();
//! let end = agent.run("read file README.md").await.unwrap();
//! match end {
//!     RunEnd::Answered(text) => assert_eq!(text, "tool read_file returned: # hello"),
//!     other => panic!("{other:?}"),
//! }
//! # }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod agent;
mod agent_hooks;
mod approval;
mod bus;
mod chain;
mod escape;
mod event;
mod journal;
mod log;
mod message;
mod model;
mod render;
mod resume;

pub use agent::{
    Agent, AgentBuilder, AgentError, CODE_DISPATCH_LISTENER, DEFAULT_MAX_STEPS,
    DEFAULT_SYSTEM_PROMPT, IMAGE_CONTEXT_SOURCE, RunEnd, StepOutcome,
};
pub use agent_hooks::{
    AgentHooks, BatchDecision, ModelFailure, NOTIFICATION, NotificationHook, NotificationInput,
    POST_TOOL_BATCH, PostToolBatchHook, PromptDecision, PromptSubmit, SESSION_END, SESSION_START,
    STOP, STOP_FAILURE, SessionEndHook, SessionEndInput, SessionStartHook, SessionStartInput,
    StopCheck, StopDecision, StopFailureHook, StopHook, ToolBatch, USER_PROMPT_SUBMIT,
    UserPromptSubmitHook,
};
pub use approval::{LoggedApprover, UnattendedApprover};
pub use bus::EventBus;
pub use chain::GENESIS_HASH;
pub use escape::{escape_block, escape_line, is_unsafe_char};
pub use event::{Event, Link, Record, TurnEndReason};
pub use journal::StepJournal;
pub use log::location::{state_home, state_home_from_env, workspace_key};
pub use log::reader::{LogBreak, LogContents, LogReadError, MAX_REPORTED_BREAKS, read_log};
pub use log::writer::{LogError, SessionLog};
pub use message::{Message, Reply};
#[cfg(feature = "http-models")]
pub use model::anthropic::{
    ANTHROPIC_VERSION, AnthropicConfig, AnthropicMessages, DEFAULT_MAX_TOKENS,
};
#[cfg(feature = "http-models")]
pub use model::http::RetryPolicy;
pub use model::mock::MockModel;
pub use model::observe::{ModelObserver, NoObserver, Retry, Usage};
#[cfg(feature = "http-models")]
pub use model::openai::{OpenAiCompatible, OpenAiConfig};
pub use model::scripted::{ScriptError, ScriptedModel};
pub use model::{ChatModel, ModelError};
pub use render::{Renderer, Style};
pub use resume::{ResumedHistory, history_from_records};
/// Composing plugins into a pipeline lives in tack-pipeline; re-exported for
/// hosts that use the agent loop.
pub use tack_pipeline::{InstalledPlugins, PluginSet};

// Link the plugin crates whose inventory names hosts install by name.
use tack_permission as _;
use tack_sandbox as _;
use tack_timeout as _;
use tack_tools as _;
