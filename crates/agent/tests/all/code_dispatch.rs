//! Code mode seen from the agent: `run_code` sub-calls as log events (never
//! history), images deferred as context, their wire and log forms, rendering.

use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tack_agent::{
    Agent, ChatModel, Event, EventBus, Message, OpenAiCompatible, OpenAiConfig, Record, Renderer,
    Reply, RunEnd, ScriptedModel, SessionLog, Style, read_log,
};
use tack_code_mode::{CodeModeConfig, run_code_definition};
use tack_core::hook::Disposer;
use tack_core::host::{NewOutcome, NewToolError};
use tack_core::tool::{
    CallId, ContentBlock, DeferredContext, ErrorCode, Outcome, OutputSpec, ToolCall,
    ToolDefinition, ToolError,
};
use tack_pipeline::{Pipeline, Presentation, ToolRegistry};

use super::http_server::{Answer, Server, completion, serve, serve_in_turn};

const PNG: &str = "iVBORw0KGgo=";

fn echo() -> ToolDefinition {
    ToolDefinition::builder("echo")
        .description("Echo the arguments.")
        .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
        .output(OutputSpec::new(json!({"type": "object"})))
        .concurrency_safe(|_| true)
        .handler(|args: Arc<Value>, _cx| async move { Ok((*args).clone()) })
        .build()
        .unwrap()
}

/// Returns `{"saved": true}`, rendered as a caption and a PNG.
fn screenshot() -> ToolDefinition {
    ToolDefinition::builder("screenshot")
        .description("Takes a screenshot.")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({"type": "object"})).render(|_, _| {
            vec![
                ContentBlock::text("shot"),
                ContentBlock::image(PNG, "image/png"),
            ]
        }))
        .handler(|_args: Arc<Value>, _cx| async move { Ok(json!({"saved": true})) })
        .build()
        .unwrap()
}

fn failing() -> ToolDefinition {
    ToolDefinition::builder("fail")
        .description("Always fails.")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({})))
        .handler(|_args: Arc<Value>, _cx| async move { Err::<Value, _>(ToolError::new("boom")) })
        .build()
        .unwrap()
}

/// A pipeline over a registry presenting tools as code: `run_code` plus
/// native tools its programs call.
fn code_registry() -> (Pipeline, Vec<Disposer>) {
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let mut keep = Vec::new();
    for tool in [echo(), screenshot(), failing()] {
        keep.push(registry.register(tool).unwrap());
    }
    let definition =
        run_code_definition(CodeModeConfig::default(), pipeline.hooks().clone()).unwrap();
    keep.push(registry.register_code_transport(definition).unwrap());
    registry.set_presentation(None, Presentation::Code);
    (pipeline, keep)
}

/// A script: one `run_code` call (id `c1`) running `code`, then "done".
fn run_code_script(code: &str) -> ScriptedModel {
    let script = json!({"turns": [
        {"tool_calls": [{"id": "c1", "name": "run_code", "arguments": json!({"code": code}).to_string()}]},
        {"text": "done"}
    ]});
    ScriptedModel::parse(&script.to_string()).unwrap()
}

fn recording_bus(log: Option<Arc<SessionLog>>) -> (Arc<EventBus>, Arc<Mutex<Vec<Event>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let bus = EventBus::new(log).with_observer(move |r| sink.lock().push(r.event.clone()));
    (Arc::new(bus), seen)
}

/// Runs `model` over `registry` for one turn ("go"); the agent and the
/// `tool/code-dispatch` events it logged.
async fn run_and_collect_settles(model: ScriptedModel, registry: Pipeline) -> (Agent, Vec<Event>) {
    let (bus, seen) = recording_bus(None);
    let mut agent = Agent::builder(Arc::new(model), registry)
        .events(bus)
        .build();
    agent.run("go").await.unwrap();
    let settled = seen
        .lock()
        .iter()
        .filter(|e| matches!(e, Event::CodeDispatch { .. }))
        .cloned()
        .collect();
    (agent, settled)
}

fn rec(seq: u64, event: Event) -> Record {
    Record::new(seq, 0, event)
}

fn has_image(content: &[ContentBlock]) -> bool {
    content
        .iter()
        .any(|b| matches!(b, ContentBlock::Image { .. }))
}

// ---------------------------------------------------------------- the loop

