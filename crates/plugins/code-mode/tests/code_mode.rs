//! run_code end to end: the plugin installed by the `tack-test` harness over
//! the real pipeline, with fake tools, `code` presentation for the agent, and
//! the program's tool calls nested calls through the same pipeline.
//!
//! The reference harness's CODE cases, and where each is pinned:
//!
//! | case | test |
//! |---|---|
//! | CODE-003 [CORE] pre-cancelled collapsed call → CANCELLED | `crates/pipeline/tests/all/transport.rs` (resolve step) |
//! | CODE-004 [CORE] `both`: direct native calls execute | `both_mode_direct_call_executes`; the prompt states the only-`run_code` rule under `code` alone (`prompt_section(tools, code_only)`, doctest in `src/sdk.rs`; `tack-cli` passes `code_only` for `code`) |
//! | CODE-006 [DETAIL] per-agent declaration, once per scope | restated: the registry's presentation for an agent (`Harness::set_presentation(Some(agent), ..)` here) is a host setting (last write wins), and `Presentation::Native` opts an agent out of a code default; there is no plugin-side declaration to conflict or dispose |
//! | CODE-007 [CORE] programs never see `run_code` | `run_code_is_not_bound_inside_programs` |
//! | CODE-008 [CORE] ids `<outer>:code:<n>`, outer agent, opaque parent token | `sub_calls_carry_the_outer_agent_and_token`, `exclusive_sub_calls_run_one_at_a_time_in_submission_order` |
//! | CODE-009 [CORE] one start + one settle per started sub-call, complete content; never a model message | `each_started_sub_call_logs_a_start_then_one_settle_with_complete_content`; the agent side in `crates/agent/tests/all/code_dispatch.rs` |
//! | CODE-011 [CORE] lossy arguments reject before dispatch | `lossy_arguments_reject_before_dispatch_with_the_reason`, `non_json_arguments_reject` |
//! | CODE-013 [CORE] a failing log rewrite logs the original | `a_panicking_dispatch_log_listener_logs_the_original`, `dispatch_log_rewrite_reaches_only_the_log` |
//! | CODE-015 [CORE] sub-call contexts on the outer result, submission order, survive failure | `sub_call_contexts_are_deferred_onto_the_outer_result`, `sub_call_contexts_keep_submission_order_when_settling_out_of_order` |
//! | CODE-016 [CORE] image content deferred; not after block/replace | `an_image_of_a_sub_call_is_deferred_as_context`, `an_image_removed_or_blocked_by_post_execute_is_not_deferred` |
//! | CODE-019 [CORE] outer abort aborts the in-flight call, abandons queued ones | `cancelling_abandons_queued_sub_calls`, `cancelling_the_outer_call_cancels_and_drains_sub_calls` |
//! | CODE-022 [CORE] pre-aborted → runtime never invoked; late binding rejects | `cancelling_a_busy_loop_stops_it` (pre-cancelled: CANCELLED before dispatch), `a_binding_call_after_cancellation_is_not_dispatched` |
//! | CODE-023 [CORE] overlap up to the cap; cap must be positive | `five_reads_overlap_and_the_exclusive_call_runs_alone`, `a_zero_sub_call_cap_is_refused_at_install` |
//! | CODE-024 [CORE] exclusive calls run alone, hold the barrier through post-execute | `five_reads_overlap_and_the_exclusive_call_runs_alone`, `exclusive_sub_calls_run_one_at_a_time_in_submission_order`, `an_exclusive_call_holds_its_barrier_through_post_execute` |
//! | CODE-027 [CORE] no owning agent: dispatch works | `a_run_without_an_agent_dispatches_and_reports` — tack differs on purpose: the events still go to global `tools/code-dispatch` listeners, and logging them is the host's choice |
//! | CODE-029 [DETAIL] rendering | `results_render_as_logs_then_pretty_json_with_capped_indentation`, `a_string_result_is_rendered_raw_after_the_logs`, `empty_run_says_so`, unit tests in `src/render.rs` |
//! | CODE-031 [DETAIL] log-record invariants (turn-enclosed, non-empty ids, one root) | by construction: the bridge makes every id from the outer call (`<outer>:code:<n>`, parent = outer); the agent emits them between the run's `tool/call` and `tool/result` (checked in `crates/agent/tests/all/code_dispatch.rs`) |
#![allow(clippy::unwrap_used)]

use std::ops::Deref;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};
use tack_code_mode::{CodeMode, CodeModeConfig, sdk_text};
use tack_core::hook::{AgentId, Disposer};
use tack_core::hooks::CodeDispatchEvent;
use tack_core::tool::{CallId, ContentBlock, ErrorCode, Tier, ToolError};
use tack_test::{Call, FakeTool, Harness, Presentation, Report};
use tokio::sync::Barrier;
use tokio_util::sync::CancellationToken;

type Events = Arc<Mutex<Vec<String>>>;

/// A fake tool as a plain definition would be: described, of the cautious
/// tier (`Executes`), and exclusive unless it says otherwise.
fn tool(name: &str, description: &str) -> FakeTool {
    FakeTool::new(name)
        .description(description)
        .tier(Tier::Executes)
}

fn echo() -> FakeTool {
    tool("echo", "Echo the arguments.")
        .schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
        .output_schema(json!({"type": "object"}))
        .concurrency_safe(true)
        .body(|args, _cx| async move { Ok((*args).clone()) })
}

fn failing() -> FakeTool {
    tool("fail", "Always fails.").fails(ToolError::new("boom"))
}

/// Parallel: waits on a barrier of 5 (so 5 must overlap) and records start/end.
fn reader(events: Events, barrier: Arc<Barrier>) -> FakeTool {
    tool("read", "A read-only call.")
        .schema(
            json!({"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"]}),
        )
        .output_schema(json!({"type": "integer"}))
        .concurrency_safe(true)
        .body(move |args, _cx| {
            let events = Arc::clone(&events);
            let barrier = Arc::clone(&barrier);
            async move {
                let i = args["i"].as_i64().unwrap();
                events.lock().unwrap().push(format!("start read {i}"));
                barrier.wait().await;
                events.lock().unwrap().push(format!("end read {i}"));
                Ok(json!(i))
            }
        })
}

fn writer(events: Events) -> FakeTool {
    tool("write", "An exclusive call.")
        .output_schema(json!({"type": "string"}))
        .body(move |_args, _cx| {
            let events = Arc::clone(&events);
            async move {
                events.lock().unwrap().push("start write".to_owned());
                tokio::task::yield_now().await;
                events.lock().unwrap().push("end write".to_owned());
                Ok(json!("written"))
            }
        })
}

/// Waits until cancelled, then reports it.
fn hang(events: Events, started: Arc<tokio::sync::Notify>) -> FakeTool {
    tool("hang", "Never finishes on its own.").body(move |_args, cx| {
        let events = Arc::clone(&events);
        let started = Arc::clone(&started);
        async move {
            started.notify_one();
            cx.cancellation().cancelled().await;
            events.lock().unwrap().push("hang cancelled".to_owned());
            Err::<Value, _>(ToolError::cancelled("cancelled"))
        }
    })
}

type DispatchLog = Arc<Mutex<Vec<CodeDispatchEvent>>>;

/// The plugin in the harness, with what a host's session log would get.
struct Host {
    harness: Harness<CodeMode>,
    agent: AgentId,
    /// What a host's session log would get (`tools/code-dispatch`).
    log: DispatchLog,
    _keep: Disposer,
}

impl Deref for Host {
    type Target = Harness<CodeMode>;
    fn deref(&self) -> &Self::Target {
        &self.harness
    }
}

