//! Pipeline settings.

use std::fmt;
use std::sync::Arc;

use super::StageRecorder;

/// The highest nesting limit [`PipelineConfig::with_max_depth`] accepts.
pub const MAX_DEPTH_LIMIT: usize = 127;

/// Limits and diagnostics of the pipeline.
///
/// ```
/// use tack_pipeline::PipelineConfig;
/// let config = PipelineConfig::default().with_max_argument_bytes(64 * 1024);
/// assert_eq!(config.max_argument_bytes(), 64 * 1024);
/// assert_eq!(config.max_depth(), 64);
/// ```
#[derive(Clone)]
pub struct PipelineConfig {
    max_argument_bytes: usize,
    max_depth: usize,
    recorder: Option<Arc<dyn StageRecorder>>,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        Self {
            max_argument_bytes: 1024 * 1024,
            max_depth: 64,
            recorder: None,
        }
    }
}

impl fmt::Debug for PipelineConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PipelineConfig")
            .field("max_argument_bytes", &self.max_argument_bytes)
            .field("max_depth", &self.max_depth)
            .field("recorder", &self.recorder.is_some())
            .finish()
    }
}

impl PipelineConfig {
    /// The largest argument string accepted, in bytes (default 1 MiB).
    pub fn with_max_argument_bytes(mut self, bytes: usize) -> Self {
        self.max_argument_bytes = bytes;
        self
    }

    /// The deepest nesting of arrays and objects accepted (default 64, at
    /// most [`MAX_DEPTH_LIMIT`]: the JSON parser's own recursion bound, which
    /// protects the stack).
    pub fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth.min(MAX_DEPTH_LIMIT);
        self
    }

    /// Reports every stage each call goes through (tests, diagnostics).
    pub fn with_stage_recorder(mut self, recorder: Arc<dyn StageRecorder>) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// The argument size limit.
    pub fn max_argument_bytes(&self) -> usize {
        self.max_argument_bytes
    }

    /// The nesting limit.
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    pub(crate) fn recorder(&self) -> Option<&Arc<dyn StageRecorder>> {
        self.recorder.as_ref()
    }
}