#[tokio::test]
async fn sub_calls_are_logged_live_before_the_result_and_never_enter_the_history() {
    let (registry, _keep) = code_registry();
    let model = run_code_script(
        "const a = await tools.echo({text: 'one'});\n\
         const b = await tools.echo({text: 'two'});\n\
         return a.text + ' ' + b.text;",
    );
    let (bus, seen) = recording_bus(None);
    let mut agent = Agent::builder(Arc::new(model), registry)
        .events(bus)
        .build();
    assert_eq!(
        agent.run("go").await.unwrap(),
        RunEnd::Answered("done".into())
    );

    let events = seen.lock().clone();
    let kinds: Vec<&str> = events.iter().map(Event::kind).collect();
    assert_eq!(
        kinds,
        [
            "user",
            "tool/call",
            "tool/code-dispatch-start",
            "tool/code-dispatch",
            "tool/code-dispatch-start",
            "tool/code-dispatch",
            "tool/result",
            "assistant",
            "turn/end"
        ]
    );
    // Each sub-call: exactly one start, then exactly one settle, both before
    // the run_code result.
    let result_at = events
        .iter()
        .position(
            |e| matches!(e, Event::ToolResult { outcome, .. } if outcome.call_id.as_str() == "c1"),
        )
        .unwrap();
    for id in ["c1:code:1", "c1:code:2"] {
        let starts: Vec<usize> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, Event::CodeDispatchStart { call_id, .. } if call_id == id))
            .map(|(i, _)| i)
            .collect();
        let settles: Vec<usize> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, Event::CodeDispatch { call_id, .. } if call_id == id))
            .map(|(i, _)| i)
            .collect();
        assert_eq!((starts.len(), settles.len()), (1, 1), "{id}: {events:#?}");
        assert!(starts[0] < settles[0], "{id} settled before it started");
        assert!(settles[0] < result_at, "{id} logged after the result");
    }
    assert_eq!(
        events[2],
        Event::CodeDispatchStart {
            parent_call_id: "c1".into(),
            call_id: "c1:code:1".into(),
            tool: "echo".into(),
            arguments: r#"{"text":"one"}"#.into(),
        }
    );
    assert_eq!(
        events[5],
        Event::CodeDispatch {
            parent_call_id: "c1".into(),
            call_id: "c1:code:2".into(),
            tool: "echo".into(),
            arguments: r#"{"text":"two"}"#.into(),
            status: "ok".into(),
            code: None,
            content: vec![ContentBlock::text(r#"{"text":"two"}"#)],
        }
    );

    // The history: the call, one result for run_code, the answer.
    let history = agent.history();
    assert_eq!(history.len(), 4, "{history:#?}");
    assert!(matches!(&history[0], Message::User(t) if t == "go"));
    assert!(
        matches!(&history[1], Message::ToolCalls(calls) if calls.len() == 1 && calls[0].call_id.as_str() == "c1" && calls[0].name == "run_code"),
        "{:?}",
        history[1]
    );
    match &history[2] {
        Message::ToolResult {
            call_id,
            tool,
            content,
            is_error,
        } => {
            assert_eq!(
                (call_id.as_str(), tool.as_str(), content.as_str(), *is_error),
                ("c1", "run_code", "one two", false)
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&history[3], Message::Assistant(t) if t == "done"));
}

#[tokio::test]
async fn a_failed_sub_call_is_logged_with_its_code() {
    let (registry, _keep) = code_registry();
    let model = run_code_script("try { await tools.fail({}); } catch (e) { return e.code; }");
    let (agent, settled) = run_and_collect_settles(model, registry).await;
    assert_eq!(settled.len(), 1, "{settled:?}");
    let Event::CodeDispatch {
        call_id,
        status,
        code,
        content,
        ..
    } = &settled[0]
    else {
        unreachable!()
    };
    assert_eq!(
        (call_id.as_str(), status.as_str(), code.as_deref()),
        ("c1:code:1", "error", Some("EXECUTION_FAILED"))
    );
    assert!(
        tack_core::tool::Content::from(content.clone())
            .joined_text()
            .contains("boom"),
        "{content:?}"
    );
    // The program caught it: run_code itself succeeded.
    assert!(
        matches!(&agent.history()[2], Message::ToolResult { content, is_error: false, .. } if content == "EXECUTION_FAILED")
    );
}

#[tokio::test]
async fn the_agent_stops_logging_sub_calls_when_dropped() {
    let (registry, _keep) = code_registry();
    let (bus, seen) = recording_bus(None);
    let agent = Agent::builder(Arc::new(run_code_script("return 1;")), registry.clone())
        .events(bus)
        .build();
    drop(agent);
    // The hook still fires (a control listener counts it), but no agent listens.
    let fired = Arc::new(Mutex::new(0_usize));
    let count = fired.clone();
    let _control = registry.hooks().code_dispatch().tap(
        "control",
        move |_: &Arc<tack_core::hooks::CodeDispatchEvent>| *count.lock() += 1,
    );
    // A run_code call made directly on the registry after the agent is gone.
    let out = registry
        .execute(
            ToolCall::new(
                "d",
                "run_code",
                json!({"code": "await tools.echo({}); return 1;"}).to_string(),
            ),
            tokio_util::sync::CancellationToken::new(),
        )
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(*fired.lock(), 2, "one start and one settle");
    assert!(seen.lock().is_empty(), "{:?}", seen.lock());
}

#[tokio::test]
async fn an_image_from_a_sub_call_is_deferred_as_context_after_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let (registry, _keep) = code_registry();
    let model = run_code_script("const r = await tools.screenshot({}); return r;");
    let (bus, seen) = recording_bus(Some(Arc::new(SessionLog::create(&path).unwrap())));
    let mut agent = Agent::builder(Arc::new(model), registry.clone())
        .events(bus)
        .build();
    assert_eq!(
        agent.run("go").await.unwrap(),
        RunEnd::Answered("done".into())
    );
    let expected = DeferredContext::blocks(vec![
        ContentBlock::text("shot"),
        ContentBlock::image(PNG, "image/png"),
    ])
    .with_source("code-mode");

    // History: result, then the image context, then the answer.
    let history = agent.history();
    assert_eq!(history.len(), 5, "{history:#?}");
    match &history[2] {
        Message::ToolResult {
            call_id,
            content,
            is_error,
            ..
        } => {
            assert_eq!(call_id, "c1");
            assert!(!is_error);
            assert_eq!(content, "{\n  \"saved\": true\n}");
            assert!(!content.contains(PNG), "{content}");
        }
        other => panic!("{other:?}"),
    }
    match &history[3] {
        Message::Context(context) => {
            assert_eq!(context, &expected);
            assert!(context.has_images());
            assert_eq!(context.source(), Some("code-mode"));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&history[4], Message::Assistant(t) if t == "done"));

    // Events: the result carries no image; the context event does.
    let events = seen.lock().clone();
    let kinds: Vec<&str> = events.iter().map(Event::kind).collect();
    assert_eq!(
        kinds,
        [
            "user",
            "tool/call",
            "tool/code-dispatch-start",
            "tool/code-dispatch",
            "tool/result",
            "context/deferred",
            "assistant",
            "turn/end"
        ]
    );
    let Event::ToolResult { outcome, .. } = &events[4] else {
        unreachable!()
    };
    assert!(!has_image(&outcome.content), "{:?}", outcome.content);
    assert!(
        !serde_json::to_string(&outcome.content)
            .unwrap()
            .contains(PNG),
        "{:?}",
        outcome.content
    );
    assert_eq!(
        events[5],
        Event::ContextDeferred {
            call_id: "c1".into(),
            index: 0,
            context: expected.clone(),
        }
    );
    // The log record of the sub-call keeps its complete content.
    let Event::CodeDispatch { content, .. } = &events[3] else {
        unreachable!()
    };
    assert_eq!(
        content,
        &vec![
            ContentBlock::text("shot"),
            ContentBlock::image(PNG, "image/png")
        ]
    );

    // The file holds the same events, and a replay renders them.
    let read = read_log(&path).unwrap();
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    let logged: Vec<Event> = read.records.iter().map(|r| r.event.clone()).collect();
    assert_eq!(logged, events);
    let mut renderer = Renderer::new(registry.registry().clone(), Style::Plain);
    let lines: Vec<String> = read
        .records
        .iter()
        .filter_map(|r| renderer.render(r))
        .collect();
    assert_eq!(
        lines,
        [
            "[user] go",
            "[tool:run_code] -> ok\n  ↳ [tool:screenshot] c1:code:1 -> ok",
            "[context] shot (1 image) — from code-mode",
            "[assistant] done",
        ]
    );
}

#[tokio::test]
async fn an_image_on_a_failed_sub_call_is_logged_but_not_deferred() {
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let mut keep = Vec::new();
    // Fails; its finalizer still puts an image on the failed outcome.
    let broken = ToolDefinition::builder("broken_shot")
        .description("Fails, with a picture of the failure.")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({})))
        .finalize_content(|_| {
            Some(vec![
                ContentBlock::text("no display"),
                ContentBlock::image(PNG, "image/png"),
            ])
        })
        .handler(
            |_args: Arc<Value>, _cx| async move { Err::<Value, _>(ToolError::new("no display")) },
        )
        .build()
        .unwrap();
    keep.push(registry.register(broken).unwrap());
    let definition =
        run_code_definition(CodeModeConfig::default(), pipeline.hooks().clone()).unwrap();
    keep.push(registry.register_code_transport(definition).unwrap());
    registry.set_presentation(None, Presentation::Code);
    let model =
        run_code_script("try { await tools.broken_shot({}); } catch (e) { return e.code; }");
    let (agent, settled) = run_and_collect_settles(model, pipeline).await;
    assert_eq!(
        settled,
        [Event::CodeDispatch {
            parent_call_id: "c1".into(),
            call_id: "c1:code:1".into(),
            tool: "broken_shot".into(),
            arguments: "{}".into(),
            status: "error".into(),
            code: Some("EXECUTION_FAILED".into()),
            content: vec![
                ContentBlock::text("no display"),
                ContentBlock::image(PNG, "image/png"),
            ],
        }]
    );
    assert!(
        !agent
            .history()
            .iter()
            .any(|m| matches!(m, Message::Context(_))),
        "no context (nor its context/deferred event, emitted with it): {:#?}",
        agent.history()
    );
}

