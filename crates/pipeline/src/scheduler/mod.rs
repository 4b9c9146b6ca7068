//! The turn scheduler (docs/pipeline.md, Scheduling): a turn's calls run as barriers
//! and a bounded rolling pool, start in model order, evaluate policy in model
//! order, and come back in model order.
//!
//! ```text
//!  model order:   c1 P   c2 P   c3 E   c4 P   c5 P   c6 P        max_parallel = 2
//!
//!  c1  [adm|==body==]
//!  c2       [adm|=====body=====]
//!  c3                           [adm|==body==]
//!  c4                                         [adm|=body=]
//!  c5                                              [adm|====body====]
//!  c6                                                   (pool full) [adm|=body=]
//! ```
//!
//! `adm` is admission (parse, validate, pre-execute, approval, guards): one
//! call at a time, in model order. Bodies of parallel calls overlap.

mod config;
mod dispatcher;
mod gate;
mod mode;
mod resources;
mod schedule;

use std::fmt;
use std::sync::Arc;

use futures::future::poll_fn;
use tack_core::capability::{BatchEvent, DispatchBatch, ToolDispatcher};
use tack_core::host::{NewOutcome, NewToolError};
use tack_core::tool::{ErrorCode, Outcome, ToolCall, ToolError};
use tokio_util::sync::CancellationToken;

pub use config::{SchedulerConfig, SchedulerConfigError};
pub use mode::ExecutionMode;
pub use resources::{Access, ResourceClaim, ResourceFn, ResourceKey};

use crate::Pipeline;
use schedule::Schedule;

/// Runs a turn's tool calls through a [`Pipeline`]: parallel calls share a
/// bounded rolling pool, exclusive calls run alone, and outcomes come back in
/// model order.
///
/// * **One parse**: each call is resolved and its arguments parsed and
///   validated once; its mode and resource claims are decided from that
///   parse, and the pipeline continues the call from it.
/// * **Modes**: each call is classified ([`ExecutionMode`]) when it is next to
///   start, not before: an earlier call that re-registers a tool, or a result
///   observer that changes one, is seen by the calls after it.
/// * **Pool**: consecutive parallel calls run at most
///   [`max_parallel`](SchedulerConfig::max_parallel) at once; the next one
///   starts as soon as one finishes. An exclusive call waits for everything
///   before it, runs alone, and nothing after it starts before it ends.
/// * **Order**: calls start in model order, and a call starts only once the
///   previous call's admission (parse, validate, `tools/pre-execute`, approval,
///   guards) is over, so policy runs in model order and approval prompts never
///   interleave. Outcomes are returned in model order. The end of admission
///   comes from [`Pipeline::execute_admitted`], the public mechanism
///   composite tools use too.
/// * **Cancellation**: cancelling the turn's token cancels the running calls;
///   the calls not started yet still go through the pipeline (observers and
///   `finalize_content` see them) and end `CANCELLED`, not dispatched.
///   Nothing is dropped: there is one outcome per call.
/// * **Call ids**: every call of a turn needs its own id. A call whose id an
///   earlier call of the same turn already uses is not run: it ends
///   `INVALID_ARGUMENTS` ("call id X is already used by call #N in this
///   batch"), in its place in model order, and the first call with that id
///   runs normally.
/// * **Failures**: by default a failure does not touch its siblings. With
///   [`with_cancel_siblings_on_failure`](SchedulerConfig::with_cancel_siblings_on_failure)
///   the first failure cancels the rest, whose outcomes name the failed call.
/// * **Resources** (optional): parallel calls whose claims conflict (the same
///   key, one of them writing) do not overlap.
/// * **Batches**: the same schedule runs a composite tool's calls, fed as a
///   stream ([`batch`](Self::batch), and the pipeline's
///   [`ToolDispatcher::open_batch`]): code mode's sub-calls follow these
///   rules, in submission order.
///
/// All calls are driven by the task that awaits [`run_turn`](Self::run_turn)
/// (no task is spawned): a tool body that needs a thread of its own should
/// use `spawn_blocking`.
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::{OutputSpec, ToolCall, ToolDefinition};
/// use tack_pipeline::{Pipeline, SchedulerConfig, ToolRegistry, TurnScheduler};
/// use tokio_util::sync::CancellationToken;
///
/// # futures::executor::block_on(async {
/// let registry = ToolRegistry::new();
/// let _echo = registry.register(
///     ToolDefinition::builder("echo")
///         .description("Repeat the text.")
///         .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
///         .output(OutputSpec::new(json!({"type": "string"})))
///         .concurrency_safe(|_| true)
///         .handler(|args, _cx| async move { Ok(args["text"].clone()) })
///         .build()
///         .unwrap(),
/// ).unwrap();
///
/// let config = SchedulerConfig::default().with_max_parallel(4).unwrap();
/// let scheduler = TurnScheduler::with_config(Pipeline::new(registry), config);
/// let calls = vec![
///     ToolCall::new("c1", "echo", r#"{"text": "a"}"#),
///     ToolCall::new("c2", "nope", "{}"),
///     ToolCall::new("c3", "echo", r#"{"text": "c"}"#),
/// ];
/// let outcomes = scheduler.run_turn(calls, CancellationToken::new()).await;
/// let ids: Vec<&str> = outcomes.iter().map(|o| o.call_id.as_str()).collect();
/// assert_eq!(ids, ["c1", "c2", "c3"]);
/// assert!(outcomes[0].is_success() && !outcomes[1].is_success() && outcomes[2].is_success());
/// # });
/// ```
#[derive(Clone)]
pub struct TurnScheduler {
    pipeline: Pipeline,
    config: Arc<SchedulerConfig>,
}

