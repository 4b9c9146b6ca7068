//! Scheduler settings.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::resources::{ResourceClaim, ResourceFn};

/// A [`SchedulerConfig`] setting that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchedulerConfigError {
    /// `max_parallel` was 0.
    #[error(
        "max_parallel must be at least 1, got 0 (1 runs every call alone, in model order; \
         n lets up to n parallel calls run at once)"
    )]
    ZeroMaxParallel,
}

/// How [`TurnScheduler`](crate::TurnScheduler) runs a turn.
///
/// * `max_parallel` (default 10): how many consecutive parallel calls run at
///   once; `1` runs every call alone, in order; `0` is refused.
/// * `cancel_siblings_on_failure` (default off): whether one call's failure
///   cancels the other calls of the turn.
/// * resource keys (default none): per tool name, the resources a parallel call
///   reads or writes; calls that write the same key never overlap.
///
/// ```
/// use tack_pipeline::{ResourceClaim, SchedulerConfig};
/// let config = SchedulerConfig::default()
///     .with_max_parallel(4)
///     .unwrap()
///     .with_cancel_siblings_on_failure(true)
///     .with_resource_keys("write_file", |args| {
///         args["path"].as_str().map(|p| ResourceClaim::write(format!("fs:{p}"))).into_iter().collect()
///     });
/// assert_eq!(config.max_parallel(), 4);
/// assert!(config.cancel_siblings_on_failure());
/// assert_eq!(SchedulerConfig::default().max_parallel(), 10);
/// assert!(SchedulerConfig::default().with_max_parallel(0).is_err());
/// ```
#[derive(Clone)]
pub struct SchedulerConfig {
    max_parallel: usize,
    cancel_siblings_on_failure: bool,
    resources: HashMap<String, Arc<ResourceFn>>,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            max_parallel: 10,
            cancel_siblings_on_failure: false,
            resources: HashMap::new(),
        }
    }
}

impl fmt::Debug for SchedulerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut keyed: Vec<&str> = self.resources.keys().map(String::as_str).collect();
        keyed.sort_unstable();
        f.debug_struct("SchedulerConfig")
            .field("max_parallel", &self.max_parallel)
            .field(
                "cancel_siblings_on_failure",
                &self.cancel_siblings_on_failure,
            )
            .field("resource_keys", &keyed)
            .finish()
    }
}

impl SchedulerConfig {
    /// At most `max` parallel calls run at once; `1` runs every call alone,
    /// in model order.
    ///
    /// # Errors
    ///
    /// [`SchedulerConfigError::ZeroMaxParallel`] for `0`, which would run
    /// nothing.
    pub fn with_max_parallel(mut self, max: usize) -> Result<Self, SchedulerConfigError> {
        if max == 0 {
            return Err(SchedulerConfigError::ZeroMaxParallel);
        }
        self.max_parallel = max;
        Ok(self)
    }

    /// Whether a failed call (any failure but `CANCELLED`) cancels the calls
    /// still running and those not started yet. Their outcomes say which call
    /// failed, so the model can tell them from a user interrupt.
    pub fn with_cancel_siblings_on_failure(mut self, cancel: bool) -> Self {
        self.cancel_siblings_on_failure = cancel;
        self
    }

    /// Names the resources a parallel call of the tool `tool` touches (from
    /// its parsed, valid arguments). A classifier that panics makes the call
    /// exclusive. Replaces an earlier classifier for the same name.
    pub fn with_resource_keys<F>(mut self, tool: impl Into<String>, classify: F) -> Self
    where
        F: Fn(&Value) -> Vec<ResourceClaim> + Send + Sync + 'static,
    {
        self.resources.insert(tool.into(), Arc::new(classify));
        self
    }

    /// The pool bound.
    pub fn max_parallel(&self) -> usize {
        self.max_parallel
    }

    /// Whether one failure cancels the rest of the turn.
    pub fn cancel_siblings_on_failure(&self) -> bool {
        self.cancel_siblings_on_failure
    }

    pub(crate) fn resource_classifier(&self, tool: &str) -> Option<&Arc<ResourceFn>> {
        if self.resources.is_empty() {
            return None;
        }
        self.resources.get(tool)
    }
}