/// The plugin with `config` over `tools`. Sub-calls run under the turn
/// scheduler's rules (tools that say they are `concurrency_safe` overlap);
/// without `parallel`, at most one runs at a time.
fn host_with(config: CodeModeConfig, tools: Vec<FakeTool>, parallel: bool) -> Host {
    let agent = AgentId::new("coder");
    let mut builder = Harness::builder().agent_presentation(agent.clone(), Presentation::Code);
    for tool in tools {
        builder = builder.tool(tool);
    }
    let mut config = config;
    if !parallel {
        config = config.max_parallel_sub_calls(1);
    }
    let harness = builder.install(CodeMode::new(config)).unwrap();
    let log: DispatchLog = Arc::default();
    let sink = Arc::clone(&log);
    let keep = harness
        .hooks()
        .code_dispatch()
        .tap("test-log", move |event: &Arc<CodeDispatchEvent>| {
            sink.lock().unwrap().push((**event).clone())
        });
    Host {
        harness,
        agent,
        log,
        _keep: keep,
    }
}

fn host() -> Host {
    host_with(CodeModeConfig::default(), vec![echo(), failing()], false)
}

impl Host {
    async fn run(&self, code: &str) -> Report {
        self.run_args(json!({"code": code}), CancellationToken::new())
            .await
    }

    /// The settled records, in settle order.
    fn settled(&self) -> Vec<CodeDispatchEvent> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e.is_settled())
            .cloned()
            .collect()
    }

    /// The log as `start <id>` / `settle <id> <status>` lines.
    fn log_lines(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .map(|e| match e {
                CodeDispatchEvent::Started { call_id, .. } => format!("start {call_id}"),
                CodeDispatchEvent::Settled { call_id, error, .. } => {
                    format!("settle {call_id} {}", error.map_or("ok", |c| c.as_str()))
                }
            })
            .collect()
    }

    async fn run_args(&self, args: Value, cancel: CancellationToken) -> Report {
        let call = Call::new("run_code", args)
            .id("outer")
            .agent(self.agent.clone())
            .cancellation(cancel);
        self.call(call).await
    }
}

fn failure(out: &Report) -> (ErrorCode, Option<String>, String) {
    let f = out
        .failure()
        .unwrap_or_else(|| panic!("expected failure: {out:?}"));
    (
        f.code(),
        f.kind().map(str::to_owned),
        f.message().to_owned(),
    )
}

#[tokio::test]
async fn prints_and_returns() {
    let h = host();
    let out = h
        .run("console.log('hello', 1, {a: 2}); return {x: 1};")
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.value().unwrap()["logs"], json!(["hello 1 {\"a\":2}"]));
    assert_eq!(out.value().unwrap()["result"], json!({"x": 1}));
    assert_eq!(out.text(), "hello 1 {\"a\":2}\n{\n  \"x\": 1\n}");
}

#[tokio::test]
async fn empty_run_says_so() {
    let h = host();
    let out = h.run("const a = 1;").await;
    assert_eq!(out.text(), "(run_code completed with no output)");
}

#[tokio::test]
async fn typescript_types_are_stripped() {
    let h = host();
    let out = h
        .run("interface P { x: number }\nconst p: P = { x: 2 };\nconst f = (n: number): number => n * 2;\nreturn f(p.x);")
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.value().unwrap()["result"], json!(4));
}

#[tokio::test]
async fn non_erasable_typescript_is_a_clear_error() {
    let h = host();
    let out = h.run("enum Color { Red, Green }\nreturn Color.Red;").await;
    let (code, kind, message) = failure(&out);
    assert_eq!(code, ErrorCode::CodeRunFailed);
    assert_eq!(kind.as_deref(), Some("typescript"));
    assert!(message.contains("non-erasable"), "{message}");
}

#[tokio::test]
async fn syntax_error_names_line_and_column() {
    let h = host();
    let out = h.run("const a = 1;\nconst = 2;").await;
    let (code, kind, message) = failure(&out);
    assert_eq!(code, ErrorCode::CodeRunFailed);
    assert_eq!(kind.as_deref(), Some("syntax"));
    assert!(message.contains("line 2, column 7"), "{message}");
}

/// The line and column (1-based, in characters) of a failure's error data.
fn position(out: &Report) -> (u64, u64) {
    let data = out
        .failure()
        .and_then(|f| f.data().cloned())
        .unwrap_or_else(|| panic!("expected error data: {out:?}"));
    (
        data["line"].as_u64().unwrap_or_else(|| panic!("{data}")),
        data["column"].as_u64().unwrap_or_else(|| panic!("{data}")),
    )
}

/// A syntax error points at the program's own line and column and quotes the
/// program's line, never the wrapper that makes it an async function body.
#[tokio::test]
async fn a_syntax_error_on_line_three_points_at_line_three_in_js_and_ts() {
    let h = host();
    let cases = [
        // JavaScript, found by the parser.
        (
            "let a = 1;\nlet b = 2;\nlet c = ;\nreturn a;",
            (3, 9),
            "let c = ;",
        ),
        // TypeScript (types erased around it).
        (
            "const a: number = 1;\nconst b: string = 'x';\nconst c: number = );\nreturn a;",
            (3, 19),
            "const c: number = );",
        ),
        // On the first line, where the wrapper's head sits.
        ("let a = ;", (1, 9), "let a = ;"),
        // Found by the engine, not the parser (a lexical redeclaration; the
        // engine points just after the redeclared name).
        (
            "let a = 1;\nlet b = 2;\nlet a = 3;\nreturn a;",
            (3, 7),
            "let a = 3;",
        ),
    ];
    for (program, (line, column), quoted) in cases {
        let out = h.run(program).await;
        let (code, kind, message) = failure(&out);
        assert_eq!(code, ErrorCode::CodeRunFailed, "{program}: {message}");
        assert_eq!(kind.as_deref(), Some("syntax"), "{program}: {message}");
        assert_eq!(position(&out), (line, column), "{program}: {message}");
        assert!(
            message.contains(&format!("line {line}, column {column}")),
            "{program}: {message}"
        );
        assert!(
            message.contains(&format!(" {line} | {quoted}")),
            "{program}: {message}"
        );
        assert!(
            !message.contains("async ()") && !message.contains("})()"),
            "no wrapper text: {message}"
        );
    }
}

/// A `SyntaxError` thrown while the program runs (`JSON.parse`) is an
/// exception with the program's stack, not a program that does not parse.
#[tokio::test]
async fn a_syntax_error_thrown_at_run_time_is_an_exception() {
    let h = host();
    let out = h.run("const a = 1;\nreturn JSON.parse('{');").await;
    let (_, kind, message) = failure(&out);
    assert_eq!(kind.as_deref(), Some("exception"), "{message}");
    assert!(
        message.starts_with("run_code failed (exception): SyntaxError"),
        "{message}"
    );
    assert!(message.contains("program:2:"), "{message}");
}

/// A program that ends with something left open points at its own end, not
/// at the wrapper's closing line.
#[tokio::test]
async fn an_unclosed_block_points_at_the_end_of_the_program() {
    let h = host();
    let out = h.run("const a = 1;\nif (a) {\n  console.log(a);").await;
    let (_, kind, message) = failure(&out);
    assert_eq!(kind.as_deref(), Some("syntax"));
    assert_eq!(position(&out).0, 3, "{message}");
    assert!(message.contains("end of the program"), "{message}");
    assert!(!message.contains("})()"), "no wrapper text: {message}");
}

/// An exception's stack names the program's own columns on the first line.
#[tokio::test]
async fn an_exception_on_the_first_line_has_the_program_column() {
    let h = host();
    let out = h.run("throw new Error('kaput');").await;
    let (_, kind, message) = failure(&out);
    assert_eq!(kind.as_deref(), Some("exception"));
    assert!(message.contains("program:1:"), "{message}");
    let column: usize = message
        .split("program:1:")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|digits| digits.parse().ok())
        .unwrap_or_else(|| panic!("{message}"));
    assert!(column <= "throw new Error('kaput');".len(), "{message}");
    // The frame of the wrapper's call that starts the program is not shown.
    let frames = message
        .lines()
        .filter(|l| l.trim_start().starts_with("at "));
    assert_eq!(frames.count(), 1, "{message}");
}

