//! # tack-pipeline
//!
//! The tool registry and the per-call pipeline of tack. A host registers tools
//! in a [`ToolRegistry`] (globally or for one agent), and every model
//! utterance goes through [`ToolRegistry::execute`]: resolve → parse →
//! validate → `tools/pre-execute` (→ approval) → guards → `tools/execute` →
//! output validation and render → `tools/post-execute` → `finalize_content` →
//! `tools/result`. Every call ends in exactly one [`Outcome`](tack_core::tool::Outcome).
//!
//! See `docs/pipeline.md` for the step table and each outcome path.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
pub(crate) mod pipeline;
mod registry;
mod scheduler;

pub use config::{MAX_DEPTH_LIMIT, PipelineConfig};
pub use pipeline::{APPROVAL_STAGE, DryRun, LATE_CANCELLATION_NOTE, Stage, StageRecorder};
pub use registry::{
    Presentation, RUN_CODE, RegisteredTool, RestrictError, Restriction, ToolRegistry,
    UnknownPresentation,
};
pub use scheduler::{
    Access, ExecutionMode, ResourceClaim, ResourceFn, ResourceKey, SchedulerConfig,
    SchedulerConfigError, TurnScheduler,
};
