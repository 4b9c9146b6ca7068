//! The JavaScript side: one fresh QuickJS runtime per run, on its own thread.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::{Context, Function, Runtime, Value as JsValue};

use crate::location::FILE_NAME;
use tokio::sync::mpsc;

/// Why a run failed (the `kind` of the `CODE_RUN_FAILED` error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FailKind {
    Syntax,
    Typescript,
    Exception,
    Timeout,
    Memory,
    Output,
    Cancelled,
    Stalled,
}

impl FailKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FailKind::Syntax => "syntax",
            FailKind::Typescript => "typescript",
            FailKind::Exception => "exception",
            FailKind::Timeout => "timeout",
            FailKind::Memory => "memory",
            FailKind::Output => "output",
            FailKind::Cancelled => "cancelled",
            FailKind::Stalled => "stalled",
        }
    }
}

/// How a run ended.
#[derive(Debug)]
pub(crate) struct RunEnd {
    pub(crate) logs: Vec<String>,
    /// `Ok(Some(json))` for a returned value, `Ok(None)` for none.
    pub(crate) result: Result<Option<String>, (FailKind, String)>,
}

/// From the JS thread to the bridge.
#[derive(Debug)]
pub(crate) enum Event {
    Submit { id: u64, name: String, args: String },
    Finished(RunEnd),
}

/// From the bridge to the JS thread: a settled sub-call.
#[derive(Debug)]
pub(crate) struct Settle {
    pub(crate) id: u64,
    pub(crate) ok: bool,
    /// The value (ok) or `{code, message}` (failure), as JSON.
    pub(crate) payload: String,
}

/// The limits of one run.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    pub(crate) deadline: Instant,
    pub(crate) memory_bytes: usize,
    pub(crate) output_bytes: usize,
    /// Sub-calls outstanding (started, not settled) at once.
    pub(crate) max_outstanding: usize,
    /// Argument bytes the outstanding sub-calls hold together.
    pub(crate) max_outstanding_bytes: usize,
    /// How long starting a sub-call over those limits waits.
    pub(crate) outstanding_wait: Duration,
}

/// The deepest nesting of tool arguments any host accepts (the pipeline's
/// highest depth limit): deeper arguments are refused in the engine, before
/// serializing them could exhaust its stack.
const MAX_ARGUMENT_DEPTH: usize = 127;

/// How often a submission waiting for earlier sub-calls to settle looks at
/// the run's cancellation and deadline.
const WAIT_SLICE: Duration = Duration::from_millis(50);

