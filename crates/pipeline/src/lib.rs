//! # tack-pipeline
//!
//! The tool catalogue, the per-call pipeline and the turn scheduler of tack,
//! in three types, each over the one before:
//!
//! * [`ToolRegistry`]: the catalogue. A host registers tools in it (globally
//!   or for one agent), masks them and sets how they are presented; a call
//!   resolves in it to an immutable snapshot of the registered tool.
//! * [`Pipeline`]: runs one call over a registry, with the hook points and
//!   capability slots plugins install into: resolve → parse (and validate) →
//!   admit (`tools/pre-execute`, approval, guards) → execute (`tools/execute`,
//!   output check and render) → finalize (`tools/post-execute`,
//!   `finalize_content`) → result (`tools/result`). Every call ends in exactly
//!   one [`Outcome`](tack_core::tool::Outcome).
//! * [`TurnScheduler`]: runs a model's batch of calls through a pipeline, in
//!   a bounded pool, policy in model order.
//!
//! A host installs plugins into a pipeline with [`PluginSet`]: by value or by
//! `inventory` name, in order, all or nothing per plugin.
//!
//! ```
//! use serde_json::json;
//! use tack_core::tool::{OutputSpec, ToolCall, ToolDefinition};
//! use tack_pipeline::{Pipeline, ToolRegistry, TurnScheduler};
//! use tokio_util::sync::CancellationToken;
//!
//! # futures::executor::block_on(async {
//! let registry = ToolRegistry::new();
//! let _echo = registry.register(
//!     ToolDefinition::builder("echo")
//!         .description("Repeat the text.")
//!         .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
//!         .output(OutputSpec::new(json!({"type": "string"})))
//!         .handler(|args, _cx| async move { Ok(args["text"].clone()) })
//!         .build()
//!         .unwrap(),
//! ).unwrap();
//! let pipeline = Pipeline::new(registry);
//! let one = pipeline.execute(ToolCall::new("c1", "echo", r#"{"text": "hi"}"#), CancellationToken::new()).await;
//! assert!(one.is_success());
//!
//! let scheduler = TurnScheduler::new(pipeline);
//! let turn = scheduler.run_turn(vec![ToolCall::new("c2", "echo", "{}")], CancellationToken::new()).await;
//! assert_eq!(turn.len(), 1);
//! # });
//! ```
//!
//! Policy in order: [`Pipeline::execute_admitted`] reports when a call's
//! admission (everything up to and including the guards) is over, so a caller
//! that runs several calls can admit them one at a time while their bodies
//! overlap. The [`TurnScheduler`] runs a model's calls this way. Composite
//! tools get the whole schedule — order, modes, pool, resources,
//! cancellation — through `ToolDispatcher::open_batch` (tack-core), which
//! the pipeline implements with the scheduler's own code
//! ([`TurnScheduler::batch`]).
//!
//! See `docs/pipeline.md` for the step table and each outcome path.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod pipeline;
mod plugin_set;
mod registry;
mod scheduler;

pub use pipeline::{
    APPROVAL_STAGE, DryRun, INVALID_REWRITE, LATE_CANCELLATION_NOTE, MAX_DEPTH_LIMIT, Pipeline,
    PipelineConfig, Stage, StageRecorder,
};
pub use plugin_set::{InstalledPlugins, PluginSet};
pub use registry::{
    Presentation, RUN_CODE, RegisteredTool, RestrictError, Restriction, ToolRegistry,
    UnknownPresentation,
};
pub use scheduler::{
    Access, ExecutionMode, ResourceClaim, ResourceFn, ResourceKey, SchedulerConfig,
    SchedulerConfigError, TurnScheduler,
};
