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
mod gate;
mod mode;
mod resources;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};
use std::task::Poll;

use futures::stream::{FuturesUnordered, StreamExt};
use futures::{FutureExt, future::poll_fn};
use tack_core::host::{NewFailure, NewOutcome};
use tack_core::tool::{ErrorCode, Failure, Outcome, ToolCall};
use tokio_util::sync::CancellationToken;

pub use config::{SchedulerConfig, SchedulerConfigError};
pub use mode::ExecutionMode;
pub use resources::{Access, ResourceClaim, ResourceFn, ResourceKey};

use crate::Pipeline;
use crate::pipeline::{CallOptions, CancelCause, Prepared, fault_description, skeleton};
use gate::Gate;
use mode::{Plan, plan_for};
use resources::ResourceTable;

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

/// A call waiting to start: resolved and parsed once, with the plan made
/// from that parse (both redone only when the tool its name resolves to is no
/// longer the one they were made for).
struct Pending {
    index: usize,
    entry: Entry,
    plan: Plan,
}

enum Entry {
    /// A call whose id the earlier call at `first` already uses: refused,
    /// not run (nor resolved or parsed).
    Duplicate { first: usize, call: ToolCall },
    /// A call not prepared yet (it is prepared when it is next to start).
    Waiting(Option<ToolCall>),
    /// A call to run (`None` only while it is being prepared again).
    Call(Option<Prepared>),
}

/// What is running.
struct Pool {
    max: usize,
    in_flight: usize,
    exclusive: bool,
    resources: ResourceTable,
    /// Claims of the running calls, by index (only calls that claim any).
    claims: Vec<(usize, Vec<resources::ResourceClaim>)>,
}

impl Pool {
    fn admits(&self, plan: &Plan) -> bool {
        if self.exclusive {
            return false;
        }
        match plan.mode {
            ExecutionMode::Parallel => {
                self.in_flight < self.max
                    && (plan.claims.is_empty() || self.resources.admits(&plan.claims))
            }
            _ => self.in_flight == 0,
        }
    }

    fn take(&mut self, index: usize, plan: Plan) {
        self.in_flight += 1;
        match plan.mode {
            ExecutionMode::Parallel => {
                if !plan.claims.is_empty() {
                    self.resources.acquire(&plan.claims);
                    self.claims.push((index, plan.claims));
                }
            }
            _ => self.exclusive = true,
        }
    }

    fn release(&mut self, index: usize) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.exclusive = false;
        if let Some(at) = self.claims.iter().position(|(i, _)| *i == index) {
            let (_, claims) = self.claims.swap_remove(at);
            self.resources.release(&claims);
        }
    }
}

enum Event {
    Finished(usize, Arc<Outcome>),
    Admitted,
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
        let hooks = self.pipeline.hooks();
        // Policy can only interleave if there is policy: decided once, when
        // the turn starts (a listener registered meanwhile orders the next turn).
        let mut checked: Option<Option<&tack_core::hook::AgentId>> = None;
        let gated = calls.iter().any(|c| {
            let agent = c.agent.as_ref();
            if checked == Some(agent) {
                return false; // same agent as the call before: already checked
            }
            checked = Some(agent);
            hooks.pre_execute().has_listeners(agent) || hooks.guards().has_listeners(agent)
        });
        let siblings = self.config.cancel_siblings_on_failure();
        // Why the turn cancelled its remaining calls (the first failure).
        let cause: OnceLock<CancelCause> = OnceLock::new();
        let cause = siblings.then_some(&cause);
        // One admission gate per call, by index.
        let gates: Vec<Gate> = (0..total).map(|_| Gate::default()).collect();

