//! The pipeline as the harness drives it: a pipeline with a stage recorder
//! and the harness's nested dispatcher over a registry, and calls through it.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use tack_core::CancellationToken;
use tack_core::capability::{BatchEvent, DispatchBatch, ToolDispatcher};
use tack_core::hook::{Disposer, Scope};
use tack_core::hooks::ToolHooks;
use tack_core::host::Guards;
use tack_core::host::SerialBatch;
use tack_core::host::{CapabilitySlots, NewOutcome, NewToolError};
use tack_core::plugin::PluginError;
use tack_core::plugin::ToolRegistrar;
use tack_core::tool::{CallId, ErrorCode, Outcome, ToolCall, ToolDefinition, ToolError};
use tack_pipeline::{
    APPROVAL_STAGE, ExecutionMode, Pipeline, PipelineConfig, StageRecorder, ToolRegistry,
    TurnScheduler,
};

use crate::Stage;
use crate::nested::NestedCalls;

/// The stages each call entered, by call id.
#[derive(Default)]
struct StageLog(Mutex<HashMap<CallId, Vec<Stage>>>);

impl StageRecorder for StageLog {
    fn record(&self, call_id: &CallId, stage: Stage) {
        self.0
            .lock()
            .entry(call_id.clone())
            .or_default()
            .push(stage);
    }
}

/// The stage a provenance's hook name stands for.
pub(crate) fn stage_of_hook(hook: &str) -> Option<Stage> {
    use tack_core::hooks::ToolHooks;
    match hook {
        h if h == ToolHooks::PRE_EXECUTE => Some(Stage::PreExecute),
        h if h == APPROVAL_STAGE => Some(Stage::Approval),
        h if h == Guards::STAGE => Some(Stage::Guard),
        h if h == ToolHooks::EXECUTE => Some(Stage::Execute),
        h if h == ToolHooks::POST_EXECUTE => Some(Stage::PostExecute),
        _ => None,
    }
}

/// The real pipeline, as the harness drives it.
pub(crate) struct Driver {
    pipeline: Pipeline,
    stages: Arc<StageLog>,
    nested: NestedCalls,
}

impl Driver {
    /// A pipeline over an empty registry whose nested dispatcher (the one
    /// composite tools get from their run context) is the harness's own.
    pub(crate) fn new() -> Arc<Self> {
        Arc::new_cyclic(|me| {
            let stages = Arc::new(StageLog::default());
            let config = PipelineConfig::default().with_stage_recorder(stages.clone());
            let capabilities = CapabilitySlots::new();
            // Provided first, so the pipeline does not provide its own.
            capabilities.provide_dispatcher(Arc::new(NestedDispatcher::new(me.clone())));
            let pipeline =
                Pipeline::with_parts(ToolRegistry::new(), ToolHooks::new(), capabilities, config);
            Self {
                pipeline,
                stages,
                nested: NestedCalls::default(),
            }
        })
    }

    pub(crate) fn hooks(&self) -> &ToolHooks {
        self.pipeline.hooks()
    }

    pub(crate) fn capabilities(&self) -> &CapabilitySlots {
        self.pipeline.capabilities()
    }

    pub(crate) fn registry(&self) -> &ToolRegistry {
        self.pipeline.registry()
    }

    pub(crate) fn registrar(&self) -> &dyn ToolRegistrar {
        self.pipeline.registry()
    }

    pub(crate) fn register(
        &self,
        scope: Scope,
        definition: ToolDefinition,
    ) -> Result<Disposer, PluginError> {
        self.pipeline.registry().register_in(scope, definition)
    }

    pub(crate) async fn execute(&self, call: ToolCall, cancel: CancellationToken) -> Arc<Outcome> {
        self.pipeline.execute(call, cancel).await
    }

    pub(crate) async fn execute_admitted(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        admitted: impl FnOnce() + Send,
    ) -> Arc<Outcome> {
        self.pipeline.execute_admitted(call, cancel, admitted).await
    }