// ---------------------------------------------------------------- the wire

fn client(server: &Server) -> OpenAiCompatible {
    OpenAiCompatible::new(OpenAiConfig::new(&server.url, "sk-test", "test-model")).unwrap()
}

#[tokio::test]
async fn contexts_go_to_the_wire_as_system_text_or_user_image_parts() {
    let server = serve(Answer::Http(
        200,
        completion(json!({"role": "assistant", "content": "ok"})),
    ))
    .await;
    let history = vec![
        Message::System("be brief".into()),
        Message::User("look".into()),
        Message::ToolCalls(vec![ToolCall::new("c1", "run_code", "{\"code\":\"1\"}")]),
        Message::ToolResult {
            call_id: "c1".into(),
            tool: "run_code".into(),
            content: "1".into(),
            is_error: false,
        },
        Message::Context(DeferredContext::from("the tests are slow")),
        Message::Context(
            DeferredContext::blocks(vec![
                ContentBlock::text("shot"),
                ContentBlock::image(PNG, "image/png"),
            ])
            .with_source("code-mode"),
        ),
        Message::Context(DeferredContext::from("a note").with_source("memo")),
    ];
    let reply = client(&server).complete(&history, &[]).await.unwrap();
    assert!(matches!(reply, Reply::Text(t) if t == "ok"));
    let sent = server.requests.lock()[0].clone();
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 7, "{sent}");
    assert_eq!(
        messages[4],
        json!({"role": "system", "content": "the tests are slow"})
    );
    assert_eq!(
        messages[5],
        json!({"role": "user", "content": [
            {"type": "text", "text": "shot"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
        ]})
    );
    assert_eq!(messages[6], json!({"role": "system", "content": "a note"}));
}

