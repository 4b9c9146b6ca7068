//! The scheduler's rules, as one state machine over a stream of calls: the
//! turn scheduler feeds it a model's calls at once
//! ([`TurnScheduler::run_turn`](super::TurnScheduler::run_turn)), and a
//! composite tool's [`DispatchBatch`](tack_core::capability::DispatchBatch)
//! feeds it sub-calls as they come. Both get the same schedule.

use std::collections::{HashMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use futures::FutureExt;
use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use tack_core::capability::BatchEvent;
use tack_core::hook::AgentId;
use tack_core::host::{NewOutcome, NewToolError};
use tack_core::tool::{CallId, ErrorCode, Outcome, ToolCall, ToolError};
use tokio_util::sync::CancellationToken;

use super::config::SchedulerConfig;
use super::gate::Gate;
use super::mode::{ExecutionMode, Plan, plan_for};
use super::resources::{ResourceClaim, ResourceTable};
use crate::Pipeline;
use crate::pipeline::{CallOptions, CancelCause, Prepared, fault_description, skeleton};

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
    claims: Vec<(usize, Vec<ResourceClaim>)>,
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

/// The calls of one turn (or one batch) and where each one is: queued,
/// admitting, running, ended. Calls are [`push`](Self::push)ed in order and
/// [`poll_event`](Self::poll_event) drives them.
pub(crate) struct Schedule {
    pipeline: Pipeline,
    config: Arc<SchedulerConfig>,
    /// The caller's signal.
    cancel: CancellationToken,
    /// Its child, which a failure cancels (with `cancel_siblings_on_failure`).
    turn: CancellationToken,
    /// Why the turn cancelled its remaining calls (the first failure).
    cause: Option<Arc<OnceLock<CancelCause>>>,
    /// Whether any call pushed so far has policy that could interleave:
    /// from then on each call starts only once the previous one is admitted.
    gated: bool,
    /// The agent whose listeners were checked last (a run of calls of one
    /// agent is checked once).
    checked: Option<Option<AgentId>>,
    /// How many calls were pushed (the next call's index).
    submitted: usize,
    /// Each call that has not ended, without its arguments: what ends it
    /// when it cannot be prepared (the call itself moved into the stage that
    /// failed). Forgotten when it ends, so a long batch holds only these.
    names: Names,
    first_with_id: HashMap<CallId, usize>,
    queue: VecDeque<Pending>,
    pool: Pool,
    running: FuturesUnordered<BoxFuture<'static, (usize, Arc<Outcome>)>>,
    /// The call whose admission is not over yet (only when gated).
    admitting: Option<usize>,
    /// Hears when that call's admission is over (one call admits at a time,
    /// so one gate serves them all, reset as each starts).
    gate: Arc<Gate>,
    /// Events decided without polling a call (starts, refusals).
    ready: VecDeque<BatchEvent>,
    /// Set by a host fault while preparing a call: no call starts after it.
    halted: Option<String>,
    /// Whether starts are reported ([`BatchEvent::Started`]); a turn, which
    /// only collects outcomes, does without.
    report_starts: bool,
}

/// Each call that has not ended, by submission index: indices are handed out
/// in order and mostly end in order, so a window from the oldest call still
/// held (no hashing per call; what ended at the front is dropped).
#[derive(Default)]
struct Names {
    /// The index of the first slot.
    base: usize,
    slots: VecDeque<Option<ToolCall>>,
}

impl Names {
    fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
    }

    /// Holds `call` as the call at `index`, the next index handed out.
    fn push(&mut self, index: usize, call: ToolCall) {
        debug_assert_eq!(index, self.base + self.slots.len());
        self.slots.push_back(Some(call));
    }

    fn get(&self, index: usize) -> Option<&ToolCall> {
        self.slots.get(index.checked_sub(self.base)?)?.as_ref()
    }

    /// Forgets the call at `index` (it ended).
    fn remove(&mut self, index: usize) {
        if let Some(slot) = index
            .checked_sub(self.base)
            .and_then(|at| self.slots.get_mut(at))
        {
            *slot = None;
        }
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.base += 1;
        }
    }
}

