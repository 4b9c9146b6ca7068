//! The plugin, its configuration, the `run_code` tool and the dispatch bridge.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use serde_json::{Value, json};
use tack_core::context::ToolRunContext;
use tack_core::hooks::{CodeDispatchEvent, CodeDispatchLogEntry, CodeDispatchStart, ToolHooks};
use tack_core::plugin::{Plugin, PluginContext, PluginError};
use tack_core::tool::{
    CallId, ContentBlock, DeferredContext, ErrorCode, Outcome, OutputSpec, ToolCall,
    ToolDefinition, ToolError, ToolErrorCode, joined_text,
};
use tokio::sync::{mpsc, oneshot};

use crate::engine::{self, Event, FailKind, Limits, Settle};
use crate::location::{Position, Program};
use crate::render::render_result;
use crate::sdk::USAGE;
use crate::strip::{StripError, prepare};

/// The reserved name of the code-mode transport (defined once, in tack-core).
pub use tack_core::plugin::RUN_CODE;
/// The plugin's name.
pub const PLUGIN_NAME: &str = "code-mode";
/// Default wall-time limit of a run.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Default memory limit of a run (64 MiB).
pub const DEFAULT_MEMORY_BYTES: usize = 64 * 1024 * 1024;
/// Default limit on the combined bytes a program prints (1 MiB).
pub const DEFAULT_OUTPUT_BYTES: usize = 1024 * 1024;
/// Default number of parallel-classified sub-calls that may overlap.
pub const DEFAULT_MAX_PARALLEL_SUB_CALLS: usize = 10;
/// Default number of sub-calls a run may have outstanding (started by the
/// program and not settled yet) at once.
pub const DEFAULT_MAX_OUTSTANDING_SUB_CALLS: usize = 256;
/// Default limit on the argument bytes of a run's outstanding sub-calls
/// (16 MiB).
pub const DEFAULT_MAX_OUTSTANDING_BYTES: usize = 16 * 1024 * 1024;
/// Default of how long a program that starts a sub-call over the outstanding
/// limits waits for earlier ones to settle before the call fails.
pub const DEFAULT_OUTSTANDING_WAIT: Duration = Duration::from_secs(30);

/// Decides whether a sub-call may overlap with other parallel sub-calls
/// (`true`) or must run alone (`false`). A host builds it from its registry's
/// `execution_mode(call)`.
pub type SubCallClassifier = Arc<dyn Fn(&ToolCall) -> bool + Send + Sync>;

/// What [`CodeModePlugin::new`] builds the plugin from. Build it with its
/// methods, or deserialize its limits from settings (`timeout_ms`,
/// `memory_bytes`, `output_bytes`, `max_parallel_sub_calls`,
/// `max_outstanding_sub_calls`, `max_outstanding_bytes`,
/// `outstanding_wait_ms`, every key optional); the sub-call classifier is
/// set in code.
///
/// ```
/// use std::time::Duration;
/// use tack_code_mode::{CodeModeConfig, CodeModePlugin};
///
/// let config = CodeModeConfig::default()
///     .timeout(Duration::from_secs(30))
///     .max_parallel_sub_calls(4);
/// let from_settings: CodeModeConfig = tack_core::serde_json::from_str(
///     r#"{"timeout_ms": 30000, "max_parallel_sub_calls": 4}"#,
/// ).unwrap();
/// assert_eq!(format!("{config:?}"), format!("{from_settings:?}"));
/// let _plugin = CodeModePlugin::new(config);
/// ```
#[derive(Clone, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CodeModeConfig {
    #[serde(rename = "timeout_ms", deserialize_with = "millis")]
    timeout: Duration,
    memory_bytes: usize,
    output_bytes: usize,
    max_parallel_sub_calls: usize,
    max_outstanding_sub_calls: usize,
    max_outstanding_bytes: usize,
    #[serde(rename = "outstanding_wait_ms", deserialize_with = "millis")]
    outstanding_wait: Duration,
    #[serde(skip)]
    classifier: Option<SubCallClassifier>,
}

fn millis<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    Ok(Duration::from_millis(serde::Deserialize::deserialize(
        deserializer,
    )?))
}

impl CodeModeConfig {
    /// Wall-time limit of a run (default [`DEFAULT_TIMEOUT`]; a `timeout_ms`
    /// argument of a call may only lower it). Settings key: `timeout_ms`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// QuickJS heap limit, in bytes (default [`DEFAULT_MEMORY_BYTES`]).
    /// Settings key: `memory_bytes`.
    pub fn memory_bytes(mut self, bytes: usize) -> Self {
        self.memory_bytes = bytes;
        self
    }

