//! The stages of a call, for diagnostics and tests.

use std::fmt;

use tack_core::tool::CallId;

/// One stage of the pipeline (docs/pipeline.md), in the order a call can enter them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Stage {
    /// Looking the name up in the caller's scope.
    Resolve,
    /// Parsing the raw argument string.
    Parse,
    /// Validating the arguments against the input schema.
    Validate,
    /// The `tools/pre-execute` waterfall.
    PreExecute,
    /// Asking the approval service.
    Approval,
    /// The guards.
    Guard,
    /// The `tools/execute` waterfall around the body.
    Execute,
    /// Validating and rendering the body's value.
    Output,
    /// The `tools/post-execute` waterfall.
    PostExecute,
    /// The tool's `finalize_content`.
    Finalize,
    /// Freezing the record and notifying `tools/result` observers.
    Result,
}

impl Stage {
    /// A short name: `resolve`, `parse`, `validate`, `pre`, `approval`,
    /// `guard`, `execute`, `output`, `post`, `finalize`, `result`.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Resolve => "resolve",
            Stage::Parse => "parse",
            Stage::Validate => "validate",
            Stage::PreExecute => "pre",
            Stage::Approval => "approval",
            Stage::Guard => "guard",
            Stage::Execute => "execute",
            Stage::Output => "output",
            Stage::PostExecute => "post",
            Stage::Finalize => "finalize",
            Stage::Result => "result",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Receives every stage each call enters, in order. Set with
/// [`PipelineConfig::with_stage_recorder`](crate::PipelineConfig::with_stage_recorder);
/// used by tests to assert the exact path of a call.
pub trait StageRecorder: Send + Sync + 'static {
    /// Call `call_id` entered `stage`.
    fn record(&self, call_id: &CallId, stage: Stage);
}