impl Schedule {
    /// An empty schedule over `pipeline`; at most `max_parallel` parallel
    /// calls overlap (never more than `config` allows).
    pub(crate) fn new(
        pipeline: Pipeline,
        config: Arc<SchedulerConfig>,
        cancel: CancellationToken,
        max_parallel: usize,
    ) -> Self {
        let cause = config
            .cancel_siblings_on_failure()
            .then(|| Arc::new(OnceLock::new()));
        let max = config.max_parallel().min(max_parallel.max(1));
        Self {
            pipeline,
            config,
            turn: cancel.child_token(),
            cancel,
            cause,
            gated: false,
            checked: None,
            submitted: 0,
            names: Names::default(),
            first_with_id: HashMap::new(),
            queue: VecDeque::new(),
            pool: Pool {
                max,
                in_flight: 0,
                exclusive: false,
                resources: ResourceTable::default(),
                claims: Vec::new(),
            },
            running: FuturesUnordered::new(),
            admitting: None,
            gate: Arc::default(),
            ready: VecDeque::new(),
            halted: None,
            report_starts: true,
        }
    }

    /// Reports no [`BatchEvent::Started`], only the ends.
    pub(crate) fn without_starts(mut self) -> Self {
        self.report_starts = false;
        self
    }

    /// Room for `additional` more calls.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.names.reserve(additional);
        self.queue.reserve(additional);
        self.first_with_id.reserve(additional);
    }

    /// How many calls were pushed.
    pub(crate) fn len(&self) -> usize {
        self.submitted
    }

    /// A call that has not ended, without its arguments, by index.
    pub(crate) fn name(&self, index: usize) -> Option<&ToolCall> {
        self.names.get(index)
    }

    /// Queues `call` behind the calls pushed before it; its index.
    pub(crate) fn push(&mut self, call: ToolCall) -> usize {
        let index = self.submitted;
        self.submitted += 1;
        self.names.push(index, skeleton(&call));
        // Policy can only interleave if there is policy: checked as each call
        // arrives (a turn pushes all of its calls before the first starts).
        if !self.gated && self.checked.as_ref() != Some(&call.agent) {
            let hooks = self.pipeline.hooks();
            let agent = call.agent.as_ref();
            self.gated =
                hooks.pre_execute().has_listeners(agent) || hooks.guards().has_listeners(agent);
            self.checked = Some(call.agent.clone());
        }
        if let Some(why) = &self.halted {
            // Nothing starts after a host fault.
            let outcome = self.pipeline.refuse_unrun_contained(call, not_run(why));
            self.ready.push_back(BatchEvent::Ended(index, outcome));
            return index;
        }
        let entry = match self.first_with_id.entry(call.call_id.clone()) {
            std::collections::hash_map::Entry::Occupied(first) => Entry::Duplicate {
                first: *first.get(),
                call,
            },
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(index);
                Entry::Waiting(Some(call))
            }
        };
        self.queue.push_back(Pending {
            index,
            entry,
            plan: Plan::EXCLUSIVE,
        });
        index
    }

    /// Starts what the rules allow, then reports the next event:
    /// `Ready(None)` when every pushed call has ended.
    pub(crate) fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<BatchEvent>> {
        loop {
            self.start_next();
            if let Some(event) = self.ready.pop_front() {
                return Poll::Ready(Some(self.reported(event)));
            }
            if self.running.is_empty() {
                // An empty pool admits any call, so the queue is empty too.
                return Poll::Ready(None);
            }
            if let Poll::Ready(Some((index, outcome))) = self.running.poll_next_unpin(cx) {
                self.finished(index, &outcome);
                return Poll::Ready(Some(self.reported(BatchEvent::Ended(index, outcome))));
            }
            if self.admitting.is_some() && self.gate.poll_admitted(cx) {
                self.admitting = None;
            } else {
                return Poll::Pending;
            }
        }
    }

    /// `event`, about to be reported: an ended call is forgotten.
    fn reported(&mut self, event: BatchEvent) -> BatchEvent {
        if let BatchEvent::Ended(index, _) = &event {
            self.names.remove(*index);
        }
        event
    }

    /// Starts queued calls, in order, while the pool admits them and no
    /// call's admission is pending.
    fn start_next(&mut self) {
        while self.admitting.is_none() {
            let Some(next) = self.queue.front_mut() else {
                break;
            };
            if let Entry::Duplicate { .. } = next.entry {
                // Refused in its place in model order, without a slot.
                let Some(next) = self.queue.pop_front() else {
                    break;
                };
                if let Entry::Duplicate { first, call } = next.entry {
                    let outcome = self.pipeline.refuse_duplicate_id(call, first);
                    self.ready.push_back(BatchEvent::Ended(next.index, outcome));
                }
                continue;
            }
            if let Err(failure) = refresh(&self.pipeline, &self.config, next) {
                // A host fault while preparing the next call: it ends
                // `INTERNAL`, no call after it starts, and the running
                // calls finish as they would have.
                self.halt(failure);
                break;
            }
            if !self.pool.admits(&next.plan) {
                break;
            }
            let Some(next) = self.queue.pop_front() else {
                break;
            };
            let Entry::Call(Some(prepared)) = next.entry else {
                continue;
            };
            self.pool.take(next.index, next.plan);
            let gate = self.gated.then(|| {
                self.gate.reset();
                self.admitting = Some(next.index);
                Arc::clone(&self.gate)
            });
            if self.report_starts {
                self.ready.push_back(BatchEvent::Started(next.index));
            }
            self.running.push(start(
                self.pipeline.clone(),
                next.index,
                prepared,
                self.turn.child_token(),
                gate,
                self.cause.clone(),
            ));
        }
    }

    /// The call at `index` ended with `outcome`: its slot is free, and a
    /// failure may cancel its siblings.
    fn finished(&mut self, index: usize, outcome: &Outcome) {
        self.pool.release(index);
        if self.admitting == Some(index) {
            self.admitting = None;
        }
        if let Some(cause) = &self.cause
            && !self.turn.is_cancelled()
            && !self.cancel.is_cancelled()
            && let Some(failure) = outcome.failure_info()
            && failure.code() != ErrorCode::Cancelled
        {
            let _ = cause.set(CancelCause {
                call_id: outcome.call_id.clone(),
                tool: outcome.tool.clone(),
                code: failure.code(),
                message: failure.message().to_owned(),
            });
            tracing::debug!(call_id = %outcome.call_id, "a call failed; cancelling its siblings");
            self.turn.cancel();
        }
    }

    /// Ends the dispatching after the call at the front of the queue could
    /// not be prepared (`failure`, a host fault): that call ends with
    /// `failure`, and every call queued after it (or pushed later) ends
    /// `CANCELLED`, not run, saying why. Both are finalized and shown to the
    /// `tools/result` observers.
    fn halt(&mut self, failure: ToolError) {
        let Some(faulted) = self.queue.pop_front() else {
            return;
        };
        let Some(call) = self.names.get(faulted.index).cloned() else {
            return;
        };
        let why = format!(
            "the host failed while preparing call `{}` (`{}`) of this turn, and a turn starts \
             no more calls after a host fault ({})",
            call.call_id,
            call.name,
            failure.message()
        );
        let outcome = self.pipeline.refuse_unrun_contained(call, failure);
        self.ready
            .push_back(BatchEvent::Ended(faulted.index, outcome));
        for pending in std::mem::take(&mut self.queue) {
            let call = match pending.entry {
                Entry::Duplicate { call, .. } | Entry::Waiting(Some(call)) => call,
                Entry::Call(Some(prepared)) => prepared.into_call(),
                Entry::Waiting(None) | Entry::Call(None) => {
                    match self.names.get(pending.index).cloned() {
                        Some(call) => call,
                        None => continue,
                    }
                }
            };
            let failure = not_run_named(&call, &why);
            let outcome = self.pipeline.refuse_unrun_contained(call, failure);
            self.ready
                .push_back(BatchEvent::Ended(pending.index, outcome));
        }
        self.halted = Some(why);
    }
}