#[tokio::test]
async fn thrown_exception_keeps_logs() {
    let h = host();
    let out = h
        .run("console.log('before'); throw new Error('kaput');")
        .await;
    let (code, kind, message) = failure(&out);
    assert_eq!(code, ErrorCode::CodeRunFailed);
    assert_eq!(kind.as_deref(), Some("exception"));
    assert!(
        message.contains("kaput") && message.contains("before"),
        "{message}"
    );
}

#[tokio::test]
async fn infinite_loop_hits_the_wall_time_limit() {
    let h = host();
    let out = h
        .run_args(
            json!({"code": "while(true){}", "timeout_ms": 200}),
            CancellationToken::new(),
        )
        .await;
    let (code, kind, _) = failure(&out);
    assert_eq!(code, ErrorCode::CodeRunFailed);
    assert_eq!(kind.as_deref(), Some("timeout"));
}

#[tokio::test]
async fn huge_allocation_hits_the_memory_limit() {
    let h = host();
    let out = h
        .run("const a = new Array(1024 * 1024 * 128).fill(1.5); return a.length;")
        .await;
    let (code, kind, _) = failure(&out);
    assert_eq!(code, ErrorCode::CodeRunFailed);
    assert_eq!(kind.as_deref(), Some("memory"), "{out:?}");
}

#[tokio::test]
async fn string_allocation_hits_the_memory_limit() {
    let h = host();
    let out = h.run("let s = 'x'.repeat(1 << 30); return s.length;").await;
    let (_, kind, _) = failure(&out);
    assert!(
        matches!(kind.as_deref(), Some("memory") | Some("exception")),
        "{out:?}"
    );
}

#[tokio::test]
async fn printing_ten_megabytes_hits_the_output_limit() {
    let h = host();
    let out = h
        .run("const line = 'y'.repeat(1000); for (let i = 0; i < 10000; i++) { try { console.log(line); } catch (e) {} } return 1;")
        .await;
    let (code, kind, message) = failure(&out);
    assert_eq!(code, ErrorCode::CodeRunFailed);
    assert_eq!(kind.as_deref(), Some("output"));
    assert!(
        message.contains("1048576"),
        "{}",
        &message[..200.min(message.len())]
    );
}

#[tokio::test]
async fn sdk_call_goes_through_the_pipeline() {
    let h = host();
    let out = h
        .run("const r = await tools.echo({text: 'hi'}); console.log(r.text); return r;")
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.value().unwrap()["result"], json!({"text": "hi"}));
    let settled = h.settled();
    assert_eq!(settled[0].call_id().as_str(), "outer:code:1");
    assert_eq!(settled[0].parent_call_id().as_str(), "outer");
    assert_eq!(settled[0].tool(), "echo");
    assert_eq!(settled[0].error(), None);
    assert_eq!(
        h.log_lines(),
        ["start outer:code:1", "settle outer:code:1 ok"]
    );
}

#[tokio::test]
async fn direct_native_call_under_code_is_unknown_tool() {
    let h = host();
    let call = Call::raw("echo", "{}").id("d").agent(h.agent.clone());
    let out = h.call(call).await;
    assert_eq!(out.error_code(), Some(ErrorCode::UnknownTool));
    assert!(out.message().unwrap().contains("run_code"));
}

#[tokio::test]
async fn failed_sub_call_rejects_with_tool_call_error() {
    let h = host();
    let out = h
        .run("try { await tools.fail({}); } catch (e) { return [e instanceof ToolCallError, e.toolName, e.code, e.message]; }")
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(
        out.value().unwrap()["result"],
        json!([true, "fail", "EXECUTION_FAILED", "boom"])
    );
}

#[tokio::test]
async fn invisible_tool_is_unknown_tool() {
    let h = host();
    let out = h
        .run("try { await tools.nope({}); } catch (e) { return [e.toolName, e.code]; }")
        .await;
    assert_eq!(
        out.value().unwrap()["result"],
        json!(["nope", "UNKNOWN_TOOL"])
    );
}

#[tokio::test]
async fn non_json_arguments_reject() {
    let h = host();
    let out = h
        .run(
            "const out = [];\n\
             for (const a of [undefined, {f: () => 1}, (() => { const c = {}; c.c = c; return c; })()]) {\n\
               try { await tools.echo(a); out.push('ok'); } catch (e) { out.push(e.code); }\n\
             }\n\
             return out;",
        )
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(
        out.value().unwrap()["result"],
        json!([
            "INVALID_ARGUMENTS",
            "INVALID_ARGUMENTS",
            "INVALID_ARGUMENTS"
        ])
    );
    assert!(h.log_lines().is_empty(), "no call was dispatched");
}

#[tokio::test]
async fn five_reads_overlap_and_the_exclusive_call_runs_alone() {
    let events: Events = Arc::default();
    let barrier = Arc::new(Barrier::new(5));
    let h = host_with(
        CodeModeConfig::default(),
        vec![
            reader(Arc::clone(&events), barrier),
            writer(Arc::clone(&events)),
        ],
        true,
    );
    let out = h
        .run(
            "const a = await Promise.all([0,1,2,3,4].map(i => tools.read({i})));\n\
             const w = await tools.write({});\n\
             return [a, w];",
        )
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(
        out.value().unwrap()["result"],
        json!([[0, 1, 2, 3, 4], "written"])
    );
    let events = events.lock().unwrap().clone();
    // All five started before any ended (the barrier proves the overlap).
    let first_end = events
        .iter()
        .position(|e| e.starts_with("end read"))
        .unwrap();
    assert_eq!(
        events[..first_end]
            .iter()
            .filter(|e| e.starts_with("start read"))
            .count(),
        5
    );
    // The exclusive call starts after every read ended and nothing interleaves it.
    let w = events.iter().position(|e| e == "start write").unwrap();
    assert_eq!(events[w + 1], "end write");
    assert_eq!(
        events[..w]
            .iter()
            .filter(|e| e.starts_with("end read"))
            .count(),
        5
    );
}

#[tokio::test]
async fn exclusive_sub_calls_run_one_at_a_time_in_submission_order() {
    let events: Events = Arc::default();
    let h = host_with(
        CodeModeConfig::default(),
        vec![writer(Arc::clone(&events)), echo()],
        true,
    );
    let out = h
        .run("const r = await Promise.all([tools.write({}), tools.write({}), tools.echo({text: 'x'})]); return r;")
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(
        h.log_lines(),
        [
            "start outer:code:1",
            "settle outer:code:1 ok",
            "start outer:code:2",
            "settle outer:code:2 ok",
            "start outer:code:3",
            "settle outer:code:3 ok",
        ]
    );
    assert_eq!(
        *events.lock().unwrap(),
        ["start write", "end write", "start write", "end write"]
    );
}

#[tokio::test]
async fn dispatch_log_rewrite_reaches_only_the_log() {
    let h = host();
    let _listener =
        h.hooks()
            .code_dispatch_log()
            .tap("bound", |entry: CodeDispatchEvent, _next| async move {
                entry.with_content(vec![ContentBlock::text("[elided]")])
            });
    let out = h
        .run("const r = await tools.echo({text: 'secret'}); return r.text;")
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.value().unwrap()["result"], json!("secret"));
    assert_eq!(out.text(), "secret");
    let settled = h.settled();
    assert_eq!(settled[0].content(), [ContentBlock::text("[elided]")]);
    let who = settled[0].provenance().unwrap();
    assert!(who.to_string().contains("bound"), "{who}");
}

