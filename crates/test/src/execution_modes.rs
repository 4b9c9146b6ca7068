//! How the harness's pipeline would schedule a call: parallel or exclusive.

use std::fmt;
use std::sync::{Arc, Weak};

use tack_core::tool::ToolCall;

use crate::driver::Driver;

/// Whether a call may run beside others: the pipeline's own
/// [`ExecutionMode`](tack_pipeline::ExecutionMode).
pub use tack_pipeline::ExecutionMode;

/// A classifier over a call, shaped the way composite tools take one (code
/// mode's sub-call classifier, for one).
pub type CallClassifier = Arc<dyn Fn(&ToolCall) -> bool + Send + Sync>;

/// The execution mode the harness's pipeline gives a call — what a host
/// builds a composite tool's classifier from (for code mode: which sub-calls
/// may overlap). Take it from [`HarnessBuilder::execution_modes`] to build
/// the plugin under test with it, or from
/// [`Harness::execution_modes`](crate::Harness::execution_modes).
///
/// It holds the pipeline weakly (a plugin that keeps it does not keep the
/// harness alive): once the harness is dropped, every call is
/// [`ExecutionMode::Exclusive`].
///
/// ```
/// use tack_core::plugin::{Plugin, PluginContext, PluginError};
/// use tack_core::tool::ToolCall;
/// use tack_test::{ExecutionMode, FakeTool, Harness};
///
/// /// A plugin that schedules with a classifier the host gives it.
/// struct Batches { parallel: tack_test::CallClassifier }
/// impl Plugin for Batches {
///     fn name(&self) -> &str { "batches" }
///     fn install(&self, _: &mut PluginContext<'_>) -> Result<(), PluginError> { Ok(()) }
/// }
///
/// let builder = Harness::builder()
///     .tool(FakeTool::new("read").concurrency_safe(true))
///     .tool(FakeTool::new("write"));
/// let modes = builder.execution_modes();
/// let h = builder.install(Batches { parallel: modes.classifier() }).unwrap();
///
/// let read = ToolCall::new("c1", "read", "{}");
/// let write = ToolCall::new("c2", "write", "{}");
/// assert_eq!(modes.mode(&read), ExecutionMode::Parallel);
/// assert_eq!(modes.mode(&write), ExecutionMode::Exclusive);
/// assert!((h.plugin().parallel)(&read));
/// assert!(!(h.plugin().parallel)(&write));
///
/// drop(h);
/// assert_eq!(modes.mode(&read), ExecutionMode::Exclusive);
/// ```
///
/// [`HarnessBuilder::execution_modes`]: crate::HarnessBuilder::execution_modes
#[derive(Clone)]
pub struct ExecutionModes {
    driver: Weak<Driver>,
}

impl fmt::Debug for ExecutionModes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecutionModes")
            .field("harness_alive", &(self.driver.strong_count() > 0))
            .finish()
    }
}

impl ExecutionModes {
    pub(crate) fn new(driver: &Arc<Driver>) -> Self {
        Self {
            driver: Arc::downgrade(driver),
        }
    }

    /// How the pipeline would run `call` now: [`ExecutionMode::Parallel`]
    /// only when the tool is visible to the call's agent, the arguments parse
    /// and validate, and the tool's concurrency classifier says `true`.
    pub fn mode(&self, call: &ToolCall) -> ExecutionMode {
        self.driver
            .upgrade()
            .map_or(ExecutionMode::Exclusive, |driver| {
                driver.execution_mode(call)
            })
    }

    /// Whether [`mode`](Self::mode) is [`ExecutionMode::Parallel`].
    pub fn is_parallel(&self, call: &ToolCall) -> bool {
        self.mode(call) == ExecutionMode::Parallel
    }

    /// [`is_parallel`](Self::is_parallel) as a classifier to hand to the
    /// plugin under test.
    pub fn classifier(&self) -> CallClassifier {
        let modes = self.clone();
        Arc::new(move |call| modes.is_parallel(call))
    }
}