const PRELUDE: &str = r#"
(() => {
  const g = globalThis;
  const MAX_DEPTH = __MAX_DEPTH__;
  // Whether `v` nests objects and arrays deeper than MAX_DEPTH (the
  // arguments object is level 1). Without recursion: the value may be too
  // deep for the stack, which is why this is asked.
  const tooDeep = (v) => {
    const stack = [[v, 1]];
    while (stack.length) {
      const [x, d] = stack.pop();
      if (x === null || typeof x !== "object") continue;
      if (d > MAX_DEPTH) return true;
      for (const k of Object.keys(x)) stack.push([x[k], d + 1]);
    }
    return false;
  };
  const print = g.__tack_print, submit = g.__tack_submit;
  const pending = new Map();
  class ToolCallError extends Error {
    constructor(toolName, code, message) {
      super(message);
      this.name = "ToolCallError";
      this.toolName = toolName;
      this.code = code;
    }
  }
  g.ToolCallError = ToolCallError;
  const fmt = (v) => {
    if (typeof v === "string") return v;
    if (v instanceof Error) return String(v);
    try { const s = JSON.stringify(v); return s === undefined ? String(v) : s; } catch (e) { return String(v); }
  };
  const log = (...a) => { if (!print(a.map(fmt).join(" "))) throw new RangeError("output limit exceeded"); };
  g.console = { log, info: log, warn: log, error: log, debug: log };
  // Lossless JSON only: `this[k]` is the value before any toJSON, so a Date,
  // a Map or a class instance is refused instead of silently reshaped.
  const where = (k) => (k === "" ? "the arguments" : "argument " + JSON.stringify(k));
  const lossless = function (k, v) {
    const raw = this[k];
    const t = typeof raw;
    if (t === "undefined" || t === "function" || t === "symbol" || t === "bigint")
      throw new TypeError(where(k) + " is " + (t === "undefined" ? "undefined" : "a " + t));
    if (t === "number" && !Number.isFinite(raw))
      throw new TypeError(where(k) + " is " + raw + ", not a finite number");
    if (t === "object" && raw !== null && !Array.isArray(raw)) {
      const proto = Object.getPrototypeOf(raw);
      if (proto !== Object.prototype && proto !== null) {
        const kind = raw.constructor && raw.constructor.name ? raw.constructor.name : "exotic object";
        throw new TypeError(where(k) + " is a " + kind + ", not a plain object");
      }
    }
    return v;
  };
  g.tools = new Proxy({}, {
    get: (_, name) => {
      if (typeof name !== "string" || name === "then" || name === "run_code") return undefined;
      return (args) => new Promise((resolve, reject) => {
        let json;
        try {
          if (args === undefined)
            throw new TypeError("the arguments are undefined; call the tool with an arguments object, e.g. tools." + name + "({})");
          if (args === null || typeof args !== "object" || Array.isArray(args))
            throw new TypeError("the arguments are " + (args === null ? "null" : Array.isArray(args) ? "an array" : "a " + typeof args) + "; call the tool with an arguments object");
          json = JSON.stringify(args, lossless);
        } catch (e) {
          let deep = false;
          if (e instanceof RangeError || (e && e.name === "InternalError")) {
            try { deep = tooDeep(args); } catch (_) { deep = false; }
          }
          if (deep) {
            reject(new ToolCallError(name, "INVALID_ARGUMENTS", "the arguments are nested more than " + MAX_DEPTH + " levels deep, over the limit of any host: flatten them (nothing was called)"));
            return;
          }
          reject(new ToolCallError(name, "INVALID_ARGUMENTS", "tool arguments must be lossless JSON (nothing was called): " + e.message));
          return;
        }
        const started = submit(name, json);
        if (started.charAt(0) === "!") {
          reject(new ToolCallError(name, "CODE_RUN_FAILED", started.slice(1)));
          return;
        }
        pending.set(Number(started), { resolve, reject, name });
      });
    },
  });
  g.__tack_settle = (id, ok, payload) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    const v = JSON.parse(payload);
    if (ok) p.resolve(v); else p.reject(new ToolCallError(p.name, v.code, v.message));
  };
  g.__tack_describe = (e) => {
    if (e instanceof Error) {
      let s = e.name + ": " + e.message;
      if (e.stack) s += "\n" + e.stack.trimEnd();
      return s;
    }
    try { return "uncaught: " + fmt(e); } catch (_) { return "uncaught exception"; }
  };
  g.__tack_finish = (p) => p.then(
    (v) => { let s; try { s = v === undefined ? undefined : JSON.stringify(v); } catch (e) { g.__tack_done(false, "the returned value is not JSON: " + e.message); return; } g.__tack_done(true, s === undefined ? "" : s); },
    (e) => g.__tack_done(false, g.__tack_describe(e)));
})();
"#;

#[derive(Default)]
struct State {
    logs: Vec<String>,
    output_bytes: usize,
    output_exceeded: bool,
    next_id: u64,
    /// Sub-calls submitted and not settled (settles received early count as settled).
    outstanding: usize,
    /// The argument bytes of each outstanding sub-call, by id.
    sizes: HashMap<u64, usize>,
    /// Their sum.
    outstanding_bytes: usize,
    /// Settles received while a submission waited, to deliver in order.
    early: VecDeque<Settle>,
    done: Option<Result<Option<String>, String>>,
}

impl State {
    /// A settle arrived: its sub-call is no longer outstanding.
    fn settled(&mut self, id: u64) {
        self.outstanding = self.outstanding.saturating_sub(1);
        if let Some(bytes) = self.sizes.remove(&id) {
            self.outstanding_bytes = self.outstanding_bytes.saturating_sub(bytes);
        }
    }

    /// Whether one more sub-call of `bytes` argument bytes would go over
    /// the limits (a call alone is never over the byte limit).
    fn over(&self, limits: &Limits, bytes: usize) -> bool {
        self.outstanding >= limits.max_outstanding
            || (self.outstanding > 0
                && self.outstanding_bytes.saturating_add(bytes) > limits.max_outstanding_bytes)
    }
}