/// A `tools/code-dispatch-log` listener sees both records of a sub-call, so
/// a secret redacted from the arguments is in neither; the program's value
/// is untouched.
#[tokio::test]
async fn dispatch_log_redaction_covers_the_start_and_the_settle() {
    let h = host();
    let _listener =
        h.hooks()
            .code_dispatch_log()
            .tap("redact", |event: CodeDispatchEvent, _next| async move {
                let redacted = event.arguments().replace("hunter2", "[redacted]");
                event.with_arguments(redacted)
            });
    let out = h
        .run("const r = await tools.echo({text: 'hunter2'}); return r.text;")
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.value().unwrap()["result"], json!("hunter2"));
    let log = h.log.lock().unwrap().clone();
    assert_eq!(log.len(), 2, "{log:?}");
    for event in &log {
        assert_eq!(event.arguments(), r#"{"text":"[redacted]"}"#, "{event:?}");
        let who = event.provenance().expect("stamped");
        assert!(who.to_string().contains("redact"), "{who}");
    }
    assert!(!log[0].is_settled() && log[1].is_settled());
}

/// A `tools/code-dispatch-log` listener can rewrite what is logged, not
/// which record it is: one that answers a settle with a start (or names
/// another call) is ignored, and the log still has one start and one settle.
#[tokio::test]
async fn a_dispatch_log_listener_cannot_swap_the_record() {
    let h = host();
    let _listener =
        h.hooks()
            .code_dispatch_log()
            .tap("swap", |event: CodeDispatchEvent, _next| async move {
                CodeDispatchEvent::started(
                    event.parent_call_id().clone(),
                    CallId::from("elsewhere"),
                    "other",
                    "{}",
                )
            });
    let out = h
        .run("const r = await tools.echo({text: 'kept'}); return r.text;")
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(
        h.log_lines(),
        ["start outer:code:1", "settle outer:code:1 ok"]
    );
    let settled = h.settled();
    assert_eq!(settled[0].tool(), "echo");
    assert!(settled[0].provenance().is_none(), "{settled:?}");
}

/// Runs `code` on a host with `hang` (plus `tools`), cancelling the outer
/// call once `hang` has started.
async fn cancel_once_hanging(events: &Events, tools: Vec<FakeTool>, code: &str) -> (Host, Report) {
    let started = Arc::new(tokio::sync::Notify::new());
    let mut all = vec![hang(Arc::clone(events), Arc::clone(&started))];
    all.extend(tools);
    let h = host_with(CodeModeConfig::default(), all, false);
    let cancel = CancellationToken::new();
    let run = h.run_args(json!({"code": code}), cancel.clone());
    let canceller = async {
        started.notified().await;
        cancel.cancel();
    };
    let (out, ()) = tokio::join!(run, canceller);
    (h, out)
}

#[tokio::test]
async fn cancelling_the_outer_call_cancels_and_drains_sub_calls() {
    let events: Events = Arc::default();
    let (h, out) = cancel_once_hanging(&events, vec![], "await tools.hang({}); return 1;").await;
    assert_eq!(out.error_code(), Some(ErrorCode::Cancelled), "{out:?}");
    assert_eq!(
        *events.lock().unwrap(),
        ["hang cancelled"],
        "drained before returning"
    );
    assert_eq!(
        h.log_lines(),
        ["start outer:code:1", "settle outer:code:1 CANCELLED"]
    );
}

#[tokio::test]
async fn cancelling_a_busy_loop_stops_it() {
    let h = host();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let out = h.run_args(json!({"code": "while(true){}"}), cancel).await;
    assert!(
        matches!(out.error_code(), Some(ErrorCode::Cancelled)),
        "{out:?}"
    );
}

#[tokio::test]
async fn unawaited_settle_is_drained_after_return() {
    let events: Events = Arc::default();
    let started = Arc::new(tokio::sync::Notify::new());
    let h = host_with(
        CodeModeConfig::default(),
        vec![hang(Arc::clone(&events), started), echo()],
        true,
    );
    let out = h.run("tools.hang({}); return 'done';").await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.value().unwrap()["result"], json!("done"));
    // The outstanding call was cancelled and drained before run_code returned.
    assert_eq!(
        h.log_lines(),
        ["start outer:code:1", "settle outer:code:1 CANCELLED"]
    );
}

#[tokio::test]
async fn timers_and_host_apis_are_absent() {
    let h = host();
    let out = h
        .run("return [typeof setTimeout, typeof require, typeof fetch, typeof std, typeof os];")
        .await;
    assert_eq!(
        out.value().unwrap()["result"],
        json!([
            "undefined",
            "undefined",
            "undefined",
            "undefined",
            "undefined"
        ])
    );
}

#[test]
fn sdk_is_deterministic_sorted_and_quotes_exotic_names() {
    let odd = tool("mcp.server-x", "Exotic.")
        .schema(json!({"type": "object", "properties": {"q": {"not": {}}}}))
        .output_schema(json!({"type": "array", "items": {"type": "string"}}))
        .returns(json!([]))
        .definition();
    let mut tools = vec![
        failing().definition().unwrap(),
        echo().definition().unwrap(),
    ];
    if let Ok(odd) = odd {
        tools.push(odd);
    }
    let a = sdk_text(&tools);
    tools.reverse();
    let b = sdk_text(&tools);
    assert_eq!(a, b);
    let echo_at = a.find("  echo(").unwrap();
    let fail_at = a.find("  fail(").unwrap();
    assert!(echo_at < fail_at);
    assert!(
        a.contains("echo(args: { text?: string }): Promise<{ [key: string]: unknown }>;"),
        "{a}"
    );
    assert!(a.contains("ToolCallError"));
    assert!(a.contains("Promise.all"));
    if tools.len() == 3 {
        assert!(
            a.contains("\"mcp.server-x\"(args: { q?: unknown }): Promise<Array<string>>;"),
            "{a}"
        );
    }
}

#[tokio::test]
async fn run_code_cannot_be_shadowed() {
    let h = host();
    let err = h.register(&echo_named("run_code")).unwrap_err();
    assert!(
        matches!(err, tack_core::plugin::PluginError::ReservedTool { .. }),
        "{err}"
    );
}

fn echo_named(name: &str) -> FakeTool {
    tool(name, "x").returns(json!({}))
}

fn deferring() -> FakeTool {
    tool("note", "Defers a context.")
        .schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
        .body(|args, cx| async move {
            cx.defer_context(format!("ctx {}", args["n"]));
            Ok(json!({}))
        })
}

/// CODE-007: a program can never re-enter run_code, even under `both`.
#[tokio::test]
async fn run_code_is_not_bound_inside_programs() {
    let h = host();
    h.set_presentation(Some(&h.agent), Presentation::Both);
    let out = h
        .run("return [typeof tools.run_code, typeof tools.echo];")
        .await;
    assert_eq!(
        out.value().unwrap()["result"],
        json!(["undefined", "function"])
    );
}

/// CODE-004: under `both` a direct native call executes.
#[tokio::test]
async fn both_mode_direct_call_executes() {
    let h = host();
    h.set_presentation(Some(&h.agent), Presentation::Both);
    let call = Call::raw("echo", "{}").id("d").agent(h.agent.clone());
    let out = h.call(call).await;
    assert!(out.is_success(), "{out:?}");
}

/// CODE-015: sub-call contexts are deferred onto the outer result, in
/// submission order, and survive a later program failure.
#[tokio::test]
async fn sub_call_contexts_are_deferred_onto_the_outer_result() {
    let h = host_with(CodeModeConfig::default(), vec![deferring()], false);
    let out = h
        .run("await tools.note({n: 1}); await tools.note({n: 2}); throw new Error('late');")
        .await;
    assert_eq!(out.error_code(), Some(ErrorCode::CodeRunFailed));
    assert_eq!(out.outcome().deferred_context, ["ctx 1", "ctx 2"]);
}