#[tokio::test]
async fn an_image_a_program_fetched_reaches_the_next_model_request() {
    let arguments = json!({"code": "await tools.screenshot({}); return 'taken';"}).to_string();
    let server = serve_in_turn(vec![
        Answer::Http(200, completion(json!({
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "run_code", "arguments": arguments}}]
        }))),
        Answer::Http(200, completion(json!({"role": "assistant", "content": "I see it."}))),
    ])
    .await;
    let (registry, _keep) = code_registry();
    let mut agent = Agent::builder(Arc::new(client(&server)), registry)
        .system_prompt("sys")
        .build();
    assert_eq!(
        agent.run("take a screenshot").await.unwrap(),
        RunEnd::Answered("I see it.".into())
    );
    let requests = server.requests.lock().clone();
    assert_eq!(requests.len(), 2);
    // Only run_code is offered in code presentation.
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["run_code"]);
    let messages = requests[1]["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "taken"})
    );
    assert_eq!(
        messages[4],
        json!({"role": "user", "content": [
            {"type": "text", "text": "shot"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
        ]})
    );
}

// ---------------------------------------------------------------- the log

fn new_events() -> Vec<Event> {
    vec![
        Event::CodeDispatchStart {
            parent_call_id: "c1".into(),
            call_id: "c1:code:1".into(),
            tool: "echo".into(),
            arguments: r#"{"text":"读"}"#.into(),
        },
        Event::CodeDispatch {
            parent_call_id: "c1".into(),
            call_id: "c1:code:1".into(),
            tool: "echo".into(),
            arguments: r#"{"text":"读"}"#.into(),
            status: "ok".into(),
            code: None,
            content: vec![
                ContentBlock::text("shot"),
                ContentBlock::image(PNG, "image/png"),
            ],
        },
        Event::CodeDispatch {
            parent_call_id: "c1".into(),
            call_id: "c1:code:2".into(),
            tool: "fail".into(),
            arguments: "{}".into(),
            status: "error".into(),
            code: Some("EXECUTION_FAILED".into()),
            content: vec![ContentBlock::text("EXECUTION_FAILED: boom")],
        },
        Event::ContextDeferred {
            call_id: "c1".into(),
            index: 0,
            context: DeferredContext::blocks(vec![
                ContentBlock::text("shot"),
                ContentBlock::image(PNG, "image/png"),
            ])
            .with_source("code-mode"),
        },
        Event::ContextDeferred {
            call_id: "c2".into(),
            index: 0,
            context: "plain".into(),
        },
        Event::ContextDeferred {
            call_id: "c3".into(),
            index: 0,
            context: DeferredContext::from("sourced").with_source("memo"),
        },
    ]
}