impl fmt::Debug for TurnScheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TurnScheduler")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl TurnScheduler {
    /// A scheduler over `pipeline` with the default configuration.
    pub fn new(pipeline: Pipeline) -> Self {
        Self::with_config(pipeline, SchedulerConfig::default())
    }

    /// A scheduler over `pipeline` with `config`.
    pub fn with_config(pipeline: Pipeline, config: SchedulerConfig) -> Self {
        Self {
            pipeline,
            config: Arc::new(config),
        }
    }

    /// The pipeline calls run through.
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// The configuration.
    pub fn config(&self) -> &SchedulerConfig {
        &self.config
    }

    /// How `call` would run now; see [`ExecutionMode`].
    pub fn execution_mode(&self, call: &ToolCall) -> ExecutionMode {
        self.pipeline.execution_mode(call)
    }

    /// Runs `calls` as one turn and returns their outcomes in model order: one
    /// per call, each the same frozen value the `tools/result` observers saw.
    ///
    /// `cancel` is the turn's signal: cancelling it cancels the running calls
    /// and turns the calls not started yet into `CANCELLED` outcomes (through
    /// the pipeline). See the type's documentation for the schedule.
    pub async fn run_turn(
        &self,
        calls: Vec<ToolCall>,
        cancel: CancellationToken,
    ) -> Vec<Arc<Outcome>> {
        let total = calls.len();
        if total == 0 {
            return Vec::new();
        }
        let mut schedule = Schedule::new(
            self.pipeline.clone(),
            Arc::clone(&self.config),
            cancel,
            usize::MAX,
        )
        .without_starts();
        schedule.reserve(total);
        for call in calls {
            schedule.push(call);
        }
        let mut results: Vec<Option<Arc<Outcome>>> = vec![None; total];
        while let Some(event) = poll_fn(|cx| schedule.poll_event(cx)).await {
            if let BatchEvent::Ended(index, outcome) = event
                && let Some(slot) = results.get_mut(index)
            {
                *slot = Some(outcome);
            }
        }
        // Every call was started and every started call finished; the
        // fallback only keeps this total should that ever break.
        let lost = |index: usize| {
            let call = schedule
                .name(index)
                .cloned()
                .unwrap_or_else(|| ToolCall::new("", "", ""));
            Arc::new(Outcome::failure(
                call.call_id,
                call.name,
                ToolError::from_code(
                    ErrorCode::Internal,
                    "the scheduler lost this call's outcome; this is a fault in the host",
                ),
            ))
        };
        debug_assert_eq!(schedule.len(), total);
        results
            .into_iter()
            .enumerate()
            .map(|(index, outcome)| outcome.unwrap_or_else(|| lost(index)))
            .collect()
    }

    /// A batch of calls run under this scheduler's rules as they are
    /// submitted, one at a time or many at once: the same schedule as
    /// [`run_turn`](Self::run_turn)'s, fed as a stream. `cancel` is the
    /// batch's signal; at most `max_parallel` parallel calls overlap (never
    /// more than the configuration's bound; `0` counts as `1`). This is
    /// what a composite tool's
    /// [`ToolDispatcher::open_batch`] returns.
    ///
    /// ```
    /// use serde_json::json;
    /// use tack_core::capability::BatchEvent;
    /// use tack_core::tool::{OutputSpec, ToolCall, ToolDefinition};
    /// use tack_pipeline::{Pipeline, ToolRegistry, TurnScheduler};
    /// use tokio_util::sync::CancellationToken;
    ///
    /// # futures::executor::block_on(async {
    /// let registry = ToolRegistry::new();
    /// let _echo = registry.register(
    ///     ToolDefinition::builder("echo")
    ///         .description("Repeat the text.")
    ///         .input_schema(json!({"type": "object"}))
    ///         .output(OutputSpec::new(json!({})))
    ///         .handler(|args, _cx| async move { Ok((*args).clone()) })
    ///         .build()
    ///         .unwrap(),
    /// ).unwrap();
    /// let scheduler = TurnScheduler::new(Pipeline::new(registry));
    /// let mut batch = scheduler.batch(CancellationToken::new(), 4);
    /// batch.submit(ToolCall::new("c1", "echo", r#"{"n": 1}"#));
    /// batch.submit(ToolCall::new("c2", "echo", r#"{"n": 2}"#));
    /// let mut ended = Vec::new();
    /// while let Some(event) = batch.next_event().await {
    ///     if let BatchEvent::Ended(index, outcome) = event {
    ///         ended.push((index, outcome.value().cloned()));
    ///     }
    /// }
    /// // `echo` is exclusive (no `concurrency_safe`): one after the other.
    /// assert_eq!(ended, [(0, Some(json!({"n": 1}))), (1, Some(json!({"n": 2})))]);
    /// # });
    /// ```
    pub fn batch(&self, cancel: CancellationToken, max_parallel: usize) -> Box<dyn DispatchBatch> {
        dispatcher::scheduled_batch(
            self.pipeline.clone(),
            Arc::clone(&self.config),
            cancel,
            max_parallel,
        )
    }

    /// A nested dispatcher whose batches
    /// ([`ToolDispatcher::open_batch`]) follow this scheduler's
    /// configuration (pool bound, resource keys, sibling cancellation). The
    /// pipeline's own dispatcher batches with the default configuration;
    /// a host whose scheduler is configured otherwise provides this one, so
    /// a composite tool's sub-calls follow the same rules as the model's
    /// calls:
    ///
    /// ```
    /// use tack_pipeline::{Pipeline, SchedulerConfig, ToolRegistry, TurnScheduler};
    ///
    /// let pipeline = Pipeline::new(ToolRegistry::new());
    /// let config = SchedulerConfig::default().with_max_parallel(2).unwrap();
    /// let scheduler = TurnScheduler::with_config(pipeline.clone(), config);
    /// pipeline.capabilities().provide_dispatcher(scheduler.dispatcher());
    /// ```
    ///
    /// It holds the pipeline weakly (it lives in the pipeline's own
    /// capability slots).
    pub fn dispatcher(&self) -> Arc<dyn ToolDispatcher> {
        self.pipeline.nested_dispatcher(Arc::clone(&self.config))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;
    use tack_core::tool::{OutputSpec, ToolCall, ToolDefinition};
    use tokio_util::sync::CancellationToken;

    use super::{SchedulerConfig, TurnScheduler};
    use crate::pipeline::parse::tests::PARSES;
    use crate::{Access, Pipeline, ResourceClaim, ToolRegistry};

    /// A turn parses each call's arguments once: the scheduler plans from
    /// the parse (mode and resource claims), and the pipeline and the tool
    /// use the same one.
    #[test]
    fn a_turn_parses_each_calls_arguments_once() {
        let registry = ToolRegistry::new();
        let classified = Arc::new(AtomicUsize::new(0));
        let seen = classified.clone();
        let read = ToolDefinition::builder("read")
            .description("Read a file.")
            .input_schema(json!({"type": "object", "properties": {"path": {"type": "string"}}}))
            .output(OutputSpec::new(json!({"type": "string"})))
            .concurrency_safe(move |_| {
                seen.fetch_add(1, Ordering::SeqCst);
                true
            })
            .handler(|args, _cx| async move { Ok(args["path"].clone()) })
            .build()
            .unwrap();
        registry.register(read).unwrap();
        let config = SchedulerConfig::default()
            .with_max_parallel(2)
            .unwrap()
            .with_resource_keys("read", |args: &serde_json::Value| {
                vec![ResourceClaim::new(
                    args["path"].as_str().unwrap_or_default(),
                    Access::Read,
                )]
            });
        let scheduler = TurnScheduler::with_config(Pipeline::new(registry), config);
        let calls: Vec<ToolCall> = (0..5)
            .map(|i| ToolCall::new(format!("c{i}"), "read", format!(r#"{{"path": "f{i}"}}"#)))
            .collect();
        PARSES.with(|p| p.set(0));
        let outcomes =
            futures::executor::block_on(scheduler.run_turn(calls, CancellationToken::new()));
        assert!(outcomes.iter().all(|o| o.is_success()), "{outcomes:?}");
        assert_eq!(
            classified.load(Ordering::SeqCst),
            5,
            "each call was planned"
        );
        assert_eq!(
            PARSES.with(|p| p.get()),
            5,
            "one parse per call, not one per stage"
        );
    }
}
