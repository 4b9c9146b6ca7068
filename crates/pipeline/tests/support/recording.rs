//! A registry and its pipeline wired for tests: a stage recorder and a `tools/result` observer
//! that keeps every outcome. Shared by the `all` and `scheduler` test crates
//! (each includes this file with `#[path]`).

use std::sync::Arc;

use parking_lot::Mutex;
use tack_core::hook::Disposer;
use tack_core::hooks::ToolHooks;
use tack_core::host::CapabilitySlots;
use tack_core::tool::{CallId, Outcome};
use tack_pipeline::{Pipeline, PipelineConfig, Stage, StageRecorder, ToolRegistry};

/// Collects `(call_id, stage)` in the order the pipeline reports them.
#[derive(Default)]
pub struct Recorder {
    events: Mutex<Vec<(String, Stage)>>,
}

impl StageRecorder for Recorder {
    fn record(&self, call_id: &CallId, stage: Stage) {
        self.events
            .lock()
            .push((call_id.as_str().to_owned(), stage));
    }
}

impl Recorder {
    /// Every `(call_id, stage)` so far, in order.
    pub fn all(&self) -> Vec<(String, Stage)> {
        self.events.lock().clone()
    }
}

/// The parts of a recorded registry; keep `observer` alive as long as the registry.
pub struct Recorded {
    pub registry: ToolRegistry,
    pub pipeline: Pipeline,
    pub recorder: Arc<Recorder>,
    pub outcomes: Arc<Mutex<Vec<Arc<Outcome>>>>,
    pub observer: Disposer,
}

/// A registry with `config`, a stage recorder, and a result observer named `observer`.
pub fn recorded_registry(config: PipelineConfig, observer: &str) -> Recorded {
    let recorder = Arc::new(Recorder::default());
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::with_parts(
        registry.clone(),
        ToolHooks::new(),
        CapabilitySlots::new(),
        config.with_stage_recorder(recorder.clone()),
    );
    let outcomes: Arc<Mutex<Vec<Arc<Outcome>>>> = Arc::default();
    let seen = outcomes.clone();
    let observer = pipeline.hooks().result().tap(observer, move |record| {
        seen.lock().push(record.outcome.clone());
    });
    Recorded {
        registry,
        pipeline,
        recorder,
        outcomes,
        observer,
    }
}