    /// Limit on the combined printed bytes (default
    /// [`DEFAULT_OUTPUT_BYTES`]). Settings key: `output_bytes`.
    pub fn output_bytes(mut self, bytes: usize) -> Self {
        self.output_bytes = bytes;
        self
    }

    /// How many parallel-classified sub-calls may overlap (default
    /// [`DEFAULT_MAX_PARALLEL_SUB_CALLS`]; 1 = serial; 0 is refused at
    /// install). Settings key: `max_parallel_sub_calls`.
    pub fn max_parallel_sub_calls(mut self, calls: usize) -> Self {
        self.max_parallel_sub_calls = calls;
        self
    }

    /// How many sub-calls a run may have outstanding — started by the
    /// program (`tools.x(...)` without `await` yet) and not settled — at once
    /// (default [`DEFAULT_MAX_OUTSTANDING_SUB_CALLS`]; 0 is refused at
    /// install). A program that starts one more waits, up to
    /// [`outstanding_wait`](Self::outstanding_wait), for an earlier one to
    /// settle. Settings key: `max_outstanding_sub_calls`.
    pub fn max_outstanding_sub_calls(mut self, calls: usize) -> Self {
        self.max_outstanding_sub_calls = calls;
        self
    }

    /// Limit on the argument bytes the outstanding sub-calls of a run hold
    /// together (default [`DEFAULT_MAX_OUTSTANDING_BYTES`]); a single call
    /// over it still starts once nothing else is outstanding. Settings key:
    /// `max_outstanding_bytes`.
    pub fn max_outstanding_bytes(mut self, bytes: usize) -> Self {
        self.max_outstanding_bytes = bytes;
        self
    }

    /// How long a program that starts a sub-call over the outstanding limits
    /// waits for earlier ones to settle before that call fails with
    /// `CODE_RUN_FAILED`, nothing called (default
    /// [`DEFAULT_OUTSTANDING_WAIT`]; never past the run's own deadline).
    /// Settings key: `outstanding_wait_ms`.
    pub fn outstanding_wait(mut self, wait: Duration) -> Self {
        self.outstanding_wait = wait;
        self
    }

    /// The sub-call classifier (default none: every sub-call is exclusive,
    /// run one at a time). A host builds it from its registry's
    /// `execution_mode(call)`. Not a settings key.
    pub fn classifier(mut self, classifier: SubCallClassifier) -> Self {
        self.classifier = Some(classifier);
        self
    }
}

impl Default for CodeModeConfig {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            memory_bytes: DEFAULT_MEMORY_BYTES,
            output_bytes: DEFAULT_OUTPUT_BYTES,
            max_parallel_sub_calls: DEFAULT_MAX_PARALLEL_SUB_CALLS,
            max_outstanding_sub_calls: DEFAULT_MAX_OUTSTANDING_SUB_CALLS,
            max_outstanding_bytes: DEFAULT_MAX_OUTSTANDING_BYTES,
            outstanding_wait: DEFAULT_OUTSTANDING_WAIT,
            classifier: None,
        }
    }
}

impl fmt::Debug for CodeModeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodeModeConfig")
            .field("timeout", &self.timeout)
            .field("memory_bytes", &self.memory_bytes)
            .field("output_bytes", &self.output_bytes)
            .field("max_parallel_sub_calls", &self.max_parallel_sub_calls)
            .field("max_outstanding_sub_calls", &self.max_outstanding_sub_calls)
            .field("max_outstanding_bytes", &self.max_outstanding_bytes)
            .field("outstanding_wait", &self.outstanding_wait)
            .field("classifier", &self.classifier.is_some())
            .finish()
    }
}

/// The code-mode plugin: registers `run_code` as the code transport.
#[derive(Clone, Debug, Default)]
pub struct CodeModePlugin {
    config: CodeModeConfig,
}

impl CodeModePlugin {
    /// A plugin with `config`.
    pub fn new(config: CodeModeConfig) -> Self {
        Self { config }
    }
}