/// CODE-019: aborting the outer call aborts the in-flight sub-call and
/// abandons the queued ones.
#[tokio::test]
async fn cancelling_abandons_queued_sub_calls() {
    let events: Events = Arc::default();
    let (h, out) = cancel_once_hanging(
        &events,
        vec![writer(Arc::clone(&events))],
        "await Promise.all([tools.hang({}), tools.write({})]);",
    )
    .await;
    assert_eq!(out.error_code(), Some(ErrorCode::Cancelled), "{out:?}");
    assert_eq!(
        *events.lock().unwrap(),
        ["hang cancelled"],
        "write never started"
    );
    assert_eq!(
        h.log_lines(),
        ["start outer:code:1", "settle outer:code:1 CANCELLED"],
        "an abandoned call has no events"
    );
}

#[tokio::test]
async fn awaiting_forever_is_reported_as_stalled() {
    let h = host();
    let out = h.run("await new Promise(() => {});").await;
    let (_, kind, _) = failure(&out);
    assert_eq!(kind.as_deref(), Some("stalled"));
}

#[tokio::test]
async fn a_non_json_return_value_fails() {
    let h = host();
    let out = h.run("const c = {}; c.c = c; return c;").await;
    let (code, kind, message) = failure(&out);
    assert_eq!(code, ErrorCode::CodeRunFailed);
    assert_eq!(kind.as_deref(), Some("exception"));
    assert!(message.contains("not JSON"), "{message}");
}

#[tokio::test]
async fn a_string_result_is_rendered_raw_after_the_logs() {
    let h = host();
    let out = h
        .run("console.log('a'); console.log('b'); return 'raw \"text\"';")
        .await;
    assert_eq!(out.text(), "a\nb\nraw \"text\"");
}

/// CODE-013: a panicking `tools/code-dispatch-log` listener is contained: the
/// original content is logged and the dispatch is unaffected.
#[tokio::test]
async fn a_panicking_dispatch_log_listener_logs_the_original() {
    let h = host();
    let _listener = h
        .hooks()
        .code_dispatch_log()
        .tap("broken", |_entry: CodeDispatchEvent, _next| async move {
            panic!("listener bug")
        });
    let out = h
        .run("const r = await tools.echo({text: 'kept'}); return r.text;")
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.value().unwrap()["result"], json!("kept"));
    let settled = h.settled();
    assert_eq!(settled[0].error(), None);
    assert!(
        tack_core::tool::Content::from(settled[0].content().to_vec())
            .joined_text()
            .contains("kept"),
        "{settled:?}"
    );
}

/// CODE-023: the sub-call cap must be a positive number; the plugin refuses 0
/// at install (leaving nothing installed: `run_code` is unknown), and
/// installs (registering `run_code`) with a valid cap.
#[tokio::test]
async fn a_zero_sub_call_cap_is_refused_at_install() {
    let zero = CodeMode::new(CodeModeConfig::default().max_parallel_sub_calls(0));
    let mut refused = Harness::builder()
        .presentation(Presentation::Code)
        .uninstalled(zero)
        .unwrap();
    let err = refused.install().unwrap_err();
    assert!(err.to_string().contains("at least 1"), "{err}");
    assert!(!refused.is_installed());
    assert!(refused.schemas(None).is_empty());
    let call = Call::new("run_code", json!({"code": "return 1;"}));
    let out = refused.call(call).await;
    assert_eq!(out.error_code(), Some(ErrorCode::UnknownTool), "{out:?}");

    let h = Harness::new(CodeMode::new(CodeModeConfig::default())).unwrap();
    h.set_presentation(None, Presentation::Code);
    let names: Vec<String> = h.schemas(None).into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["run_code"]);
}

/// A tool whose content carries an image (rendered from its value).
fn camera() -> FakeTool {
    tool("snap", "Returns a picture.")
        .output_schema(json!({"type": "object"}))
        .render(|_args, _value| {
            vec![
                ContentBlock::text("shot"),
                ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ]
        })
        .concurrency_safe(true)
        .returns(json!({"w": 1}))
}

/// CODE-016: the whole final content of a successful sub-call that carries
/// an image is deferred onto the outer result (source `code-mode`); the
/// program gets the value, and the `run_code` content stays text.
#[tokio::test]
async fn an_image_of_a_sub_call_is_deferred_as_context() {
    let h = host_with(CodeModeConfig::default(), vec![camera(), echo()], false);
    let out = h
        .run("const a = await tools.snap({}); await tools.echo({text: 'x'}); return a.w;")
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.text(), "1");
    assert!(
        out.content()
            .iter()
            .all(|b| !matches!(b, ContentBlock::Image { .. })),
        "{out:?}"
    );
    assert_eq!(out.outcome().deferred_context.len(), 1, "{out:?}");
    let context = &out.outcome().deferred_context[0];
    assert_eq!(context.source(), Some("code-mode"));
    assert_eq!(
        context.content,
        [
            ContentBlock::text("shot"),
            ContentBlock::image("iVBORw0KGgo=", "image/png")
        ]
    );
}

/// CODE-016: no image is deferred when post-execute replaced the content or
/// blocked the sub-call.
#[tokio::test]
async fn an_image_removed_or_blocked_by_post_execute_is_not_deferred() {
    use tack_core::hooks::{ExecutionRecord, PostDecision};
    for (how, decision) in [
        (
            "replace",
            PostDecision::accept().replace_content(vec![ContentBlock::text("[no pictures]")]),
        ),
        (
            "block",
            PostDecision::accept().block("pictures are not allowed"),
        ),
    ] {
        let h = host_with(CodeModeConfig::default(), vec![camera()], false);
        let _post =
            h.hooks()
                .post_execute()
                .tap("no-pictures", move |record: ExecutionRecord, next| {
                    let decision = decision.clone();
                    async move {
                        if record
                            .execution
                            .as_ref()
                            .is_some_and(|e| e.name() == "snap")
                        {
                            return decision;
                        }
                        next.run(record).await
                    }
                });
        let out = h
            .run("try { await tools.snap({}); return 'ok'; } catch (e) { return e.code; }")
            .await;
        assert!(out.is_success(), "{how}: {out:?}");
        assert!(out.outcome().deferred_context.is_empty(), "{how}: {out:?}");
        let expected = if how == "block" { "DENIED" } else { "ok" };
        assert_eq!(out.value().unwrap()["result"], json!(expected), "{how}");
    }
}

/// A parallel tool that sleeps `ms` and then defers `ctx <n>`.
fn slow_note() -> FakeTool {
    tool("slow_note", "Sleeps, then defers a context.")
        .schema(json!({"type": "object", "properties": {"n": {"type": "integer"}, "ms": {"type": "integer"}}}))
        .concurrency_safe(true)
        .body(|args, cx| async move {
            tokio::time::sleep(Duration::from_millis(args["ms"].as_u64().unwrap())).await;
            cx.defer_context(format!("ctx {}", args["n"]));
            Ok(json!({}))
        })
}

/// CODE-015: contexts keep submission order even when overlapping sub-calls
/// settle in another order.
#[tokio::test]
async fn sub_call_contexts_keep_submission_order_when_settling_out_of_order() {
    let h = host_with(CodeModeConfig::default(), vec![slow_note()], true);
    let out = h
        .run(
            "await Promise.all([tools.slow_note({n: 1, ms: 60}), tools.slow_note({n: 2, ms: 0})]);",
        )
        .await;
    assert!(out.is_success(), "{out:?}");
    let lines = h.log_lines();
    assert_eq!(
        lines[2..],
        ["settle outer:code:2 ok", "settle outer:code:1 ok"],
        "the second settles first: {lines:?}"
    );
    assert_eq!(out.outcome().deferred_context, ["ctx 1", "ctx 2"]);
}

