//! # tack-permission
//!
//! A permission gate for tack: a `tools/pre-execute` listener named
//! `permission` that allows, asks or denies each valid call, plus approvers
//! that answer the asks.
//!
//! * **Rules** ([`Rule`], [`RuleSet`]): ordered allow / ask / deny rules on the
//!   tool name (glob), tier, agent and arguments — path globs on a named
//!   argument (`read_file(path: "src/**")`, matched after lexical
//!   normalization, see [`normalize_path`]) and command patterns for shell
//!   tools (`bash(command: "git status*")`). The strictest matching rule wins:
//!   [`Action`] is `Ord` (`Allow < Ask < Deny`). Rules come from code or a
//!   TOML file ([`PermissionFile`]).
//! * **Modes** ([`Mode`], [`Modes`]): `read-only`, `ask` (default),
//!   `accept-edits`, `allow-all`; the default and per-agent overrides, also
//!   switchable at run time.
//! * **Approvers** ([`TerminalApprover`], [`ChannelApprover`],
//!   [`NoApprover`]): implementations of core's `ApprovalService`. "Always
//!   for this session" records a [`SessionRules`] allow rule.
//! * **Fail closed**: no approver, an approver error, panic or cancellation —
//!   all deny (the pipeline denies every approval outcome but allowed-once).
//!   Denial reasons name the rule (with its file and line) or the mode.
//!
//! ## How a call is decided
//!
//! 1. The strictest matching rule (configured and session rules together).
//! 2. No rule matches: the mode's [`baseline`](Mode::baseline) for the tier.
//! 3. In `read-only` mode a non-read-only tier is denied even if an allow rule
//!    matched ([`Mode::floor`]).
//!
//! Allow rules are matched conservatively: an allow path glob never matches a
//! path that climbs out of the workspace with `..` (or an absolute path
//! outside it, unless the glob is absolute). Command strings are parsed as
//! bash and matched per simple command on normalized argvs: deny and ask
//! rules see through quoting, wrappers (`sudo`, `env`, `timeout`, `xargs`, …),
//! `sh -c`, `eval`, substitutions and compound commands; allow rules must
//! together cover every simple command, as written. When a deny or ask rule
//! could apply but the command cannot be fully read (`$(…)` builds a word,
//! a pipe feeds a shell, `find -exec`), the call asks, even in `allow-all`
//! mode, and the reason says why ([`Basis::Unreadable`]). So adding a deny
//! rule never loosens a decision. Command rules do not see inside the
//! programs a command runs; confinement is the sandbox's job.
//!
//! ## Example
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use tack_core::tool::{CallId, ExecutionToken, Tier, ToolExecution, ToolName};
//! use tack_core::host::{NewExecutionToken, NewToolExecution};
//! use tack_permission::{Action, Mode, Permission, PermissionFile, PermissionConfig};
//!
//! let file = PermissionFile::parse(r#"
//!     mode = "ask"
//!     allow = ['bash(command: "git status*")']
//!     deny = ['read_file(path: "**/.env")']
//! "#, "permissions.toml").unwrap();
//! let gate = Permission::new(PermissionConfig::default().file(file).workspace_root("/work/repo"));
//!
//! let call = |tool: &str, tier, args| ToolExecution::new(
//!     CallId::from("c"), ToolName::new(tool).unwrap(), Arc::new(args), tier,
//!     ExecutionToken::issue(CallId::from("c")),
//! );
//! let ev = |e: &ToolExecution| gate.evaluate(e).action;
//! assert_eq!(ev(&call("bash", Tier::Executes, json!({"command": "git status -s"}))), Action::Allow);
//! assert_eq!(ev(&call("bash", Tier::Executes, json!({"command": "git status; rm -rf /"}))), Action::Ask);
//! assert_eq!(ev(&call("read_file", Tier::ReadOnly, json!({"path": "/work/repo/app/.env"}))), Action::Deny);
//! assert_eq!(ev(&call("read_file", Tier::ReadOnly, json!({"path": "src/main.rs"}))), Action::Allow);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod approvers;
mod command;
mod gate;
mod mode;
mod plugin;
mod rules;
mod session;

pub use approvers::{
    Answer, ApprovalInbox, ChannelApprover, NoApprover, PendingApproval, TerminalApprover,
};
pub use gate::{Basis, Evaluation};
pub use mode::{Mode, Modes, UnknownMode};
pub use plugin::{PLUGIN_NAME, Permission, PermissionConfig};
pub use rules::claude::{ClaudeRule, claude_path_glob, claude_rule};
pub use rules::matcher::{NormalizedPath, normalize_path};
pub use rules::toml::{PermissionFile, PermissionFileError};
pub use rules::{
    ArgKind, ArgPattern, COMMAND_ARGS, Decision, Rule, RuleBuilder, RuleError, RuleSet,
};
pub use session::SessionRules;
/// The verdict rules and modes decide: tack-core's one ordered verdict
/// (`Allow < Ask < Deny`), shared with `PreDecision::action`.
pub use tack_core::policy::Action;
