//! # tack-pipeline
//!
//! The tool registry and the per-call pipeline of tack. A host registers tools
//! in a [`ToolRegistry`] (globally or for one agent), and every model
//! utterance goes through [`ToolRegistry::execute`]: resolve → parse →
//! validate → `tools/pre-execute` (→ approval) → guards → `tools/execute` →
//! output validation and render → `tools/post-execute` → `finalize_content` →
//! `tools/result`. Every call ends in exactly one [`Outcome`](tack_core::tool::Outcome).
//!
//! Policy in order: [`ToolRegistry::execute_admitted`] reports when a call's
//! admission (everything up to and including the guards) is over, so a caller
//! that runs several calls can admit them one at a time while their bodies
//! overlap. The [`TurnScheduler`] runs a model's calls this way; composite
//! tools reach it through `ToolDispatcher::dispatch_admitted` (tack-core).
//!
//! See `docs/pipeline.md` for the step table and each outcome path.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
pub(crate) mod pipeline;
mod registry;
mod scheduler;

pub use config::{MAX_DEPTH_LIMIT, PipelineConfig};
pub use pipeline::{
    APPROVAL_STAGE, DryRun, INVALID_REWRITE, LATE_CANCELLATION_NOTE, Stage, StageRecorder,
};
pub use registry::{
    Presentation, RUN_CODE, RegisteredTool, RestrictError, Restriction, ToolRegistry,
    UnknownPresentation,
};
pub use scheduler::{
    Access, ExecutionMode, ResourceClaim, ResourceFn, ResourceKey, SchedulerConfig,
    SchedulerConfigError, TurnScheduler,
};