/// Why a call pushed after a host fault was not run.
fn not_run(why: &str) -> ToolError {
    ToolError::from_code(
        ErrorCode::Cancelled,
        format!(
            "this call was not run: {why}. Nothing was done; call it again if it is still needed"
        ),
    )
}

/// Why `call`, queued behind a host fault, was not run.
fn not_run_named(call: &ToolCall, why: &str) -> ToolError {
    ToolError::from_code(
        ErrorCode::Cancelled,
        format!(
            "`{}` was not run: {why}. Nothing was done; call it again if it is still needed",
            call.name
        ),
    )
}

/// Resolves and parses `call` once, and plans it from that parse; a host
/// fault while doing so is the call's failure.
fn prepare(
    pipeline: &Pipeline,
    config: &SchedulerConfig,
    call: ToolCall,
) -> Result<(Prepared, Plan), ToolError> {
    let prepared = pipeline.try_prepare(call)?;
    let plan = match &prepared {
        Prepared::Parsed(parsed) => plan_for(
            &parsed.resolved.tool,
            parsed.arguments.value(),
            Some(config),
        ),
        _ => Plan::EXCLUSIVE,
    };
    Ok((prepared, plan))
}

/// Prepares the next call when it first reaches the front of the queue, and
/// again when its name no longer resolves to the tool it was prepared for
/// (an earlier call, or an observer, re-registered or removed it): a call is
/// classified against the registry as it is when the call is next to start.
/// A host fault while preparing it is returned (the call is gone then: it
/// moved into the stage that failed).
fn refresh(
    pipeline: &Pipeline,
    config: &SchedulerConfig,
    pending: &mut Pending,
) -> Result<(), ToolError> {
    if let Entry::Waiting(call) = &mut pending.entry {
        let Some(call) = call.take() else {
            return Ok(());
        };
        let (prepared, plan) = prepare(pipeline, config, call)?;
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
    let current = pipeline.lookup(prepared.call()).ok();
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
    let (prepared, plan) = prepare(pipeline, config, prepared.into_call())?;
    *slot = Some(prepared);
    pending.plan = plan;
    Ok(())
}

/// One call through the pipeline, as the current call of its turn; `gate`
/// hears when its admission is over.
fn start(
    pipeline: Pipeline,
    index: usize,
    prepared: Prepared,
    cancel: CancellationToken,
    gate: Option<Arc<Gate>>,
    cause: Option<Arc<OnceLock<CancelCause>>>,
) -> BoxFuture<'static, (usize, Arc<Outcome>)> {
    Box::pin(async move {
        let call_id = prepared.call().call_id.clone();
        let tool = prepared.call().name.clone();
        let options = CallOptions {
            admitted: move || {
                if let Some(gate) = gate {
                    gate.admit();
                }
            },
            cause: cause.as_deref(),
        };
        let run = AssertUnwindSafe(pipeline.run_prepared(prepared, cancel, options)).catch_unwind();
        let outcome = run.await.unwrap_or_else(|payload| {
            let message = fault_description(&*payload, "the pipeline");
            tracing::error!(%call_id, %message, "the pipeline panicked");
            Arc::new(Outcome::failure(
                call_id,
                tool,
                ToolError::from_code(
                    ErrorCode::Internal,
                    format!("the pipeline failed while running this call ({message}); this is a fault in the host, not in the call"),
                ),
            ))
        });
        (index, outcome)
    })
}
