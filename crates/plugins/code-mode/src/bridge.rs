//! The bridge between the program and the host: the program's tool calls go
//! into one [`DispatchBatch`] (which runs them under the host's turn
//! scheduling rules), and each call's outcome goes back to the program, to
//! `tools/code-dispatch` and onto the outer result.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc as std_mpsc;

use serde_json::{Value, json};
use tack_core::capability::{BatchEvent, DispatchBatch};
use tack_core::context::ToolRunContext;
use tack_core::hooks::{CodeDispatchEvent, ToolHooks};
use tack_core::tool::{ContentBlock, DeferredContext, ErrorCode, Outcome, ToolCall};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::engine::{Event, RunEnd, Settle};

/// How the program's side of a run ended.
pub(crate) struct Ending {
    /// What the engine reported (`None`: it stopped without reporting).
    pub(crate) end: Option<RunEnd>,
    /// Whether the outer call was cancelled while it ran.
    pub(crate) cancelled: bool,
}

/// One sub-call the program made, by submission index.
struct SubCall {
    /// The program's number for it (`<outer>:code:<id>`).
    id: u64,
    call: ToolCall,
    /// Whether its start was announced on `tools/code-dispatch`.
    announced: bool,
}

/// The run's side of the sub-calls.
pub(crate) struct SubCalls<'a> {
    cx: &'a ToolRunContext,
    hooks: &'a ToolHooks,
    batch: Box<dyn DispatchBatch + 'a>,
    /// To the program: its settled calls.
    settles: std_mpsc::Sender<Settle>,
    /// The calls submitted and not ended, by submission index.
    calls: HashMap<usize, SubCall>,
    /// Per submission number: the contexts a settled sub-call leaves.
    deferred: BTreeMap<u64, Vec<DeferredContext>>,
    /// Set once the run is ending: calls started from then on (only to end
    /// `CANCELLED`) are not announced.
    quiet: bool,
    /// The source of the contexts deferred for images (the plugin's name).
    source: &'static str,
}

impl<'a> SubCalls<'a> {
    pub(crate) fn new(
        cx: &'a ToolRunContext,
        hooks: &'a ToolHooks,
        batch: Box<dyn DispatchBatch + 'a>,
        settles: std_mpsc::Sender<Settle>,
        source: &'static str,
    ) -> Self {
        Self {
            cx,
            hooks,
            batch,
            settles,
            calls: HashMap::new(),
            deferred: BTreeMap::new(),
            quiet: false,
            source,
        }
    }

    /// Runs the bridge until the program ends, then cancels (`sub_cancel`)
    /// and drains the calls it left, and defers the sub-calls' contexts onto
    /// the outer result. `stop` stops the program.
    pub(crate) async fn run(
        mut self,
        events: &mut mpsc::UnboundedReceiver<Event>,
        stop: &AtomicBool,
        sub_cancel: &CancellationToken,
    ) -> Ending {
        let mut ending = Ending {
            end: None,
            cancelled: false,
        };
        loop {
            // In this order: a cancellation first; then the batch, so that a
            // call the program submitted starts (and is announced) as soon
            // as the rules let it, before the program's end is read.
            tokio::select! {
                biased;
                () = self.cx.cancellation().cancelled(), if !ending.cancelled => {
                    ending.cancelled = true;
                    stop.store(true, Ordering::SeqCst);
                }
                Some(event) = self.batch.next_event() => self.on_event(event).await,
                event = events.recv() => match event {
                    Some(Event::Submit { id, name, args }) => self.submit(id, name, args),
                    Some(Event::Finished(end)) => { ending.end = Some(end); break; }
                    None => break,
                },
            }
        }
        // Over: the calls still outstanding are cancelled and drained.
        self.quiet = true;
        sub_cancel.cancel();
        stop.store(true, Ordering::SeqCst);
        while let Some(event) = self.batch.next_event().await {
            self.on_event(event).await;
        }
        // Sub-call contexts ride on the outer result in submission order,
        // whatever the run's own fate.
        for context in std::mem::take(&mut self.deferred).into_values().flatten() {
            self.cx.defer_context(context);
        }
        if ending.end.is_none() {
            // Wait for the engine thread to report (it stops at its next
            // interrupt check).
            while let Some(event) = events.recv().await {
                if let Event::Finished(end) = event {
                    ending.end = Some(end);
                    break;
                }
            }
        }
        ending
    }

    /// The program called `name` with `args` (JSON text).
    fn submit(&mut self, id: u64, name: String, args: String) {
        let call_id = format!("{}:code:{id}", self.cx.call_id().as_str());
        let call = self.cx.nested_call(call_id, name, args);
        let index = self.batch.submit(call.clone());
        let announced = false;
        self.calls.insert(
            index,
            SubCall {
                id,
                call,
                announced,
            },
        );
    }

    /// Whether a start is announced now: not once the run is ending or
    /// cancelled (those calls only end `CANCELLED`, unrun).
    fn announcing(&self) -> bool {
        !self.quiet && !self.cx.is_cancelled()
    }