/// Waits, receiving settles into `state.early`, until a sub-call of `bytes`
/// argument bytes fits the limits; `Err` says why it cannot start.
fn wait_for_room(
    limits: &Limits,
    stop: &AtomicBool,
    settles: &std_mpsc::Receiver<Settle>,
    state: &RefCell<State>,
    bytes: usize,
) -> Result<(), String> {
    let give_up = Instant::now() + limits.outstanding_wait;
    loop {
        if !state.borrow().over(limits, bytes) {
            return Ok(());
        }
        let now = Instant::now();
        if stop.load(Ordering::SeqCst) || now >= limits.deadline {
            return Err("run_code is ending; nothing was called".to_owned());
        }
        if now >= give_up {
            let s = state.borrow();
            return Err(format!(
                "too many tool calls outstanding: {} started and not settled yet, holding {} \
                 argument bytes (limits: {} calls, {} bytes), and none settled within {} ms; \
                 nothing was called. Await earlier calls before starting more (e.g. in batches \
                 with `await Promise.all(...)`)",
                s.outstanding,
                s.outstanding_bytes,
                limits.max_outstanding,
                limits.max_outstanding_bytes,
                limits.outstanding_wait.as_millis()
            ));
        }
        let slice = WAIT_SLICE.min(give_up - now).min(limits.deadline - now);
        match settles.recv_timeout(slice) {
            Ok(settle) => {
                let mut s = state.borrow_mut();
                s.settled(settle.id);
                s.early.push_back(settle);
            }
            Err(std_mpsc::RecvTimeoutError::Timeout) => {}
            Err(std_mpsc::RecvTimeoutError::Disconnected) => {
                return Err("run_code is ending; nothing was called".to_owned());
            }
        }
    }
}

/// Runs `program` (plain JavaScript, the body of an async function) to the
/// end, then sends [`Event::Finished`]. Blocking: call on a dedicated thread.
pub(crate) fn run(
    program: String,
    limits: Limits,
    stop: Arc<AtomicBool>,
    events: mpsc::UnboundedSender<Event>,
    settles: std_mpsc::Receiver<Settle>,
) {
    let state = Rc::new(RefCell::new(State::default()));
    let settles = Rc::new(settles);
    let result = run_inner(&program, &limits, &stop, &events, &settles, &state);
    let logs = std::mem::take(&mut state.borrow_mut().logs);
    let _ = events.send(Event::Finished(RunEnd { logs, result }));
}

/// Whether a failure happened while the program was compiled (a
/// `SyntaxError` then means the program does not parse) or while it ran (a
/// `SyntaxError` then is an exception, e.g. from `JSON.parse`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Compile,
    Run,
}

fn classify(
    limits: &Limits,
    stop: &AtomicBool,
    state: &RefCell<State>,
    message: String,
    phase: Phase,
) -> (FailKind, String) {
    if stop.load(Ordering::SeqCst) {
        return (FailKind::Cancelled, "run_code was cancelled".to_owned());
    }
    if Instant::now() >= limits.deadline {
        return (
            FailKind::Timeout,
            "the program exceeded its wall-time limit".to_owned(),
        );
    }
    if state.borrow().output_exceeded {
        return (
            FailKind::Output,
            format!(
                "the program's output exceeded {} bytes",
                limits.output_bytes
            ),
        );
    }
    if message.contains("out of memory") {
        return (
            FailKind::Memory,
            format!(
                "the program exceeded its memory limit of {} bytes",
                limits.memory_bytes
            ),
        );
    }
    if phase == Phase::Compile && message.starts_with("SyntaxError") {
        return (FailKind::Syntax, message);
    }
    (FailKind::Exception, message)
}

fn run_inner(
    program: &str,
    limits: &Limits,
    stop: &Arc<AtomicBool>,
    events: &mpsc::UnboundedSender<Event>,
    settles: &Rc<std_mpsc::Receiver<Settle>>,
    state: &Rc<RefCell<State>>,
) -> Result<Option<String>, (FailKind, String)> {
    let internal = |e: rquickjs::Error| (FailKind::Exception, format!("engine error: {e}"));
    let runtime = new_runtime(limits, stop, state).map_err(internal)?;
    let context = Context::full(&runtime).map_err(internal)?;
    let bindings = Bindings {
        limits,
        stop,
        events,
        settles,
        state,
    };
    if let Err(message) = context.with(|ctx| start_program(&ctx, program, &bindings)) {
        return Err(classify(limits, stop, state, message, Phase::Compile));
    }
    drive(&runtime, &context, limits, stop, settles, state)
}

/// What the functions the program calls (`__tack_print`, `__tack_submit`,
/// `__tack_done`) are made from: the run's limits, its stop flag, the
/// channels to and from the bridge, and the run's state.
struct Bindings<'a> {
    limits: &'a Limits,
    stop: &'a Arc<AtomicBool>,
    events: &'a mpsc::UnboundedSender<Event>,
    settles: &'a Rc<std_mpsc::Receiver<Settle>>,
    state: &'a Rc<RefCell<State>>,
}