impl Plugin for CodeModePlugin {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        if self.config.max_parallel_sub_calls == 0 {
            return Err(PluginError::install(
                PLUGIN_NAME,
                "max_parallel_sub_calls must be at least 1 (1 runs the program's tool calls one at a time)",
            ));
        }
        if self.config.max_outstanding_sub_calls == 0 {
            return Err(PluginError::install(
                PLUGIN_NAME,
                "max_outstanding_sub_calls must be at least 1 (1 lets a program have one tool call outstanding at a time)",
            ));
        }
        let definition = run_code_definition(self.config.clone(), cx.hooks().tool_hooks().clone())
            .map_err(|e| PluginError::Definition {
                plugin: PLUGIN_NAME.to_owned(),
                error: e,
            })?;
        cx.register_code_transport(definition)
    }
}

/// The output schema of `run_code`: the canonical value `{logs, result?}`.
fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "logs": {"type": "array", "items": {"type": "string"}},
            "result": {}
        },
        "required": ["logs"],
        "additionalProperties": false
    })
}

/// The `run_code` definition (what [`CodeModePlugin`] registers). `hooks` are
/// the host's tool hooks (for `tools/code-dispatch-log`).
///
/// # Errors
///
/// A [`tack_core::tool::DefinitionError`] if the definition is refused
/// (never with the built-in schema).
pub fn run_code_definition(
    config: CodeModeConfig,
    hooks: ToolHooks,
) -> Result<ToolDefinition, tack_core::tool::DefinitionError> {
    let config = Arc::new(config);
    ToolDefinition::builder(RUN_CODE)
        .description(USAGE)
        .input_schema(json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "The program (JavaScript or TypeScript); it may use `await` and `return`."},
                "timeout_ms": {"type": "integer", "minimum": 1, "description": "A lower wall-time limit, in milliseconds."}
            },
            "required": ["code"],
            "additionalProperties": false
        }))
        .output(
            OutputSpec::new(output_schema())
                .render(|_args, value| render_result(value)),
        )
        .handler(move |args: Arc<Value>, cx: ToolRunContext| {
            let config = Arc::clone(&config);
            let hooks = hooks.clone();
            async move { run_code(&config, &hooks, &args, cx).await }
        })
        .build()
}

fn fail(kind: FailKind, message: String, logs: &[String]) -> ToolError {
    let mut full = format!("run_code failed ({}): {message}", kind.as_str());
    if !logs.is_empty() {
        full.push_str("\n--- logs ---\n");
        full.push_str(&logs.join("\n"));
    }
    ToolError::with_code(ToolErrorCode::CodeRunFailed, full)
        .with_kind(kind.as_str())
        .with_data(json!({"logs": logs}))
}

struct Running {
    futures: FuturesUnordered<BoxFuture<'static, (u64, ToolCall, Arc<Outcome>)>>,
    exclusive: bool,
}