    async fn on_event(&mut self, event: BatchEvent) {
        match event {
            BatchEvent::Started(index) => {
                let announce = self.announcing();
                if let Some(sub) = self.calls.get_mut(&index)
                    && announce
                {
                    sub.announced = true;
                    started(self.hooks, self.cx, &sub.call).await;
                }
            }
            BatchEvent::Ended(index, outcome) => {
                let Some(mut sub) = self.calls.remove(&index) else {
                    return;
                };
                // Refused without a start (a host fault): still one start
                // and one settle.
                if !sub.announced && self.announcing() {
                    sub.announced = true;
                    started(self.hooks, self.cx, &sub.call).await;
                }
                // The program hears first; the record is logged before the
                // batch is polled again (nothing else starts meanwhile), so
                // the log's order stays true.
                let _ = self.settles.send(settle_of(sub.id, &sub.call, &outcome));
                if sub.announced {
                    self.settled(sub.id, &sub.call, &outcome).await;
                }
            }
            _ => {}
        }
    }

    /// A sub-call settled: keep what it defers, log it.
    async fn settled(&mut self, id: u64, call: &ToolCall, outcome: &Outcome) {
        let contexts = contexts_of(outcome, self.source);
        if !contexts.is_empty() {
            self.deferred.insert(id, contexts);
        }
        // A sub-call that concluded the turn (its tool asked to, and the call
        // succeeded: the pipeline sets the flag only then) concludes it for
        // `run_code` too; the pipeline honours that only if `run_code` itself
        // succeeds.
        if outcome.concluded_turn {
            self.cx.conclude_turn();
        }
        let record = CodeDispatchEvent::settled(
            self.cx.call_id().clone(),
            outcome.call_id.clone(),
            call.name.clone(),
            call.arguments.clone(),
            outcome.error_code(),
            outcome.content.to_vec(),
        );
        log(self.hooks, self.cx, record).await;
    }
}

/// Logs one record: `tools/code-dispatch-log` rewrites it, then
/// `tools/code-dispatch` observers see it. A failing rewrite is contained, and
/// so is one that describes another record (another phase, call or tool): the
/// original record is logged, so each sub-call still has exactly one start
/// and one settle.
async fn log(hooks: &ToolHooks, cx: &ToolRunContext, record: CodeDispatchEvent) {
    let log = hooks.code_dispatch_log();
    let record = if log.has_listeners(cx.agent()) {
        match log.dispatch(cx.agent(), record.clone()).await {
            Ok(rewritten) if same_record(&record, &rewritten) => rewritten,
            Ok(other) => {
                tracing::warn!(
                    call_id = %record.call_id(),
                    by = ?other.provenance(),
                    "a tools/code-dispatch-log listener returned another record; the original is logged"
                );
                record
            }
            Err(_) => record,
        }
    } else {
        record
    };
    hooks.code_dispatch().notify(cx.agent(), &Arc::new(record));
}

/// Whether `rewritten` is a rewrite of `original` (its content or arguments),
/// not another record.
fn same_record(original: &CodeDispatchEvent, rewritten: &CodeDispatchEvent) -> bool {
    original.is_settled() == rewritten.is_settled()
        && original.call_id() == rewritten.call_id()
        && original.parent_call_id() == rewritten.parent_call_id()
        && original.tool() == rewritten.tool()
        && original.error() == rewritten.error()
}

/// Announces that a sub-call started.
async fn started(hooks: &ToolHooks, cx: &ToolRunContext, call: &ToolCall) {
    let start = CodeDispatchEvent::started(
        cx.call_id().clone(),
        call.call_id.clone(),
        call.name.clone(),
        call.arguments.clone(),
    );
    log(hooks, cx, start).await;
}

/// What a settled sub-call leaves for after the outer result: an image a
/// successful sub-call returns reaches the model as context from `source`
/// (its final content: a post-execute block or replacement that removed the
/// image leaves nothing to defer), then every context the sub-call deferred.
fn contexts_of(outcome: &Outcome, source: &str) -> Vec<DeferredContext> {
    let mut contexts = Vec::new();
    if outcome.is_success()
        && outcome
            .content
            .iter()
            .any(|block| matches!(block, ContentBlock::Image { .. }))
    {
        contexts.push(DeferredContext::blocks(outcome.content.to_vec()).with_source(source));
    }
    contexts.extend(outcome.deferred_context.iter().cloned());
    contexts
}

/// What the program gets for a settled sub-call.
fn settle_of(id: u64, call: &ToolCall, outcome: &Outcome) -> Settle {
    if outcome.is_success() && outcome.content_replaced {
        // A listener replaced what the model would read (a redaction): the
        // program, which the model wrote, gets that and not the value.
        return Settle {
            id,
            ok: true,
            payload: Value::String(outcome.content.joined_text()).to_string(),
        };
    }
    if let Some(value) = outcome.value() {
        return Settle {
            id,
            ok: true,
            payload: serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned()),
        };
    }
    let (code, message) = outcome.failure_info().map_or_else(
        || (ErrorCode::Internal.as_str(), "the call failed".to_owned()),
        |f| (f.code().as_str(), f.message().to_owned()),
    );
    Settle {
        id,
        ok: false,
        payload: json!({"code": code, "message": message, "tool": call.name}).to_string(),
    }
}