/// A runtime with the run's memory limit, and an interrupt handler that
/// stops the program once the run is stopped, out of time or over its
/// output limit.
fn new_runtime(
    limits: &Limits,
    stop: &Arc<AtomicBool>,
    state: &Rc<RefCell<State>>,
) -> rquickjs::Result<Runtime> {
    let runtime = Runtime::new()?;
    runtime.set_memory_limit(limits.memory_bytes);
    runtime.set_max_stack_size(1024 * 1024);
    let stop = Arc::clone(stop);
    let deadline = limits.deadline;
    let state = Rc::clone(state);
    runtime.set_interrupt_handler(Some(Box::new(move || {
        stop.load(Ordering::SeqCst)
            || Instant::now() >= deadline
            || state.try_borrow().is_ok_and(|s| s.output_exceeded)
    })));
    Ok(runtime)
}

/// Installs the host functions and the prelude, then starts the program
/// (it runs up to its first `await` of something unsettled); `Err` is the
/// description of what failed.
fn start_program(
    ctx: &rquickjs::Ctx<'_>,
    program: &str,
    host: &Bindings<'_>,
) -> Result<(), String> {
    let globals = ctx.globals();
    let print = print_function(ctx, host).map_err(|e| e.to_string())?;
    let submit = submit_function(ctx, host).map_err(|e| e.to_string())?;
    let done = done_function(ctx, host).map_err(|e| e.to_string())?;
    globals
        .set("__tack_print", print)
        .map_err(|e| e.to_string())?;
    globals
        .set("__tack_submit", submit)
        .map_err(|e| e.to_string())?;
    globals
        .set("__tack_done", done)
        .map_err(|e| e.to_string())?;
    let prelude = PRELUDE.replace("__MAX_DEPTH__", &MAX_ARGUMENT_DEPTH.to_string());
    ctx.eval::<(), _>(prelude).map_err(|e| e.to_string())?;
    // Positions in errors and stacks read `program:<line>:<column>`
    // (mapped back to the program's own by the caller).
    let mut options = EvalOptions::default();
    options.filename = Some(FILE_NAME.to_owned());
    let promise: JsValue = match ctx.eval_with_options(program, options) {
        Ok(v) => v,
        Err(_) => return Err(describe(ctx)),
    };
    let finish: Function = globals.get("__tack_finish").map_err(|e| e.to_string())?;
    if finish.call::<_, JsValue>((promise,)).is_err() {
        return Err(describe(ctx));
    }
    Ok(())
}

/// `__tack_print(line)`: keeps a printed line; `false` once the output limit
/// is exceeded.
fn print_function<'js>(
    ctx: &rquickjs::Ctx<'js>,
    host: &Bindings<'_>,
) -> rquickjs::Result<Function<'js>> {
    let state = Rc::clone(host.state);
    let max_output = host.limits.output_bytes;
    Function::new(ctx.clone(), move |line: String| -> bool {
        let mut s = state.borrow_mut();
        if s.output_exceeded {
            return false;
        }
        s.output_bytes = s.output_bytes.saturating_add(line.len() + 1);
        if s.output_bytes > max_output {
            s.output_exceeded = true;
            return false;
        }
        s.logs.push(line);
        true
    })
}

/// `__tack_submit(name, args)`: the id of the started call (decimal), or
/// `!` and why it could not start (the program waited for earlier calls as
/// long as it may).
fn submit_function<'js>(
    ctx: &rquickjs::Ctx<'js>,
    host: &Bindings<'_>,
) -> rquickjs::Result<Function<'js>> {
    let state = Rc::clone(host.state);
    let events = host.events.clone();
    let settles = Rc::clone(host.settles);
    let stop = Arc::clone(host.stop);
    let limits = host.limits.clone();
    Function::new(ctx.clone(), move |name: String, args: String| -> String {
        let bytes = args.len();
        if let Err(why) = wait_for_room(&limits, &stop, &settles, &state, bytes) {
            return format!("!{why}");
        }
        let mut s = state.borrow_mut();
        s.next_id += 1;
        s.outstanding += 1;
        let id = s.next_id;
        s.sizes.insert(id, bytes);
        s.outstanding_bytes = s.outstanding_bytes.saturating_add(bytes);
        let _ = events.send(Event::Submit { id, name, args });
        id.to_string()
    })
}