/// CODE-009: one start then exactly one settle per started sub-call, with
/// the tool, the arguments as passed, the status and the complete content
/// (non-text blocks and long text verbatim); none of it reaches the model.
#[tokio::test]
async fn each_started_sub_call_logs_a_start_then_one_settle_with_complete_content() {
    let h = host_with(
        CodeModeConfig::default(),
        vec![echo(), failing(), camera()],
        true,
    );
    let long = "x".repeat(100_000);
    let out = h
        .run(&format!(
            "await Promise.all([tools.echo({{text: '{long}'}}), tools.snap({{}}), tools.fail({{}}).catch(() => 0)]); return 'done';"
        ))
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.text(), "done");
    let events = h.log.lock().unwrap().clone();
    assert_eq!(events.len(), 6, "{:?}", h.log_lines());
    for n in 1..=3 {
        let id = format!("outer:code:{n}");
        let positions: Vec<(usize, bool)> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| e.call_id().as_str() == id)
            .map(|(i, e)| (i, matches!(e, CodeDispatchEvent::Started { .. })))
            .collect();
        assert_eq!(positions.len(), 2, "{id}: {:?}", h.log_lines());
        assert!(positions[0].1 && !positions[1].1, "{id}: start then settle");
        assert!(
            events
                .iter()
                .all(|e| e.parent_call_id().as_str() == "outer")
        );
    }
    let settled = h.settled();
    let by_tool = |tool: &str| settled.iter().find(|e| e.tool() == tool).unwrap().clone();
    let echo = by_tool("echo");
    assert_eq!(echo.arguments(), format!("{{\"text\":\"{long}\"}}"));
    assert!(
        tack_core::tool::Content::from(echo.content().to_vec())
            .joined_text()
            .contains(&long),
        "long text logged whole"
    );
    assert_eq!(
        by_tool("snap").content(),
        [
            ContentBlock::text("shot"),
            ContentBlock::image("iVBORw0KGgo=", "image/png")
        ]
    );
    let fail = by_tool("fail");
    assert_eq!(fail.error(), Some(ErrorCode::ExecutionFailed));
    assert!(fail.is_error());
    assert_eq!(
        tack_core::tool::Content::from(fail.content().to_vec()).joined_text(),
        "EXECUTION_FAILED: boom"
    );
}

/// CODE-011: arguments that are not lossless JSON reject before dispatch;
/// nothing runs and nothing is logged.
#[tokio::test]
async fn lossy_arguments_reject_before_dispatch_with_the_reason() {
    let h = host();
    let out = h
        .run(
            "const cases = {\n\
               undefinedRoot: undefined,\n\
               bigint: {n: 1n},\n\
               getter: {get x() { throw new Error('getter says no'); }},\n\
               date: {when: new Date(0)},\n\
               fn: {f: () => 1},\n\
               nan: {n: NaN},\n\
               map: {m: new Map()},\n\
               array: [1],\n\
               hole: {a: [1, , 3]},\n\
             };\n\
             const out = {};\n\
             for (const [k, v] of Object.entries(cases)) {\n\
               try { await tools.echo(v); out[k] = 'called'; } catch (e) { out[k] = e.code + ': ' + e.message; }\n\
             }\n\
             return out;",
        )
        .await;
    assert!(out.is_success(), "{out:?}");
    let result = out.value().unwrap()["result"].as_object().unwrap().clone();
    let expect = [
        ("undefinedRoot", "call the tool with an arguments object"),
        ("bigint", "argument \"n\" is a bigint"),
        ("getter", "getter says no"),
        ("date", "argument \"when\" is a Date, not a plain object"),
        ("fn", "argument \"f\" is a function"),
        ("nan", "argument \"n\" is NaN, not a finite number"),
        ("map", "argument \"m\" is a Map, not a plain object"),
        ("array", "the arguments are an array"),
        ("hole", "argument \"1\" is undefined"),
    ];
    for (case, needle) in expect {
        let message = result[case].as_str().unwrap();
        assert!(
            message.starts_with("INVALID_ARGUMENTS: tool arguments must be lossless JSON"),
            "{case}: {message}"
        );
        assert!(message.contains(needle), "{case}: {message}");
    }
    assert!(h.log_lines().is_empty(), "nothing dispatched or logged");
}

/// A number the pipeline's parse step would round (`2 ** 64`, which
/// `JSON.stringify` writes as an integer beyond 64 bits) is refused by the
/// pipeline with its pointer; a safe float passes unchanged.
#[tokio::test]
async fn a_number_the_pipeline_would_round_is_refused_with_its_pointer() {
    let h = host();
    let out = h
        .run(
            "let big;\n\
             try { await tools.echo({n: [2 ** 64]}); big = 'called'; } catch (e) { big = e.code + ': ' + e.message; }\n\
             const small = await tools.echo({n: 0.1, m: 2 ** 53});\n\
             return {big, small};",
        )
        .await;
    assert!(out.is_success(), "{out:?}");
    let result = &out.value().unwrap()["result"];
    let big = result["big"].as_str().unwrap();
    assert!(big.starts_with("INVALID_ARGUMENTS: "), "{big}");
    assert!(big.contains("18446744073709552000"), "{big}");
    assert!(big.contains("`/n/0`"), "{big}");
    assert_eq!(result["small"], json!({"n": 0.1, "m": 9007199254740992u64}));
}

/// CODE-008: each sub-call is a full pipeline execution carrying the outer
/// call's agent and the outer execution's opaque token as its parent.
#[tokio::test]
async fn sub_calls_carry_the_outer_agent_and_token() {
    let h = host();
    let out = h
        .run("await tools.echo({text: 'a'}); await tools.echo({text: 'b'});")
        .await;
    assert!(out.is_success(), "{out:?}");
    // What the `tools/result` observers saw of the run and of each sub-call.
    assert!(out.observed(), "{out:?}");
    let outer_token = out.execution().unwrap().token().clone();
    let nested = out.nested();
    assert_eq!(nested.len(), 2);
    for (n, record) in nested.iter().enumerate() {
        assert!(record.observed(), "{record:?}");
        let execution = record.execution().unwrap();
        assert_eq!(
            execution.call_id().as_str(),
            format!("outer:code:{}", n + 1)
        );
        assert_eq!(execution.agent(), Some(&h.agent));
        assert_eq!(execution.parent(), Some(&outer_token));
        assert_eq!(execution.token().root_call_id().as_str(), "outer");
    }
}

/// CODE-024: an exclusive sub-call holds its barrier through post-execute:
/// the next call starts only after its commit.
#[tokio::test]
async fn an_exclusive_call_holds_its_barrier_through_post_execute() {
    let events: Events = Arc::default();
    let h = host_with(
        CodeModeConfig::default(),
        vec![writer(Arc::clone(&events)), echo()],
        true,
    );
    let sink = Arc::clone(&events);
    let _post = h.hooks().post_execute().tap(
        "commit",
        move |record: tack_core::hooks::ExecutionRecord, next| {
            let sink = Arc::clone(&sink);
            async move {
                let name = record.execution.as_ref().map(|e| e.name().to_owned());
                if name.as_deref() == Some("write") {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    sink.lock().unwrap().push("committed write".to_owned());
                }
                next.run(record).await
            }
        },
    );
    let probe = Arc::clone(&events);
    let _pre = h.hooks().pre_execute().tap(
        "probe",
        move |execution: Arc<tack_core::tool::ToolExecution>, next| {
            let probe = Arc::clone(&probe);
            async move {
                if execution.name() == "echo" {
                    probe.lock().unwrap().push("admit echo".to_owned());
                }
                next.run(execution).await
            }
        },
    );
    let out = h
        .run("await Promise.all([tools.write({}), tools.echo({text: 'x'})]);")
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(
        *events.lock().unwrap(),
        ["start write", "end write", "committed write", "admit echo"]
    );
}

