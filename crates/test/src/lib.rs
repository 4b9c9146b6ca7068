//! # tack-test
//!
//! A test harness for tack plugin authors, used as a dev-dependency. It
//! installs one plugin — by value, the way a host installs it — into the real
//! tack pipeline together with fake tools, runs calls through every stage
//! (pre-execute, approval, guards, execute, post-execute, result), and
//! reports what happened: the outcome and its content, the stages the call
//! entered, which stage and which listener decided, whether the tool's body
//! ran, and the record the `tools/result` observers saw.
//!
//! * [`Harness`]: the plugin over the pipeline; [`Harness::builder`] adds
//!   fake tools and capabilities first.
//! * [`FakeTool`]: a tool with a chosen schema, tier, budget and body.
//! * [`Call`]: one call (arguments, agent, id, the caller's cancellation).
//! * [`Report`]: what happened to it, with [`Stage`] names.
//! * [`execution`], [`execution_for`]: an execution as hooks and guards get
//!   it, for testing a listener, a guard or a rule on its own.
//!
//! For composite tools and code mode:
//!
//! * Nested calls: a tool body's `cx.dispatcher()` runs calls through the
//!   same pipeline; each one's report is in its top-level call's
//!   [`Report::nested`].
//! * [`Presentation`]: per agent (or as the default), whether the model is
//!   shown the native tools, only the `run_code` transport a code-mode plugin
//!   registers, or both ([`HarnessBuilder::agent_presentation`],
//!   [`Harness::set_presentation`], [`Harness::schemas`],
//!   [`Harness::native_tools`]).
//! * [`ExecutionModes`]: the pipeline's [`ExecutionMode`] of a call, and a
//!   [`CallClassifier`] built from it for a plugin that takes one (code
//!   mode's sub-call classifier), available from the builder before the
//!   plugin is made.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use tack_core::plugin::{Plugin, PluginContext, PluginError};
//! use tack_core::policy::PreDecision;
//! use tack_core::serde_json::json;
//! use tack_core::tool::{ErrorCode, Tier};
//! use tack_test::{Call, FakeTool, Harness, Stage};
//!
//! /// Refuses every tool that executes programs.
//! struct ReadOnly;
//! impl Plugin for ReadOnly {
//!     fn name(&self) -> &str { "read-only" }
//!     fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
//!         cx.hooks().pre_execute().tap("read-only", |exec, next| async move {
//!             if !exec.tier().is_read_only() {
//!                 return PreDecision::deny(format!("`{}` changes things; this session is read-only", exec.name()));
//!             }
//!             next.run(exec).await
//!         });
//!         Ok(())
//!     }
//! }
//!
//! let bash = FakeTool::new("bash").tier(Tier::Executes);
//! let read = FakeTool::new("read").returns(json!("contents"));
//! let h = Harness::builder().tool(bash.clone()).tool(read).install(ReadOnly).unwrap();
//!
//! let denied = h.call(Call::new("bash", json!({"command": "make"}))).await;
//! assert_eq!(denied.error_code(), Some(ErrorCode::Denied));
//! assert_eq!(denied.decided_at(), Some(Stage::PreExecute));
//! assert_eq!(denied.decided_by_listener(), Some("read-only"));
//! assert_eq!(bash.runs(), 0);
//!
//! let read = h.call(Call::new("read", json!({}))).await;
//! assert_eq!(read.value(), Some(&json!("contents")));
//! assert!(read.reached(Stage::PostExecute));
//! # });
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod call;
mod driver;
mod execution;
mod execution_modes;
mod fake_tool;
mod harness;
mod nested;
mod presentation;
mod report;

pub use call::Call;
pub use execution::{execution, execution_for};
pub use execution_modes::{CallClassifier, ExecutionMode, ExecutionModes};
pub use fake_tool::FakeTool;
pub use harness::{Harness, HarnessBuilder, RECORDER};
pub use presentation::Presentation;
pub use report::{INVALID_REWRITE, Report, Stage};

// The plugin guide's code blocks compile and run as doctests here, where the
// pipeline and the harness are at hand.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/plugin-guide.md")]
struct PluginGuideDoctests;
