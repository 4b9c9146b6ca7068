//! The pipeline as the nested dispatcher of composite tools: single calls
//! through the pipeline, batches on the turn scheduler's own schedule. Here,
//! beside the scheduler, because the pipeline's batches follow its rules.

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tack_core::capability::{BatchEvent, DispatchBatch, ToolDispatcher};
use tack_core::hooks::ToolHooks;
use tack_core::host::{CapabilitySlots, NewOutcome, NewToolError};
use tack_core::tool::{ErrorCode, Outcome, ToolCall, ToolError};
use tokio_util::sync::CancellationToken;

use super::config::SchedulerConfig;
use super::schedule::Schedule;
use crate::pipeline::WeakPipeline;
use crate::{Pipeline, PipelineConfig, ToolRegistry};

impl Pipeline {
    /// A pipeline over `registry` with existing hook points, capability slots
    /// and settings (hook points and slots are shared handles: a plugin
    /// installed into them before or after is seen by the calls).
    ///
    /// ```
    /// use tack_core::host::CapabilitySlots;
    /// use tack_core::hooks::ToolHooks;
    /// use tack_pipeline::{Pipeline, PipelineConfig, ToolRegistry};
    ///
    /// let hooks = ToolHooks::new();
    /// let pipeline = Pipeline::with_parts(
    ///     ToolRegistry::new(),
    ///     hooks.clone(),
    ///     CapabilitySlots::new(),
    ///     PipelineConfig::default().with_max_argument_bytes(64 * 1024),
    /// );
    /// assert_eq!(pipeline.config().max_argument_bytes(), 64 * 1024);
    /// // The pipeline is the nested dispatcher of composite tools.
    /// assert!(pipeline.capabilities().snapshot().dispatcher.is_some());
    /// ```
    pub fn with_parts(
        registry: ToolRegistry,
        hooks: ToolHooks,
        capabilities: CapabilitySlots,
        config: PipelineConfig,
    ) -> Self {
        let pipeline = Self::assemble(registry, hooks, capabilities, config);
        if pipeline.capabilities().snapshot().dispatcher.is_none() {
            let nested = pipeline.nested_dispatcher(Arc::default());
            pipeline.capabilities().provide_dispatcher(nested);
        }
        pipeline
    }

    /// A nested dispatcher over this pipeline (held weakly) whose batches
    /// follow `scheduling`: the pipeline's own (default configuration), and
    /// what [`TurnScheduler::dispatcher`](crate::TurnScheduler::dispatcher)
    /// returns.
    pub(crate) fn nested_dispatcher(
        &self,
        scheduling: Arc<SchedulerConfig>,
    ) -> Arc<dyn ToolDispatcher> {
        Arc::new(NestedDispatcher {
            pipeline: self.downgrade(),
            scheduling,
        })
    }
}

/// The pipeline as the nested dispatcher of composite tools. Holds the
/// pipeline weakly: the capability lives inside the pipeline's own slots.
/// Its batches follow `scheduling`.
struct NestedDispatcher {
    pipeline: WeakPipeline,
    scheduling: Arc<SchedulerConfig>,
}

/// The outcome of a nested call whose pipeline is gone.
fn shut_down(call: ToolCall) -> Arc<Outcome> {
    Arc::new(Outcome::failure(
        call.call_id,
        call.name,
        ToolError::from_code(
            ErrorCode::Internal,
            "the pipeline was shut down before this nested call ran",
        ),
    ))
}

impl ToolDispatcher for NestedDispatcher {
    fn dispatch(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Arc<Outcome>> {
        self.dispatch_admitted(call, cancel, Box::new(|| {}))
    }

    fn dispatch_admitted(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        admitted: Box<dyn FnOnce() + Send + 'static>,
    ) -> BoxFuture<'static, Arc<Outcome>> {
        let pipeline = self.pipeline.upgrade();
        Box::pin(async move {
            match pipeline {
                Some(pipeline) => pipeline.execute_admitted(call, cancel, admitted).await,
                None => {
                    admitted();
                    shut_down(call)
                }
            }
        })
    }

    fn open_batch(
        &self,
        cancel: CancellationToken,
        max_parallel: usize,
    ) -> Box<dyn DispatchBatch + '_> {
        match self.pipeline.upgrade() {
            Some(pipeline) => {
                scheduled_batch(pipeline, Arc::clone(&self.scheduling), cancel, max_parallel)
            }
            None => Box::new(ShutDownBatch::default()),
        }
    }
}

impl ToolDispatcher for Pipeline {
    fn dispatch(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Arc<Outcome>> {
        let pipeline = self.clone();
        Box::pin(async move { pipeline.execute(call, cancel).await })
    }

    fn dispatch_admitted(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        admitted: Box<dyn FnOnce() + Send + 'static>,
    ) -> BoxFuture<'static, Arc<Outcome>> {
        let pipeline = self.clone();
        Box::pin(async move { pipeline.execute_admitted(call, cancel, admitted).await })
    }

    /// A batch under the default [`SchedulerConfig`].
    fn open_batch(
        &self,
        cancel: CancellationToken,
        max_parallel: usize,
    ) -> Box<dyn DispatchBatch + '_> {
        scheduled_batch(self.clone(), Arc::default(), cancel, max_parallel)
    }
}

/// A batch of calls through `pipeline` on the turn scheduler's own
/// schedule, under `scheduling` (what every batch of this crate is).
pub(super) fn scheduled_batch(
    pipeline: Pipeline,
    scheduling: Arc<SchedulerConfig>,
    cancel: CancellationToken,
    max_parallel: usize,
) -> Box<dyn DispatchBatch> {
    Box::new(ScheduledBatch(Schedule::new(
        pipeline,
        scheduling,
        cancel,
        max_parallel,
    )))
}

/// A composite tool's batch: the turn scheduler's schedule, fed call by call.
struct ScheduledBatch(Schedule);

impl DispatchBatch for ScheduledBatch {
    fn submit(&mut self, call: ToolCall) -> usize {
        self.0.push(call)
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<BatchEvent>> {
        self.0.poll_event(cx)
    }
}

/// The batch of a dispatcher whose pipeline is gone: each call starts and
/// ends `INTERNAL` at once, in submission order.
#[derive(Default)]
struct ShutDownBatch {
    submitted: usize,
    events: std::collections::VecDeque<BatchEvent>,
}

impl DispatchBatch for ShutDownBatch {
    fn submit(&mut self, call: ToolCall) -> usize {
        let index = self.submitted;
        self.submitted += 1;
        self.events.push_back(BatchEvent::Started(index));
        self.events
            .push_back(BatchEvent::Ended(index, shut_down(call)));
        index
    }

    fn poll_event(&mut self, _cx: &mut Context<'_>) -> Poll<Option<BatchEvent>> {
        Poll::Ready(self.events.pop_front())
    }
}