/// CODE-027 (tack's terms): a run with no owning agent dispatches normally,
/// and its events reach global `tools/code-dispatch` listeners (whether they
/// are logged is the host's choice).
#[tokio::test]
async fn a_run_without_an_agent_dispatches_and_reports() {
    let h = host();
    h.set_presentation(None, Presentation::Code);
    let call = Call::new(
        "run_code",
        json!({"code": "return (await tools.echo({text: 'x'})).text;"}),
    )
    .id("outer");
    let out = h.call(call).await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.text(), "x");
    assert_eq!(
        h.log_lines(),
        ["start outer:code:1", "settle outer:code:1 ok"]
    );
}

/// CODE-029: logs first, then the value; non-string JSON pretty with capped
/// indentation; `null` explicit.
#[tokio::test]
async fn results_render_as_logs_then_pretty_json_with_capped_indentation() {
    let h = host();
    let out = h.run("console.log('a'); return null;").await;
    assert_eq!(out.text(), "a\nnull");
    let out = h.run("return {a: {b: {c: {d: {e: {f: {g: 1}}}}}}};").await;
    let rendered = out.text();
    let widest = rendered
        .lines()
        .map(|l| l.len() - l.trim_start().len())
        .max()
        .unwrap();
    assert_eq!(widest, tack_code_mode::MAX_INDENT, "{rendered}");
    assert_eq!(
        serde_json::from_str::<Value>(&rendered).unwrap(),
        out.value().unwrap()["result"]
    );
    assert_eq!(
        *out.value().unwrap(),
        json!({"logs": [], "result": {"a": {"b": {"c": {"d": {"e": {"f": {"g": 1}}}}}}}})
    );
}

/// CODE-022: an outer call cancelled mid-run: a later binding call rejects
/// without dispatch and the outer result is CANCELLED after dispatch.
#[tokio::test]
async fn a_binding_call_after_cancellation_is_not_dispatched() {
    let events: Events = Arc::default();
    let (h, out) = cancel_once_hanging(
        &events,
        vec![echo()],
        "try { await tools.hang({}); } catch (e) {} await tools.echo({text: 'late'}); return 1;",
    )
    .await;
    assert_eq!(out.error_code(), Some(ErrorCode::Cancelled), "{out:?}");
    let lines = h.log_lines();
    assert!(
        lines.iter().all(|l| !l.contains("outer:code:2")),
        "the late echo was never dispatched: {lines:?}"
    );
}

/// docs/code-mode.md shows the SDK generated for the builtin tools: it must
/// be exactly what `sdk_text` produces today (regenerate it with
/// `cargo run -p tack-code-mode --example sdk`).
#[test]
fn the_documented_sdk_is_current() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../docs/code-mode.md"
    ))
    .unwrap();
    let start = doc.find("```ts\n").expect("a ts block") + "```ts\n".len();
    let end = start + doc[start..].find("```").unwrap();
    let tools = tack_tools::builtin_tools().unwrap();
    assert_eq!(
        &doc[start..end],
        sdk_text(&tools),
        "docs/code-mode.md is stale: paste the output of `cargo run -p tack-code-mode --example sdk`"
    );
}

/// Finishes the turn: asks to conclude it, then succeeds (or fails on
/// `{"fail": true}`).
fn finisher() -> FakeTool {
    tool("finish", "Concludes the turn.")
        .schema(json!({"type": "object", "properties": {"fail": {"type": "boolean"}}}))
        .output_schema(json!({"type": "string"}))
        .body(|args, cx| async move {
            cx.conclude_turn();
            if args.get("fail").is_some() {
                return Err(ToolError::new("could not finish"));
            }
            Ok(json!("finished"))
        })
}

/// A sub-call that concludes the turn (and succeeds) concludes it for
/// `run_code` too — but only if `run_code` itself succeeds.
#[tokio::test]
async fn a_concluding_sub_call_concludes_the_run() {
    let h = host_with(
        CodeModeConfig::default(),
        vec![finisher(), echo(), failing()],
        false,
    );
    let cases = [
        ("await tools.finish({}); return 1;", true, true),
        // Not awaited by the program, but settled (serial: before the echo
        // it awaits) and successful.
        (
            "tools.finish({}); await tools.echo({text: 'x'}); return 1;",
            true,
            true,
        ),
        // No concluding call.
        ("await tools.echo({text: 'x'}); return 1;", true, false),
        // The concluding call failed: it concluded nothing.
        (
            "try { await tools.finish({fail: true}); } catch (e) {} return 1;",
            true,
            false,
        ),
        // The run failed after the concluding call.
        (
            "await tools.finish({}); throw new Error('later');",
            false,
            false,
        ),
        // A failed sub-call after the concluding one, caught: the run succeeds.
        (
            "await tools.finish({}); try { await tools.fail({}); } catch (e) {} return 1;",
            true,
            true,
        ),
    ];
    for (program, succeeds, concludes) in cases {
        let out = h.run(program).await;
        assert_eq!(out.is_success(), succeeds, "{program}: {out:?}");
        assert_eq!(
            out.outcome().concluded_turn,
            concludes,
            "{program}: {out:?}"
        );
    }
}

/// A post-execute listener that fails `run_code` after its body asked to
/// conclude: the pipeline's rule holds, nothing is concluded.
#[tokio::test]
async fn a_run_failed_by_post_execute_concludes_nothing() {
    let h = host_with(CodeModeConfig::default(), vec![finisher()], false);
    let _block = h.hooks().post_execute().tap(
        "block-run-code",
        |record: tack_core::hooks::ExecutionRecord, next| {
            let outer = record.outcome.tool == "run_code";
            async move {
                let decision = next.run(record).await;
                if outer {
                    decision.block("the run was refused afterwards")
                } else {
                    decision
                }
            }
        },
    );
    let out = h.run("await tools.finish({}); return 1;").await;
    assert!(!out.is_success(), "{out:?}");
    assert!(!out.outcome().concluded_turn, "{out:?}");
}

/// Records `enter <what> <id>` / `exit <what> <id>` around each policy step of
/// the sub-calls, sleeping inside so that overlapping steps would interleave.
#[derive(Clone, Default)]
struct PolicyLog(Events);

impl PolicyLog {
    async fn step(&self, what: &str, id: &str) {
        self.0.lock().unwrap().push(format!("enter {what} {id}"));
        tokio::time::sleep(Duration::from_millis(15)).await;
        self.0.lock().unwrap().push(format!("exit {what} {id}"));
    }

    fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

struct SlowApprover(PolicyLog);

#[tack_core::async_trait]
impl tack_core::policy::ApprovalService for SlowApprover {
    async fn request(
        &self,
        request: tack_core::policy::ApprovalRequest,
        _cancel: CancellationToken,
    ) -> tack_core::policy::ApprovalOutcome {
        self.0.step("approval", request.call_id.as_str()).await;
        tack_core::policy::ApprovalOutcome::AllowedOnce
    }
}

/// Parallel sub-calls are admitted one at a time, in submission order:
/// pre-execute and approval never overlap (prompts never interleave), while
/// the bodies still run together.
#[tokio::test]
async fn parallel_sub_calls_are_admitted_one_at_a_time_in_submission_order() {
    const CALLS: usize = 4;
    let events: Events = Arc::default();
    // The bodies wait for each other: they must overlap to finish at all.
    let barrier = Arc::new(Barrier::new(CALLS));
    let h = host_with(
        CodeModeConfig::default(),
        vec![reader(Arc::clone(&events), barrier)],
        true,
    );
    let policy = PolicyLog::default();
    let _approver = h
        .capabilities()
        .provide_approval(Arc::new(SlowApprover(policy.clone())));
    let pre = policy.clone();
    let _pre = h.hooks().pre_execute().tap(
        "slow-policy",
        move |execution: Arc<tack_core::tool::ToolExecution>, next| {
            let pre = pre.clone();
            async move {
                let id = execution.call_id().as_str().to_owned();
                if !id.contains(":code:") {
                    return next.run(execution).await; // the run itself
                }
                pre.step("pre-execute", &id).await;
                tack_core::policy::PreDecision::ask("reads need a human")
            }
        },
    );
    let run = h.run("return await Promise.all([1, 2, 3, 4].map(i => tools.read({i})));");
    let out = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("the bodies overlapped (the barrier let them finish)");
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.value().unwrap()["result"], json!([1, 2, 3, 4]));
    let expected: Vec<String> = (1..=CALLS)
        .flat_map(|n| {
            let id = format!("outer:code:{n}");
            [
                format!("enter pre-execute {id}"),
                format!("exit pre-execute {id}"),
                format!("enter approval {id}"),
                format!("exit approval {id}"),
            ]
        })
        .collect();
    assert_eq!(policy.entries(), expected);
    let events = events.lock().unwrap().clone();
    let first_end = events.iter().position(|e| e.starts_with("end")).unwrap();
    assert_eq!(
        first_end, CALLS,
        "every body started before one ended: {events:?}"
    );
}

