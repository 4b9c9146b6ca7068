//! The host's side of tack-core: what a host (tack-pipeline, an agent, a
//! test harness) uses to run plugins, and a plugin never needs.
//!
//! Compiled only with tack-core's `host` cargo feature, which hosts turn on
//! and plugin crates leave off.
//!
//! * [`Arguments`], [`ArgumentsError`]: a call's argument text parsed into
//!   the object it says, exactly (what the pipeline's parse stage does);
//!   [`summarize_execution`], the summary of an approval request, its gist
//!   in the order of that text.
//! * [`PluginHost`]: installs plugins into hook points, capability slots and
//!   a tool registry, and unloads them.
//! * [`CapabilitySlots`]: the shared, swappable capabilities, and
//!   [`Capabilities`], the set one execution runs with.
//! * [`ToolSchema`] ([`ToolDefinition::schema`](crate::tool::ToolDefinition::schema)):
//!   what the model sees of a tool; [`export_tools`], [`tools_json`],
//!   [`ExportedTool`], [`RenderedTool`], [`ToolFormat`]: the tools' schemas
//!   in a model API's format (OpenAI,
//!   Anthropic, MCP); [`schema_depth`], the nesting a registry
//!   checks against `ToolDefinition::MAX_SCHEMA_DEPTH`.
//! * [`UnknownName`]: the error of parsing a [`ToolFormat`], an
//!   [`ErrorCode`](crate::tool::ErrorCode) or an
//!   [`Action`](crate::policy::Action) from text (a host's configuration or
//!   command line; plugins read them as typed values).
//! * [`default_render`], [`default_present_call`],
//!   [`default_present_result`]: what a UI shows for a tool that brings no
//!   presenter of its own.
//! * [`Guards`] ([`ToolHooks::guards`](crate::hooks::ToolHooks::guards)):
//!   the guards plugins added, and running them.
//! * [`Dispatch`], [`Notified`], [`HookError`], [`panic_message`],
//!   [`GuardOutcome`]: what
//!   running the hook points and guards gives the pipeline.
//! * [`ThreadCopy`]: a thread's own copy of a registered tool.
//! * [`plugin_factories`], [`find_plugin`], [`sorted_factories`]: the plugins
//!   linked into the binary.
//! * [`RunEffects`]: what one execution's body asked the loop for (deferred
//!   context, concluding the turn), and whether the body was started.
//! * The constructors of values only the pipeline builds, as sealed extension
//!   traits: [`NewToolExecution`], [`NewExecutionToken`], [`NewRunContext`],
//!   [`NewOutcome`], [`NewToolError`], [`NewExecuteRequest`],
//!   [`NewExecutionRecord`], and [`cancelled_before_start`].
//!
//! A plugin's code (its listeners, guards and tool bodies) sees the values
//! these build, never the way to build them: a tool body gets a
//! [`ToolRunContext`](crate::context::ToolRunContext), which does not hand out
//! the execution's [`RunEffects`], and cannot make up an
//! [`Outcome`](crate::tool::Outcome) or an
//! [`ExecutionToken`](crate::tool::ExecutionToken).
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use tack_core::CancellationToken;
//! use tack_core::host::Capabilities;
//! use tack_core::context::ToolRunContext;
//! use tack_core::host::{NewExecutionToken, NewRunContext, NewToolExecution, RunEffects};
//! use tack_core::tool::{CallId, ExecutionToken, Tier, ToolExecution, ToolName};
//!
//! let execution = Arc::new(ToolExecution::new(
//!     CallId::from("c1"), ToolName::new("echo").unwrap(), Arc::new(json!({})),
//!     Tier::ReadOnly, ExecutionToken::issue(CallId::from("c1")),
//! ));
//! let effects = RunEffects::new();
//! let cx = ToolRunContext::new(
//!     execution, Arc::new(Capabilities::default()), CancellationToken::new(), effects.clone(),
//! );
//! cx.conclude_turn(); // what a tool body may do
//! assert!(effects.concluded()); // what only the host reads
//! ```

mod approval_summary;
pub(crate) mod build;
mod constructors;
mod plugin_host;

pub use approval_summary::summarize_execution;
pub use build::{
    NewExecuteRequest, NewExecutionRecord, NewExecutionToken, NewOutcome, NewRunContext,
    NewToolError, NewToolExecution, ThreadCopy, cancelled_before_start,
};
pub use plugin_host::PluginHost;

pub use tack_hook::{Dispatch, Disposables, HookError, Notified, panic_message};

pub use crate::capability::batch::SerialBatch;
pub use crate::capability::set::{Capabilities, CapabilitySlots};
pub use crate::context::effects::RunEffects;
pub use crate::model::{
    Arguments, ArgumentsError, ExportedTool, RenderedTool, ToolFormat, ToolSchema, UnknownName,
    export_tools, export_tools_json, schema_depth, tools_json,
};
pub use crate::policy::guard::{GuardOutcome, Guards};
pub use crate::tool::body_future::BodyFuture;
pub use crate::tool::definition::ToolHandler;
pub use crate::tool::definition::{default_present_call, default_present_result, default_render};

pub use crate::plugin::factory::{find_plugin, plugin_factories, sorted_factories};
