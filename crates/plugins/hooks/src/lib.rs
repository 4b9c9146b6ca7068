//! Claude Code style hooks for tack: the `hooks` object of a `settings.json`
//! (events, matchers, commands) run on tack's hook points.
//!
//! * `PreToolUse` runs on `tools/pre-execute`: exit 2 denies with stderr as
//!   the reason; JSON `hookSpecificOutput.permissionDecision` `allow`, `deny`
//!   or `ask` (with `permissionDecisionReason`), or the legacy `decision`
//!   `approve`/`block`; `hookSpecificOutput.updatedInput` rewrites the
//!   arguments (validated again by the pipeline, recorded in the outcome).
//! * `PostToolUse` runs on `tools/post-execute`: exit 2 or
//!   `"decision": "block"` gives the model feedback (the tool already ran);
//!   `hookSpecificOutput.additionalContext` becomes deferred context.
//!   `PostToolUseFailure` runs there too for a call that ran and failed,
//!   and `PermissionDenied` for a call that needed approval and was denied
//!   with no one deciding: `hookSpecificOutput.retry: true` tells the model
//!   it may retry the call.
//! * `UserPromptSubmit`, `Stop`, `StopFailure`, `PostToolBatch`,
//!   `SessionStart`, `SessionEnd`, `Notification` and `PermissionRequest`
//!   are methods of [`Hooks`] a host calls at those points.
//!
//! Any other exit is a non-blocking error: reported and logged, and the call
//! goes on — unless the hook sets `"failClosed": true`, then it blocks.
//! Hooks are the user's own commands: they run with the user's rights,
//! outside the tools' sandbox. Tool names and fields are Claude Code's by
//! default ([`names`]).
//!
//! ```
//! use serde_json::json;
//! use tack_hooks::{HookSession, Hooks, HooksConfig};
//! let config = HooksConfig::from_settings(&json!({"hooks": {"PreToolUse": [
//!     {"matcher": "Bash", "hooks": [{"type": "command", "command": "./no-rm.sh"}]}
//! ]}}), None).unwrap();
//! let hooks = Hooks::new(config, HookSession::new("session-1", "/work/space"));
//! // Install it like any plugin: `PluginSet::new().with(Box::new(hooks))`.
//! assert!(hooks.handles(tack_hooks::HookEvent::PreToolUse));
//! ```

pub mod condition;
mod config;
mod dispatch;
mod hooks;
mod matcher;
pub mod names;
mod report;
mod runner;
mod session;
mod tool_events;

pub use condition::Condition;
pub use config::{
    ConfigError, DEFAULT_TIMEOUT, HookCommand, HookEvent, HooksConfig, MAX_TIMEOUT, MatcherGroup,
    NOT_DISPATCHED,
};
pub use dispatch::TurnStopper;
pub use hooks::{BatchCheck, Hooks, PermissionAnswer, PermissionUpdate, PromptCheck};
pub use names::{ToolNames, claude_name, tack_name};
pub use report::{HookReport, ReportLevel, Reporter};
pub use runner::{HookExit, HookRun, MAX_OUTPUT_BYTES, PreRun};
pub use session::HookSession;
pub use tool_events::{CONTEXT_SOURCE, DEFERRED, LISTENER_NAME, PLUGIN_NAME};