/// Admission order holds for refusals too: a denied sub-call ends its
/// admission, and the next one is admitted after it.
#[tokio::test]
async fn a_denied_sub_call_ends_its_admission_and_the_next_follows() {
    let h = host_with(CodeModeConfig::default(), vec![echo()], true);
    let policy = PolicyLog::default();
    let pre = policy.clone();
    let _pre = h.hooks().pre_execute().tap(
        "deny-second",
        move |execution: Arc<tack_core::tool::ToolExecution>, next| {
            let pre = pre.clone();
            async move {
                let id = execution.call_id().as_str().to_owned();
                if !id.contains(":code:") {
                    return next.run(execution).await;
                }
                pre.step("pre-execute", &id).await;
                if id.ends_with(":2") {
                    tack_core::policy::PreDecision::deny("not this one")
                } else {
                    next.run(execution).await
                }
            }
        },
    );
    let out = h
        .run(
            "const r = await Promise.allSettled([1, 2, 3].map(i => tools.echo({text: String(i)})));\n\
             return r.map(x => x.status);",
        )
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(
        out.value().unwrap()["result"],
        json!(["fulfilled", "rejected", "fulfilled"])
    );
    assert_eq!(
        policy.entries(),
        [
            "enter pre-execute outer:code:1",
            "exit pre-execute outer:code:1",
            "enter pre-execute outer:code:2",
            "exit pre-execute outer:code:2",
            "enter pre-execute outer:code:3",
            "exit pre-execute outer:code:3",
        ]
    );
}

// ------------------------------------------------ argument depth and bounds

/// Arguments nested deeper than any host accepts get the depth message at
/// every depth — not a stack overflow reported as lossy JSON — and nothing
/// is called.
#[tokio::test]
async fn deeply_nested_arguments_get_the_depth_message_at_any_depth() {
    let h = host();
    for levels in [100, 1_000, 5_000] {
        let out = h
            .run(&format!(
                "let v = {{}}; for (let i = 0; i < {levels}; i++) v = {{a: v}};\n\
                 try {{ await tools.echo(v); return 'called'; }} catch (e) {{ return [e.code, e.message]; }}"
            ))
            .await;
        let result = &out.value().unwrap()["result"];
        assert_eq!(result[0], json!("INVALID_ARGUMENTS"), "{levels}: {result}");
        let message = result[1].as_str().unwrap();
        assert!(
            message.contains("the arguments are nested")
                && message.contains("levels deep")
                && message.contains("flatten them"),
            "{levels}: {message}"
        );
        assert!(!message.contains("call stack"), "{levels}: {message}");
    }
    // A cycle is still reported as such.
    let out = h
        .run("const v = {}; v.self = v; try { await tools.echo(v); } catch (e) { return e.message; }")
        .await;
    let message = out.value().unwrap()["result"].as_str().unwrap().to_owned();
    assert!(message.contains("lossless JSON"), "{message}");
    assert!(!message.contains("levels deep"), "{message}");
}

fn never_settles() -> FakeTool {
    tool("hang", "Never finishes on its own.")
        .schema(json!({"type": "object", "properties": {"pad": {"type": "string"}}}))
        .body(|_args, cx| async move {
            cx.cancellation().cancelled().await;
            Err::<Value, _>(ToolError::cancelled("cancelled"))
        })
}

/// A program may have only so many sub-calls outstanding: one more waits
/// for an earlier one to settle, and fails clearly (nothing called) when
/// none does in time.
#[tokio::test]
async fn outstanding_sub_calls_are_bounded_in_number_and_bytes() {
    let config = CodeModeConfig::default()
        .max_outstanding_sub_calls(2)
        .outstanding_wait(Duration::from_millis(200));
    let h = host_with(config, vec![echo(), never_settles()], false);
    let out = h
        .run(
            "tools.hang({}); tools.hang({});\n\
             try { await tools.echo({text: 'x'}); return 'called'; } catch (e) { return [e.code, e.message]; }",
        )
        .await;
    let result = &out.value().unwrap()["result"];
    assert_eq!(result[0], json!("CODE_RUN_FAILED"), "{result}");
    let message = result[1].as_str().unwrap();
    assert!(
        message.contains("too many tool calls outstanding") && message.contains("2 calls"),
        "{message}"
    );
    assert!(message.contains("nothing was called"), "{message}");
    assert!(
        !h.log_lines().iter().any(|l| l.contains("echo")),
        "echo never started: {:?}",
        h.settled()
    );

    // Bytes: a second call that would take the outstanding arguments over
    // the limit waits, then fails; a first call alone may be over it.
    let config = CodeModeConfig::default()
        .max_outstanding_bytes(1_000)
        .outstanding_wait(Duration::from_millis(200));
    let h = host_with(config, vec![echo(), never_settles()], false);
    let out = h
        .run(
            "const pad = 'x'.repeat(1200);\n\
             tools.hang({pad});\n\
             try { await tools.hang({pad}); return 'called'; } catch (e) { return [e.code, e.message]; }",
        )
        .await;
    let result = &out.value().unwrap()["result"];
    assert_eq!(result[0], json!("CODE_RUN_FAILED"), "{result}");
    assert!(
        result[1].as_str().unwrap().contains("1000 bytes"),
        "{result}"
    );
}

/// Under the bound a program's un-awaited calls wait their turn instead of
/// failing: every one of them runs.
#[tokio::test]
async fn calls_over_the_outstanding_bound_wait_and_all_run() {
    let config = CodeModeConfig::default().max_outstanding_sub_calls(2);
    let h = host_with(config, vec![echo()], false);
    let out = h
        .run(
            "const all = []; for (let i = 0; i < 20; i++) all.push(tools.echo({text: String(i)}));\n\
             const got = await Promise.all(all); return got.map(r => r.text).join(',');",
        )
        .await;
    let expected: Vec<String> = (0..20).map(|i| i.to_string()).collect();
    assert_eq!(
        out.value().unwrap()["result"],
        json!(expected.join(",")),
        "{out:?}"
    );
    // Never more than two started and unsettled at once.
    let mut open = 0i32;
    for line in h.log_lines() {
        open += if line.starts_with("start") { 1 } else { -1 };
        assert!(open <= 2, "{:?}", h.log_lines());
    }
}

#[test]
fn a_zero_outstanding_bound_is_refused_at_install() {
    let error = Harness::builder()
        .install(CodeMode::new(
            CodeModeConfig::default().max_outstanding_sub_calls(0),
        ))
        .err()
        .unwrap();
    assert!(
        error.to_string().contains("max_outstanding_sub_calls"),
        "{error}"
    );
}