#[test]
fn the_new_events_round_trip_through_a_session_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let bus = EventBus::new(Some(Arc::new(SessionLog::create(&path).unwrap())));
    for event in new_events() {
        bus.emit(event).unwrap();
    }
    drop(bus);
    let read = read_log(&path).unwrap();
    // No `turn/end` closes these records: the only warning says so.
    assert_eq!(read.warnings.len(), 1, "{:?}", read.warnings);
    assert!(read.warnings[0].contains("turn/end"), "{:?}", read.warnings);
    let got: Vec<Event> = read.records.iter().map(|r| r.event.clone()).collect();
    assert_eq!(got, new_events());

    // The wire shapes.
    let lines: Vec<Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0]["type"], "tool/code-dispatch-start");
    assert_eq!(lines[0]["parent_call_id"], "c1");
    assert_eq!(lines[1]["type"], "tool/code-dispatch");
    assert_eq!(lines[1]["status"], "ok");
    assert!(lines[1].get("code").is_none(), "{}", lines[1]);
    assert_eq!(lines[1]["content"][1]["type"], "image");
    assert_eq!(lines[2]["code"], "EXECUTION_FAILED");
    assert_eq!(lines[3]["type"], "context/deferred");
    assert_eq!(lines[3]["context"]["source"], "code-mode");
    assert_eq!(lines[3]["context"]["content"][1]["data"], PNG);
    assert_eq!(lines[4]["context"], "plain");
    assert_eq!(
        lines[5]["context"],
        json!({"content": [{"type": "text", "text": "sourced"}], "source": "memo"})
    );
}

#[test]
fn an_old_text_context_line_still_parses() {
    let line = r#"{"seq":1,"ts":0,"type":"context/deferred","call_id":"c1","text":"hello"}"#;
    let record = Record::from_json_line(line).unwrap();
    assert_eq!(record.seq, 1);
    let Event::ContextDeferred {
        call_id, context, ..
    } = &record.event
    else {
        panic!("{:?}", record.event)
    };
    assert_eq!(call_id, "c1");
    assert_eq!(context.text(), "hello");
    assert_eq!(context, &DeferredContext::from("hello"));
    assert_eq!(context.source(), None);

    // The log reader parses such lines, but a log written before the hash
    // chain cannot be verified: it is refused, line by line, not replayed.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.jsonl");
    std::fs::write(
        &path,
        format!(
            "{line}\n{}\n",
            r#"{"seq":2,"ts":0,"type":"turn/end","reason":"answered","steps":1}"#
        ),
    )
    .unwrap();
    let tack_agent::LogReadError::Invalid { breaks, .. } = read_log(&path).unwrap_err() else {
        panic!("not an integrity error")
    };
    assert_eq!(breaks.iter().map(|b| b.line).collect::<Vec<_>>(), [1, 2]);
    assert!(breaks[0].reason.contains("hash"), "{:?}", breaks[0]);
    // Re-serialized, it takes the new field name.
    assert_eq!(
        rec(1, record.event).to_json(),
        json!({"seq": 1, "ts": 0, "type": "context/deferred", "call_id": "c1", "index": 0, "context": "hello"})
    );
}