async fn run_code(
    config: &CodeModeConfig,
    hooks: &ToolHooks,
    args: &Value,
    cx: ToolRunContext,
) -> Result<Value, ToolError> {
    let code = args.get("code").and_then(Value::as_str).unwrap_or_default();
    let mut timeout = config.timeout;
    if let Some(ms) = args.get("timeout_ms").and_then(Value::as_u64) {
        timeout = timeout.min(Duration::from_millis(ms));
    }
    let program = match prepare(code) {
        Ok(program) => program,
        Err(StripError::Syntax { message, at }) => {
            return Err(located(fail(FailKind::Syntax, message, &[]), at));
        }
        Err(StripError::NonErasable { message, at }) => {
            return Err(located(fail(FailKind::Typescript, message, &[]), at));
        }
    };
    let dispatcher = cx.dispatcher().map_err(|e| {
        ToolError::with_code(
            ToolErrorCode::CodeRunFailed,
            format!("run_code needs the nested dispatcher: {e}"),
        )
        .with_kind("setup")
    })?;
    let limits = Limits {
        deadline: Instant::now() + timeout,
        memory_bytes: config.memory_bytes,
        output_bytes: config.output_bytes,
        max_outstanding: config.max_outstanding_sub_calls.max(1),
        max_outstanding_bytes: config.max_outstanding_bytes,
        outstanding_wait: config.outstanding_wait,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (event_tx, mut events) = mpsc::unbounded_channel();
    let (settle_tx, settle_rx) = std_mpsc::channel::<Settle>();
    {
        let stop = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("tack-run-code".to_owned())
            .spawn(move || engine::run(program, limits, stop, event_tx, settle_rx))
            .map_err(|e| {
                ToolError::with_code(
                    ToolErrorCode::CodeRunFailed,
                    format!("cannot start the engine: {e}"),
                )
                .with_kind("setup")
            })?;
    }

    let outer = cx.call_id().clone();
    let sub_cancel = cx.cancellation().child_token();
    let max_parallel = config.max_parallel_sub_calls.max(1);
    let mut queue: VecDeque<(u64, ToolCall)> = VecDeque::new();
    let mut running = Running {
        futures: FuturesUnordered::new(),
        exclusive: false,
    };
    let mut bridge = Bridge {
        hooks,
        cx: &cx,
        outer: &outer,
        deferred: BTreeMap::new(),
    };
    let mut end = None;
    let mut cancelled = false;
    // The started call whose admission (pre-execute, approval, guards) is not
    // over yet: no other call starts before it is, so policy sees the
    // sub-calls one at a time, in submission order.
    let mut admitting: Option<oneshot::Receiver<()>> = None;

    loop {
        // Start queued calls, in submission order.
        // Once cancelled, queued calls are abandoned without starting (checked
        // here too: a running call may settle in the same wake-up as the
        // cancellation).
        if !cancelled && cx.is_cancelled() {
            cancelled = true;
            stop.store(true, Ordering::SeqCst);
            sub_cancel.cancel();
        }
        if cancelled {
            queue.clear();
        }
        while admitting.is_none()
            && let Some((_, call)) = queue.front()
        {
            let parallel = config.classifier.as_ref().is_some_and(|c| c(call));
            let may_start = running.futures.is_empty()
                || (parallel && !running.exclusive && running.futures.len() < max_parallel);
            if !may_start {
                break;
            }
            let Some((id, call)) = queue.pop_front() else {
                break;
            };
            running.exclusive = !parallel;
            bridge.started(&call);
            let (admitted, admission) = oneshot::channel();
            admitting = Some(admission);
            let fut = dispatcher.dispatch_admitted(
                call.clone(),
                sub_cancel.clone(),
                Box::new(move || {
                    let _ = admitted.send(());
                }),
            );
            running
                .futures
                .push(Box::pin(async move { (id, call, fut.await) }));
        }
        tokio::select! {
            event = events.recv() => match event {
                Some(Event::Submit { id, name, args }) => {
                    let call = cx.nested_call(format!("{}:code:{id}", outer.as_str()), name, args);
                    queue.push_back((id, call));
                }
                Some(Event::Finished(run_end)) => { end = Some(run_end); break; }
                None => break,
            },
            Some((id, call, outcome)) = running.futures.next(), if !running.futures.is_empty() => {
                // The program hears first; the record is logged before the
                // loop starts another call, so the log's order stays true.
                let _ = settle_tx.send(settle_of(id, &call, &outcome));
                bridge.settled(id, &call, &outcome).await;
            }
            // Sent, or dropped with a dispatch that ended: admission is over.
            _ = async {
                if let Some(admission) = admitting.as_mut() {
                    let _ = admission.await;
                }
            }, if admitting.is_some() => admitting = None,
            () = cx.cancellation().cancelled(), if !cancelled => {
                cancelled = true;
                stop.store(true, Ordering::SeqCst);
                sub_cancel.cancel();
            }
        }
    }

    // Settled: cancel and drain outstanding sub-calls.
    sub_cancel.cancel();
    stop.store(true, Ordering::SeqCst);
    drop(settle_tx);
    while let Some((id, call, outcome)) = running.futures.next().await {
        bridge.settled(id, &call, &outcome).await;
    }
    // Sub-call contexts ride on the outer result in submission order, whatever
    // the run's own fate.
    bridge.defer_all();
    if end.is_none() {
        // Wait for the engine thread to report (it stops at its next interrupt check).
        while let Some(event) = events.recv().await {
            if let Event::Finished(run_end) = event {
                end = Some(run_end);
                break;
            }
        }
    }
    let Some(end) = end else {
        return Err(fail(
            FailKind::Exception,
            "the engine stopped unexpectedly".to_owned(),
            &[],
        ));
    };
    if cancelled || cx.is_cancelled() {
        return Err(
            ToolError::with_code(ToolErrorCode::Cancelled, "run_code was cancelled")
                .with_kind(FailKind::Cancelled.as_str())
                .with_data(json!({"logs": end.logs})),
        );
    }
    match end.result {
        Ok(result) => {
            let mut value = json!({"logs": end.logs});
            if let Some(json) = result {
                let parsed: Value = serde_json::from_str(&json).unwrap_or(Value::String(json));
                value["result"] = parsed;
            }
            Ok(value)
        }
        Err((kind, message)) => Err(engine_failure(code, kind, &message, &end.logs)),
    }
}

/// An engine failure, with positions in the program's own lines and
/// columns; a syntax error the engine found is quoted like one the parser
/// found.
fn engine_failure(code: &str, kind: FailKind, message: &str, logs: &[String]) -> ToolError {
    let program = Program::new(code);
    if kind == FailKind::Syntax
        && let Some(at) = program.first_position(message)
    {
        // `SyntaxError: <what>\n    at program:<line>:<column>`
        let what = message.lines().next().unwrap_or(message);
        let what = what.strip_prefix("SyntaxError: ").unwrap_or(what);
        let located_message = program.describe("SyntaxError", what, at);
        return located(fail(kind, located_message, logs), Some(at));
    }
    fail(kind, program.rewrite_positions(message), logs)
}

/// `error` with the position of a syntax error in its data (`line`,
/// `column`: 1-based, in the program).
fn located(error: ToolError, at: Option<Position>) -> ToolError {
    let Some(at) = at else { return error };
    let mut data = error.data().cloned().unwrap_or_else(|| json!({}));
    data["line"] = json!(at.line);
    data["column"] = json!(at.column);
    error.with_data(data)
}

fn settle_of(id: u64, call: &ToolCall, outcome: &Outcome) -> Settle {
    if outcome.is_success() && outcome.content_replaced {
        // A listener replaced what the model would read (a redaction): the
        // program, which the model wrote, gets that and not the value.
        return Settle {
            id,
            ok: true,
            payload: Value::String(joined_text(&outcome.content)).to_string(),
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
        |f| (f.code.as_str(), f.message.clone()),
    );
    Settle {
        id,
        ok: false,
        payload: json!({"code": code, "message": message, "tool": call.name}).to_string(),
    }
}

/// The run's side of the sub-calls: the `tools/code-dispatch` events and
/// the contexts to defer onto the outer result.
struct Bridge<'a> {
    hooks: &'a ToolHooks,
    cx: &'a ToolRunContext,
    outer: &'a CallId,
    /// Per submission number: the contexts a settled sub-call leaves.
    deferred: BTreeMap<u64, Vec<DeferredContext>>,
}

impl Bridge<'_> {
    /// A sub-call is dispatched.
    fn started(&self, call: &ToolCall) {
        let start = CodeDispatchStart::new(
            self.outer.clone(),
            call.call_id.clone(),
            call.name.clone(),
            call.arguments.clone(),
        );
        self.hooks.code_dispatch().notify(
            self.cx.agent(),
            &Arc::new(CodeDispatchEvent::Started(start)),
        );
    }

    /// A sub-call settled: keep what it defers, log it.
    async fn settled(&mut self, id: u64, call: &ToolCall, outcome: &Outcome) {
        let mut contexts = Vec::new();
        // An image a successful sub-call returns reaches the model as context
        // after the outer result (its final content: a post-execute block or
        // replacement that removed the image leaves nothing to defer).
        if outcome.is_success()
            && outcome
                .content
                .iter()
                .any(|block| matches!(block, ContentBlock::Image { .. }))
        {
            contexts
                .push(DeferredContext::blocks(outcome.content.to_vec()).with_source(PLUGIN_NAME));
        }
        contexts.extend(outcome.deferred_context.iter().cloned());
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
        let entry = CodeDispatchLogEntry::new(
            self.outer.clone(),
            outcome.call_id.clone(),
            call.name.clone(),
            call.arguments.clone(),
            outcome.error_code(),
            outcome.content.to_vec(),
        );
        // A failing rewrite is contained: the original record is logged.
        let entry = match self
            .hooks
            .code_dispatch_log()
            .dispatch(self.cx.agent(), entry.clone())
            .await
        {
            Ok(rewritten) => rewritten,
            Err(_) => entry,
        };
        self.hooks.code_dispatch().notify(
            self.cx.agent(),
            &Arc::new(CodeDispatchEvent::Settled(entry)),
        );
    }

    /// Defers the sub-calls' contexts onto the outer result, in submission
    /// order.
    fn defer_all(&mut self) {
        for context in std::mem::take(&mut self.deferred).into_values().flatten() {
            self.cx.defer_context(context);
        }
    }
}