        let turn = cancel.child_token();
        // Each call without its arguments: what ends it when it cannot be
        // prepared (the call itself moved into the stage that failed).
        let mut names: Vec<ToolCall> = Vec::with_capacity(total);
        let mut queue: VecDeque<Pending> = VecDeque::with_capacity(total);
        let mut first_with_id: HashMap<tack_core::tool::CallId, usize> =
            HashMap::with_capacity(total);
        for (index, call) in calls.into_iter().enumerate() {
            names.push(skeleton(&call));
            let duplicate_of = match first_with_id.entry(call.call_id.clone()) {
                std::collections::hash_map::Entry::Occupied(first) => Some(*first.get()),
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(index);
                    None
                }
            };
            let entry = match duplicate_of {
                Some(first) => Entry::Duplicate { first, call },
                None => Entry::Waiting(Some(call)),
            };
            queue.push_back(Pending {
                index,
                entry,
                plan: Plan::EXCLUSIVE,
            });
        }
        let mut results: Vec<Option<Arc<Outcome>>> = vec![None; total];
        let mut pool = Pool {
            max: self.config.max_parallel(),
            in_flight: 0,
            exclusive: false,
            resources: ResourceTable::default(),
            claims: Vec::new(),
        };
        let mut running = FuturesUnordered::new();
        // The call whose admission is not over yet (only when gated).
        let mut admitting: Option<usize> = None;

        loop {
            while admitting.is_none() {
                let Some(next) = queue.front_mut() else { break };
                if let Entry::Duplicate { .. } = next.entry {
                    // Refused in its place in model order, without a slot.
                    let Some(next) = queue.pop_front() else { break };
                    if let Entry::Duplicate { first, call } = next.entry {
                        let outcome = self.pipeline.refuse_duplicate_id(call, first);
                        if let Some(slot) = results.get_mut(next.index) {
                            *slot = Some(outcome);
                        }
                    }
                    continue;
                }
                if let Err(failure) = self.refresh(next) {
                    // A host fault while preparing the next call: it ends
                    // `INTERNAL`, no call after it starts, and the running
                    // calls finish as they would have.
                    self.halt(&mut queue, &mut results, &names, failure);
                    break;
                }
                if !pool.admits(&next.plan) {
                    break;
                }
                let Some(next) = queue.pop_front() else { break };
                let Entry::Call(Some(prepared)) = next.entry else {
                    continue;
                };
                pool.take(next.index, next.plan);
                if gated {
                    admitting = Some(next.index);
                }
                let Some(gate) = gates.get(next.index) else {
                    continue;
                };
                let options = CallOptions {
                    admitted: move || gate.admit(),
                    cause,
                };
                running.push(self.start(next.index, prepared, turn.child_token(), options));
            }
            if running.is_empty() {
                // An empty pool admits any call, so the queue is empty too.
                break;
            }
            let event = poll_fn(|cx| {
                if let Poll::Ready(Some((index, outcome))) = running.poll_next_unpin(cx) {
                    return Poll::Ready(Event::Finished(index, outcome));
                }
                match admitting.and_then(|index| gates.get(index)) {
                    Some(gate) if gate.poll_admitted(cx) => Poll::Ready(Event::Admitted),
                    _ => Poll::Pending,
                }
            })
            .await;
            match event {
                Event::Admitted => admitting = None,
                Event::Finished(index, outcome) => {
                    pool.release(index);
                    if admitting == Some(index) {
                        admitting = None;
                    }
                    if let Some(cause) = cause
                        && !turn.is_cancelled()
                        && !cancel.is_cancelled()
                        && let Some(failure) = outcome.failure_info()
                        && failure.code != ErrorCode::Cancelled
                    {
                        let _ = cause.set(CancelCause {
                            call_id: outcome.call_id.clone(),
                            tool: outcome.tool.clone(),
                            code: failure.code,
                            message: failure.message.clone(),
                        });
                        tracing::debug!(call_id = %outcome.call_id, "a call failed; cancelling its siblings");
                        turn.cancel();
                    }
                    if let Some(slot) = results.get_mut(index) {
                        *slot = Some(outcome);
                    }
                }
            }
        }
        // Every call was started and every started call finished; the
        // fallback only keeps this total should that ever break.
        results
            .into_iter()
            .zip(names)
            .map(|(outcome, call)| {
                outcome.unwrap_or_else(|| {
                    Arc::new(Outcome::failure(
                        call.call_id,
                        call.name,
                        Failure::new(
                            ErrorCode::Internal,
                            "the scheduler lost this call's outcome; this is a fault in the host",
                        ),
                    ))
                })
            })
            .collect()
    }

    /// Ends the turn's dispatching after the call at the front of `queue`
    /// could not be prepared (`failure`, a host fault): that call ends with
    /// `failure`, and every call after it ends `CANCELLED`, not run, saying
    /// why. Both are finalized and shown to the `tools/result` observers.
    fn halt(
        &self,
        queue: &mut VecDeque<Pending>,
        results: &mut [Option<Arc<Outcome>>],
        names: &[ToolCall],
        failure: Failure,
    ) {
        let Some(faulted) = queue.pop_front() else {
            return;
        };
        let Some(call) = names.get(faulted.index).cloned() else {
            return;
        };
        let why = format!(
            "the host failed while preparing call `{}` (`{}`) of this turn, and a turn starts \
             no more calls after a host fault ({})",
            call.call_id, call.name, failure.message
        );
        if let Some(slot) = results.get_mut(faulted.index) {
            *slot = Some(self.pipeline.refuse_unrun_contained(call, failure));
        }
        for pending in queue.drain(..) {
            let call = match pending.entry {
                Entry::Duplicate { call, .. } | Entry::Waiting(Some(call)) => call,
                Entry::Call(Some(prepared)) => prepared.into_call(),
                Entry::Waiting(None) | Entry::Call(None) => {
                    match names.get(pending.index).cloned() {
                        Some(call) => call,
                        None => continue,
                    }
                }
            };
            let failure = Failure::new(
                ErrorCode::Cancelled,
                format!(
                    "`{}` was not run: {why}. Nothing was done; call it again if it is still \
                     needed",
                    call.name
                ),
            );
            if let Some(slot) = results.get_mut(pending.index) {
                *slot = Some(self.pipeline.refuse_unrun_contained(call, failure));
            }
        }
    }

    /// Resolves and parses `call` once, and plans it from that parse; a
    /// host fault while doing so is the call's failure.
    fn prepare(&self, call: ToolCall) -> Result<(Prepared, Plan), Failure> {
        let prepared = self.pipeline.try_prepare(call)?;
        let plan = match &prepared {
            Prepared::Parsed(parsed) => plan_for(
                &parsed.resolved.tool,
                parsed.arguments.value(),
                Some(&self.config),
            ),
            _ => Plan::EXCLUSIVE,
        };
        Ok((prepared, plan))
    }

    /// Prepares the next call when it first reaches the front of the queue,
    /// and again when its name no longer resolves to the tool it was prepared
    /// for (an earlier call, or an observer, re-registered or removed it): a
    /// call is classified against the registry as it is when the call is next
    /// to start. A host fault while preparing it is returned (the call is
    /// gone then: it moved into the stage that failed).
    fn refresh(&self, pending: &mut Pending) -> Result<(), Failure> {
        if let Entry::Waiting(call) = &mut pending.entry {
            let Some(call) = call.take() else {
                return Ok(());
            };
            let (prepared, plan) = self.prepare(call)?;
            pending.entry = Entry::Call(Some(prepared));
            pending.plan = plan;
            return Ok(());
        }
        let Entry::Call(slot) = &mut pending.entry else {
            return Ok(());
        };
        let Some(prepared) = slot.take() else {
            return Ok(());
        };
        let current = self.pipeline.lookup(prepared.call()).ok();
        let same = match (prepared.tool(), &current) {
            // The same registration (each thread calls through its own copy).
            (Some(was), Some(now)) => was.id == now.id,
            (None, None) => true,
            _ => false,
        };
        if same {
            *slot = Some(prepared);
            return Ok(());
        }
        let (prepared, plan) = self.prepare(prepared.into_call())?;
        *slot = Some(prepared);
        pending.plan = plan;
        Ok(())
    }

    /// One call through the pipeline, as the current call of its turn.
    fn start<'a, A: FnOnce() + Send + 'a>(
        &'a self,
        index: usize,
        prepared: Prepared,
        cancel: CancellationToken,
        options: CallOptions<'a, A>,
    ) -> impl Future<Output = (usize, Arc<Outcome>)> + Send + 'a {
        let call_id = prepared.call().call_id.clone();
        let tool = prepared.call().name.clone();
        let run =
            AssertUnwindSafe(self.pipeline.run_prepared(prepared, cancel, options)).catch_unwind();
        run.map(move |result| {
            let outcome = result.unwrap_or_else(|payload| {
                let message = fault_description(&*payload, "the pipeline");
                tracing::error!(%call_id, %message, "the pipeline panicked");
                Arc::new(Outcome::failure(
                    call_id,
                    tool,
                    Failure::new(
                        ErrorCode::Internal,
                        format!("the pipeline failed while running this call ({message}); this is a fault in the host, not in the call"),
                    ),
                ))
            });
            (index, outcome)
        })
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