// ---------------------------------------------------------------- rendering

#[test]
fn sub_calls_render_under_their_parent_result() {
    let mut r = Renderer::new(ToolRegistry::new(), Style::Plain);
    let events = [
        Event::ToolCall {
            call_id: "c1".into(),
            tool: "run_code".into(),
            arguments: json!({"code": "..."}).to_string(),
            index: 0,
        },
        Event::CodeDispatchStart {
            parent_call_id: "c1".into(),
            call_id: "c1:code:1".into(),
            tool: "echo".into(),
            arguments: "{}".into(),
        },
        Event::CodeDispatch {
            parent_call_id: "c1".into(),
            call_id: "c1:code:1".into(),
            tool: "echo".into(),
            arguments: "{}".into(),
            status: "ok".into(),
            code: None,
            content: vec![ContentBlock::text("{}")],
        },
        Event::CodeDispatch {
            parent_call_id: "c1".into(),
            call_id: "c1:code:2".into(),
            tool: "fail".into(),
            arguments: "{}".into(),
            status: "error".into(),
            code: Some("EXECUTION_FAILED".into()),
            content: vec![ContentBlock::text("boom")],
        },
    ];
    for (i, event) in events.into_iter().enumerate() {
        assert_eq!(r.render(&rec(i as u64 + 1, event)), None);
    }
    let ok = Outcome::success(
        CallId::from("c1"),
        "run_code",
        json!({"logs": []}),
        vec![ContentBlock::text("(run_code completed with no output)")],
    );
    let result = Event::ToolResult {
        outcome: Arc::new(ok),
        index: 0,
    };
    assert_eq!(
        r.render(&rec(5, result.clone())).as_deref(),
        Some(
            "[tool:run_code] -> ok\n  ↳ [tool:echo] c1:code:1 -> ok\n  ↳ [tool:fail] c1:code:2 -> ERR EXECUTION_FAILED"
        )
    );
    // Shown once: the buffer is drained by the result.
    assert_eq!(
        r.render(&rec(6, result)).as_deref(),
        Some("[tool:run_code] -> ok")
    );
}

#[test]
fn sub_calls_of_another_parent_stay_with_it() {
    let mut r = Renderer::new(ToolRegistry::new(), Style::Plain);
    let nested = Event::CodeDispatch {
        parent_call_id: "p2".into(),
        call_id: "p2:code:1".into(),
        tool: "echo".into(),
        arguments: "{}".into(),
        status: "ok".into(),
        code: None,
        content: vec![],
    };
    assert_eq!(r.render(&rec(1, nested)), None);
    let failed = Outcome::failure(
        CallId::from("p1"),
        "run_code",
        ToolError::from_code(ErrorCode::CodeRunFailed, "run_code failed (exception): x"),
    );
    assert_eq!(
        r.render(&rec(
            2,
            Event::ToolResult {
                outcome: Arc::new(failed),
                index: 0,
            }
        ))
        .as_deref(),
        Some("[tool:run_code] -> ERR CODE_RUN_FAILED: run_code failed (exception): x")
    );
    let ok = Outcome::success(CallId::from("p2"), "run_code", json!({"logs": []}), vec![]);
    assert_eq!(
        r.render(&rec(
            3,
            Event::ToolResult {
                outcome: Arc::new(ok),
                index: 0,
            }
        ))
        .as_deref(),
        Some("[tool:run_code] -> ok\n  ↳ [tool:echo] p2:code:1 -> ok")
    );
}

#[test]
fn contexts_render_with_their_images_and_source() {
    let mut r = Renderer::new(ToolRegistry::new(), Style::Plain);
    let mut context = |context: DeferredContext| {
        r.render(&rec(
            1,
            Event::ContextDeferred {
                call_id: "c1".into(),
                index: 0,
                context,
            },
        ))
        .unwrap()
    };
    assert_eq!(
        context(
            DeferredContext::blocks(vec![
                ContentBlock::text("shot"),
                ContentBlock::image(PNG, "image/png"),
            ])
            .with_source("code-mode")
        ),
        "[context] shot (1 image) — from code-mode"
    );
    assert_eq!(
        context(
            DeferredContext::blocks(vec![
                ContentBlock::image(PNG, "image/png"),
                ContentBlock::image(PNG, "image/png"),
            ])
            .with_source("code-mode")
        ),
        "[context] (2 images) — from code-mode"
    );
    assert_eq!(context(DeferredContext::from("noted")), "[context] noted");
}