/// `__tack_done(ok, payload)`: the program's end (the first one counts):
/// its returned JSON (empty: nothing returned), or its failure.
fn done_function<'js>(
    ctx: &rquickjs::Ctx<'js>,
    host: &Bindings<'_>,
) -> rquickjs::Result<Function<'js>> {
    let state = Rc::clone(host.state);
    Function::new(ctx.clone(), move |ok: bool, payload: String| {
        let mut s = state.borrow_mut();
        if s.done.is_none() {
            s.done = Some(if ok {
                Ok((!payload.is_empty()).then_some(payload))
            } else {
                Err(payload)
            });
        }
    })
}

/// Runs the started program to its end: ready jobs, then the next settled
/// sub-call handed to the program, until it is done, stopped, out of time
/// or waiting on nothing that can settle.
fn drive(
    runtime: &Runtime,
    context: &Context,
    limits: &Limits,
    stop: &AtomicBool,
    settles: &std_mpsc::Receiver<Settle>,
    state: &RefCell<State>,
) -> Result<Option<String>, (FailKind, String)> {
    loop {
        // Run every ready job.
        loop {
            match runtime.execute_pending_job() {
                Ok(true) => {}
                Ok(false) => break,
                Err(_) => {
                    let message = context.with(|ctx| describe(&ctx));
                    return Err(classify(limits, stop, state, message, Phase::Run));
                }
            }
        }
        let (done, outstanding, early) = {
            let mut s = state.borrow_mut();
            let early = if s.done.is_none() {
                s.early.pop_front()
            } else {
                None
            };
            (s.done.take(), s.outstanding, early)
        };
        if let Some(done) = done {
            if stop.load(Ordering::SeqCst) || state.borrow().output_exceeded {
                return Err(classify(limits, stop, state, String::new(), Phase::Run));
            }
            return done.map_err(|message| classify(limits, stop, state, message, Phase::Run));
        }
        if stop.load(Ordering::SeqCst) || Instant::now() >= limits.deadline {
            return Err(classify(limits, stop, state, String::new(), Phase::Run));
        }
        let settle = match early {
            // Received while a submission waited: already counted as settled.
            Some(settle) => settle,
            None => match next_settle(limits, settles, state, outstanding)? {
                Some(settle) => settle,
                None => continue,
            },
        };
        if let Err(message) = context.with(|ctx| deliver(&ctx, settle)) {
            return Err(classify(limits, stop, state, message, Phase::Run));
        }
    }
}

/// Waits for the next settled sub-call, up to the deadline (`None`: the
/// deadline passed); fails when nothing is outstanding (the program waits
/// on something that can never settle) or the bridge is gone.
fn next_settle(
    limits: &Limits,
    settles: &std_mpsc::Receiver<Settle>,
    state: &RefCell<State>,
    outstanding: usize,
) -> Result<Option<Settle>, (FailKind, String)> {
    if outstanding == 0 {
        return Err((
            FailKind::Stalled,
            "the program is waiting on something that can never settle".to_owned(),
        ));
    }
    let wait = limits.deadline.saturating_duration_since(Instant::now());
    match settles.recv_timeout(wait) {
        Ok(settle) => {
            state.borrow_mut().settled(settle.id);
            Ok(Some(settle))
        }
        Err(std_mpsc::RecvTimeoutError::Timeout) => Ok(None),
        Err(std_mpsc::RecvTimeoutError::Disconnected) => {
            Err((FailKind::Cancelled, "run_code was cancelled".to_owned()))
        }
    }
}

/// Hands a settled sub-call to the program (`__tack_settle`).
fn deliver(ctx: &rquickjs::Ctx<'_>, settle: Settle) -> Result<(), String> {
    let settle_fn: Function = ctx
        .globals()
        .get("__tack_settle")
        .map_err(|_| describe(ctx))?;
    settle_fn
        .call::<_, ()>((settle.id as f64, settle.ok, settle.payload))
        .map_err(|_| describe(ctx))
}

/// The pending exception, described by the prelude (or plainly if that fails).
fn describe(ctx: &rquickjs::Ctx<'_>) -> String {
    let exception = ctx.catch();
    if let Some(text) = exception.as_string().and_then(|s| s.to_string().ok()) {
        return text;
    }
    let describe: rquickjs::Result<Function> = ctx.globals().get("__tack_describe");
    match describe.and_then(|f| f.call::<_, String>((exception,))) {
        Ok(text) => text,
        Err(_) => "out of memory (or an exception that could not be described)".to_owned(),
    }
}
