//! The plugin, its configuration and the `run_code` tool.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tack_core::context::ToolRunContext;
use tack_core::hooks::ToolHooks;
use tack_core::plugin::{Plugin, PluginContext, PluginError};
use tack_core::tool::{OutputSpec, ToolDefinition, ToolError};
use tokio::sync::mpsc;

use crate::bridge::{Ending, SubCalls};
use crate::engine::{self, Event, FailKind, Limits, Settle};
use crate::location::{Position, Program};
use crate::render::render_result;
use crate::sdk::USAGE;
use crate::strip::{StripError, prepare};

/// The reserved name of the code-mode transport (defined once, in tack-core).
/// The name of the tool this plugin registers (`run_code`).
pub const RUN_CODE: &str = tack_core::tool::ToolName::RUN_CODE;
/// The plugin's name.
pub const PLUGIN_NAME: &str = "code-mode";
/// Default wall-time limit of a run.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Default memory limit of a run (64 MiB).
pub const DEFAULT_MEMORY_BYTES: usize = 64 * 1024 * 1024;
/// Default limit on the combined bytes a program prints (1 MiB).
pub const DEFAULT_OUTPUT_BYTES: usize = 1024 * 1024;
/// Default number of parallel sub-calls that may overlap (within the host's
/// own bound).
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

/// What [`CodeMode::new`] builds the plugin from. Build it with its
/// methods, or deserialize its limits from settings (`timeout_ms`,
/// `memory_bytes`, `output_bytes`, `max_parallel_sub_calls`,
/// `max_outstanding_sub_calls`, `max_outstanding_bytes`,
/// `outstanding_wait_ms`, every key optional).
///
/// ```
/// use std::time::Duration;
/// use tack_code_mode::{CodeModeConfig, CodeMode};
///
/// let config = CodeModeConfig::default()
///     .timeout(Duration::from_secs(30))
///     .max_parallel_sub_calls(4);
/// let from_settings: CodeModeConfig = tack_core::serde_json::from_str(
///     r#"{"timeout_ms": 30000, "max_parallel_sub_calls": 4}"#,
/// ).unwrap();
/// assert_eq!(format!("{config:?}"), format!("{from_settings:?}"));
/// let _plugin = CodeMode::new(config);
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

    /// How many parallel sub-calls may overlap (default
    /// [`DEFAULT_MAX_PARALLEL_SUB_CALLS`]; 1 = serial; 0 is refused at
    /// install). Which sub-calls are parallel is the host's turn
    /// scheduling's decision (the tool's `concurrency_safe` classifier), and
    /// so is the bound this can only lower. Settings key:
    /// `max_parallel_sub_calls`.
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
            .finish()
    }
}

/// The code-mode plugin: registers `run_code` as the code transport.
#[derive(Clone, Debug, Default)]
pub struct CodeMode {
    config: CodeModeConfig,
}

impl CodeMode {
    /// A plugin with `config`.
    pub fn new(config: CodeModeConfig) -> Self {
        Self { config }
    }
}

impl Plugin for CodeMode {
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
        let definition = run_code_definition(self.config.clone(), cx.hooks().clone())?;
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

/// The `run_code` definition (what [`CodeMode`] registers). `hooks` are
/// the host's tool hooks (for `tools/code-dispatch-log`).
///
/// # Errors
///
/// The definition's [`PluginError`] if it is refused
/// (never with the built-in schema).
pub fn run_code_definition(
    config: CodeModeConfig,
    hooks: ToolHooks,
) -> Result<ToolDefinition, tack_core::plugin::PluginError> {
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
    ToolError::code_run_failed(full)
        .with_kind(kind.as_str())
        .with_data(json!({"logs": logs}))
}

async fn run_code(
    config: &CodeModeConfig,
    hooks: &ToolHooks,
    args: &Value,
    cx: ToolRunContext,
) -> Result<Value, ToolError> {
    let code = args.get("code").and_then(Value::as_str).unwrap_or_default();
    let program = strip(code)?;
    let dispatcher = cx
        .dispatcher()
        .map_err(|e| setup_error(format!("run_code needs the nested dispatcher: {e}")))?;
    let stop = Arc::new(AtomicBool::new(false));
    let (settle_tx, settle_rx) = std_mpsc::channel::<Settle>();
    let mut events = start_engine(program, limits(config, args), &stop, settle_rx)?;
    // The program's calls run as one batch under the host's scheduling
    // rules; the outer call's cancellation reaches them through this token.
    let sub_cancel = cx.cancellation().child_token();
    let batch = dispatcher.open_batch(sub_cancel.clone(), config.max_parallel_sub_calls);
    let ending = SubCalls::new(&cx, hooks, batch, settle_tx, PLUGIN_NAME)
        .run(&mut events, &stop, &sub_cancel)
        .await;
    result_of(code, ending, cx.is_cancelled())
}

/// `code` as the JavaScript the engine runs (TypeScript types erased).
fn strip(code: &str) -> Result<String, ToolError> {
    prepare(code).map_err(|e| match e {
        StripError::Syntax { message, at } => located(fail(FailKind::Syntax, message, &[]), at),
        StripError::NonErasable { message, at } => {
            located(fail(FailKind::Typescript, message, &[]), at)
        }
    })
}

/// The limits of a run: the configuration's, with a `timeout_ms` argument
/// that may only lower the wall time.
fn limits(config: &CodeModeConfig, args: &Value) -> Limits {
    let mut timeout = config.timeout;
    if let Some(ms) = args.get("timeout_ms").and_then(Value::as_u64) {
        timeout = timeout.min(Duration::from_millis(ms));
    }
    Limits {
        deadline: Instant::now() + timeout,
        memory_bytes: config.memory_bytes,
        output_bytes: config.output_bytes,
        max_outstanding: config.max_outstanding_sub_calls.max(1),
        max_outstanding_bytes: config.max_outstanding_bytes,
        outstanding_wait: config.outstanding_wait,
    }
}

/// Starts the engine on a thread of its own; its events.
fn start_engine(
    program: String,
    limits: Limits,
    stop: &Arc<AtomicBool>,
    settles: std_mpsc::Receiver<Settle>,
) -> Result<mpsc::UnboundedReceiver<Event>, ToolError> {
    let (event_tx, events) = mpsc::unbounded_channel();
    let stop = Arc::clone(stop);
    std::thread::Builder::new()
        .name("tack-run-code".to_owned())
        .spawn(move || engine::run(program, limits, stop, event_tx, settles))
        .map_err(|e| setup_error(format!("cannot start the engine: {e}")))?;
    Ok(events)
}

/// A `CODE_RUN_FAILED` error of kind `setup`: the run could not start.
fn setup_error(message: String) -> ToolError {
    ToolError::code_run_failed(message).with_kind("setup")
}

/// What `run_code` returns for a run of `code` that ended so.
fn result_of(code: &str, ending: Ending, cancelled_now: bool) -> Result<Value, ToolError> {
    let Some(end) = ending.end else {
        return Err(fail(
            FailKind::Exception,
            "the engine stopped unexpectedly".to_owned(),
            &[],
        ));
    };
    if ending.cancelled || cancelled_now {
        return Err(ToolError::cancelled("run_code was cancelled")
            .with_kind(FailKind::Cancelled.as_str())
            .with_data(json!({"logs": end.logs})));
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