    /// A batch under the turn scheduler's rules (default configuration),
    /// exactly as the pipeline's own nested dispatcher opens one.
    pub(crate) fn batch(
        &self,
        cancel: CancellationToken,
        max_parallel: usize,
    ) -> Box<dyn DispatchBatch> {
        TurnScheduler::new(self.pipeline.clone()).batch(cancel, max_parallel)
    }

    pub(crate) fn execution_mode(&self, call: &ToolCall) -> ExecutionMode {
        self.pipeline.execution_mode(call)
    }

    pub(crate) fn nested(&self) -> &NestedCalls {
        &self.nested
    }

    pub(crate) fn take_stages(&self, call_id: &CallId) -> Vec<Stage> {
        self.stages.0.lock().remove(call_id).unwrap_or_default()
    }
}

type OutcomeFuture = Pin<Box<dyn Future<Output = Arc<Outcome>> + Send + 'static>>;

/// The harness's nested dispatcher: runs nested calls through the harness's pipeline, exactly as the
/// pipeline's own nested dispatcher does, and notes each outcome under the
/// root of the call's parent token. Holds the driver weakly: it lives in the
/// driver's own capability slots.
pub(crate) struct NestedDispatcher(Weak<Driver>);

impl NestedDispatcher {
    pub(crate) fn new(driver: Weak<Driver>) -> Self {
        Self(driver)
    }
}

impl ToolDispatcher for NestedDispatcher {
    fn dispatch(&self, call: ToolCall, cancel: CancellationToken) -> OutcomeFuture {
        self.dispatch_admitted(call, cancel, Box::new(|| {}))
    }

    fn dispatch_admitted(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        admitted: Box<dyn FnOnce() + Send + 'static>,
    ) -> OutcomeFuture {
        let driver = self.0.upgrade();
        Box::pin(async move {
            let Some(driver) = driver else {
                admitted();
                return Arc::new(Outcome::failure(
                    call.call_id,
                    call.name,
                    ToolError::from_code(
                        ErrorCode::Internal,
                        "the harness was dropped before this nested call ran",
                    ),
                ));
            };
            let root = call.parent.as_ref().map(|p| p.root_call_id().clone());
            let outcome = driver.execute_admitted(call, cancel, admitted).await;
            // A call made without a parent token belongs to no top-level
            // call: it is not kept (its record stays with the harness).
            if let Some(root) = root {
                driver.nested().push(root, outcome.clone());
            }
            outcome
        })
    }

    fn open_batch(
        &self,
        cancel: CancellationToken,
        max_parallel: usize,
    ) -> Box<dyn DispatchBatch + '_> {
        match self.0.upgrade() {
            Some(driver) => Box::new(NestedBatch {
                batch: driver.batch(cancel, max_parallel),
                driver,
                roots: HashMap::new(),
            }),
            // Each call ends `INTERNAL` through `dispatch`, one at a time.
            None => Box::new(SerialBatch::new(self, cancel)),
        }
    }
}

/// The harness's batch: the pipeline's (the turn scheduler's rules), noting
/// each outcome under the root of the call's parent token.
struct NestedBatch {
    batch: Box<dyn DispatchBatch>,
    driver: Arc<Driver>,
    /// The root of each submitted call's parent token, by index.
    roots: HashMap<usize, CallId>,
}

impl DispatchBatch for NestedBatch {
    fn submit(&mut self, call: ToolCall) -> usize {
        let root = call.parent.as_ref().map(|p| p.root_call_id().clone());
        let index = self.batch.submit(call);
        if let Some(root) = root {
            self.roots.insert(index, root);
        }
        index
    }

    fn poll_event(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<BatchEvent>> {
        let event = std::task::ready!(self.batch.poll_event(cx));
        if let Some(BatchEvent::Ended(index, outcome)) = &event
            && let Some(root) = self.roots.remove(index)
        {
            self.driver.nested().push(root, outcome.clone());
        }
        std::task::Poll::Ready(event)
    }
}
