//! The loop: batches, order, deferred context, conclusion, step limit.

use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::json;
use tack_agent::{Agent, Event, EventBus, Message, RunEnd, ScriptedModel};
use tack_core::tool::{OutputSpec, Tier, ToolDefinition};
use tack_pipeline::{Pipeline, ToolRegistry};

/// A pipeline over a registry holding `note`.
pub fn registry() -> Pipeline {
    let registry = ToolRegistry::new();
    let note = ToolDefinition::builder("note")
        .description("Records a note; defers it as context. Use to test the loop.")
        .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
        .output(OutputSpec::new(json!({"type": "string"})))
        .tier(Tier::ReadOnly)
        .concurrency_safe(|_| true)
        .handler(|args, cx| async move {
            let text = args["text"].as_str().unwrap_or_default().to_owned();
            cx.defer_context(format!("noted: {text}"));
            if text == "stop" {
                cx.conclude_turn();
            }
            Ok(json!(text))
        })
        .build()
        .unwrap();
    registry.register(note).unwrap();
    Pipeline::new(registry)
}

fn recording_bus() -> (Arc<EventBus>, Arc<Mutex<Vec<Event>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let bus = EventBus::new(None).with_observer(move |r| sink.lock().push(r.event.clone()));
    (Arc::new(bus), seen)
}

#[tokio::test]
async fn results_in_model_order_then_deferred_context() {
    let script = ScriptedModel::parse(
        r#"{"turns": [
            {"tool_calls": [
                {"id": "a", "name": "note", "arguments": "{\"text\": \"one\"}"},
                {"id": "b", "name": "nope", "arguments": "{}"},
                {"id": "c", "name": "note", "arguments": "{\"text\": \"two\"}"}
            ]},
            {"text": "done"}
        ]}"#,
    )
    .unwrap();
    let (bus, seen) = recording_bus();
    let mut agent = Agent::builder(Arc::new(script), registry())
        .events(bus)
        .build();
    assert_eq!(
        agent.run("go").await.unwrap(),
        RunEnd::Answered("done".into())
    );
    let kinds: Vec<&str> = seen.lock().iter().map(Event::kind).collect();
    assert_eq!(
        kinds,
        [
            "user",
            "tool/call",
            "tool/call",
            "tool/call",
            "tool/result",
            "tool/result",
            "tool/result",
            "context/deferred",
            "context/deferred",
            "assistant",
            "turn/end"
        ]
    );
    let history = agent.history();
    let ids: Vec<&str> = history
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["a", "b", "c"]);
    // The unknown tool is content the model read, not a crash.
    assert!(history.iter().any(|m| matches!(m, Message::ToolResult { call_id, is_error: true, content, .. } if call_id == "b" && content.starts_with("UNKNOWN_TOOL"))));
    assert!(matches!(&history[5], Message::Context(t) if t.text() == "noted: one"));
}

#[tokio::test]
async fn a_tool_can_conclude_the_turn() {
    let script = ScriptedModel::parse(
        r#"{"turns": [{"tool_calls": [{"id": "a", "name": "note", "arguments": "{\"text\": \"stop\"}"}]}]}"#,
    )
    .unwrap();
    let mut agent = Agent::builder(Arc::new(script), registry()).build();
    assert_eq!(agent.run("go").await.unwrap(), RunEnd::Concluded);
}

#[tokio::test]
async fn the_step_limit_stops_the_turn_with_an_event() {
    let call = r#"{"tool_calls": [{"id": "a", "name": "note", "arguments": "{\"text\": \"x\"}"}]}"#;
    let script =
        ScriptedModel::parse(&format!(r#"{{"turns": [{call}, {call}, {call}]}}"#)).unwrap();
    let (bus, seen) = recording_bus();
    let mut agent = Agent::builder(Arc::new(script), registry())
        .events(bus)
        .max_steps(2)
        .build();
    assert_eq!(
        agent.run("go").await.unwrap(),
        RunEnd::StepLimit { steps: 2 }
    );
    assert!(matches!(
        seen.lock().last(),
        Some(Event::TurnEnd {
            reason: tack_agent::TurnEndReason::MaxSteps,
            steps: 2
        })
    ));
}

#[tokio::test]
async fn an_exhausted_script_is_a_model_error() {
    let script = ScriptedModel::parse(r#"{"turns": []}"#).unwrap();
    let mut agent = Agent::builder(Arc::new(script), registry()).build();
    let err = agent.run("go").await.unwrap_err();
    assert!(err.to_string().contains("no turn left"), "{err}");
}

/// A model that never answers (a hung endpoint).
struct Silent;

#[async_trait::async_trait]
impl tack_agent::ChatModel for Silent {
    fn name(&self) -> String {
        "silent".into()
    }

    async fn complete(
        &self,
        _messages: &[Message],
        _tools: &[tack_core::host::ToolSchema],
    ) -> Result<tack_agent::Reply, tack_agent::ModelError> {
        std::future::pending().await
    }
}

/// Cancels `cancel` 20 ms from now.
async fn cancel_soon(cancel: &tokio_util::sync::CancellationToken) {
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    cancel.cancel();
}

#[tokio::test]
async fn cancelling_while_the_model_thinks_ends_the_turn_cancelled() {
    let (bus, seen) = recording_bus();
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut agent = Agent::builder(Arc::new(Silent), registry())
        .events(bus)
        .cancel(cancel.clone())
        .build();
    let (end, ()) = tokio::join!(agent.run("go"), cancel_soon(&cancel));
    assert_eq!(end.unwrap(), RunEnd::Cancelled);
    assert_eq!(agent.history().len(), 1, "only the prompt");
    assert_eq!(
        seen.lock().last(),
        Some(&Event::TurnEnd {
            reason: tack_agent::TurnEndReason::Cancelled,
            steps: 1,
        })
    );
}

#[tokio::test]
async fn a_cancelled_batch_commits_its_results_and_asks_the_model_no_more() {
    let registry = registry();
    let slow = ToolDefinition::builder("slow")
        .description("Waits until cancelled.")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({})))
        .handler(|_args, cx| async move {
            cx.cancellation().cancelled().await;
            Err::<serde_json::Value, _>(tack_core::tool::ToolError::new("stopped"))
        })
        .build()
        .unwrap();
    registry.registry().register(slow).unwrap();
    let script = ScriptedModel::parse(
        r#"{"turns": [
            {"tool_calls": [{"id": "a", "name": "slow", "arguments": "{}"}]},
            {"text": "never asked"}
        ]}"#,
    )
    .unwrap();
    let (bus, _seen) = recording_bus();
    let cancel = tokio_util::sync::CancellationToken::new();
    // The batch listeners are not told of a cancelled batch.
    let hooks = tack_agent::AgentHooks::new();
    let told = Arc::new(Mutex::new(0));
    let count = told.clone();
    let _batch = hooks.post_tool_batch().tap("batch", move |input, next| {
        let count = count.clone();
        async move {
            *count.lock() += 1;
            next.run(input).await.add_context("after the batch")
        }
    });
    let mut agent = Agent::builder(Arc::new(script), registry)
        .events(bus)
        .cancel(cancel.clone())
        .hooks(hooks)
        .build();
    let (end, ()) = tokio::join!(agent.run("go"), cancel_soon(&cancel));
    assert_eq!(end.unwrap(), RunEnd::Cancelled);
    assert_eq!(*told.lock(), 0);
    let history = agent.history();
    assert_eq!(history.len(), 3, "prompt, calls, result: {history:?}");
    assert!(
        matches!(&history[2], Message::ToolResult { is_error: true, .. }),
        "{history:?}"
    );
    // A new signal lets the session go on.
    agent.set_cancellation(tokio_util::sync::CancellationToken::new());
    assert_eq!(
        agent.run("again").await.unwrap(),
        RunEnd::Answered("never asked".into())
    );
}

#[tokio::test]
async fn images_in_a_tool_result_reach_the_model_as_context_after_the_batch() {
    use tack_core::tool::ContentBlock;
    let registry = registry();
    let camera = ToolDefinition::builder("camera")
        .description("Returns a picture.")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({})).render(|_, _| {
            vec![
                ContentBlock::text("a cat"),
                ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ]
        }))
        .handler(|_args, _cx| async move { Ok(json!({})) })
        .build()
        .unwrap();
    registry.registry().register(camera).unwrap();
    let script = ScriptedModel::parse(
        r#"{"turns": [
            {"tool_calls": [
                {"id": "a", "name": "camera", "arguments": "{}"},
                {"id": "b", "name": "note", "arguments": "{\"text\": \"x\"}"}
            ]},
            {"text": "done"}
        ]}"#,
    )
    .unwrap();
    let (bus, seen) = recording_bus();
    let mut agent = Agent::builder(Arc::new(script), registry)
        .events(bus)
        .build();
    agent.run("go").await.unwrap();
    let history = agent.history();
    // prompt, calls, result a, result b, images of a, context of b, answer
    assert_eq!(history.len(), 7, "{history:#?}");
    assert!(
        matches!(&history[2], Message::ToolResult { call_id, content, .. } if call_id == "a" && content == "a cat")
    );
    let Message::Context(images) = &history[4] else {
        panic!("{history:#?}")
    };
    assert_eq!(images.source(), Some(tack_agent::IMAGE_CONTEXT_SOURCE));
    assert_eq!(
        images.content,
        [
            ContentBlock::text("The image returned by camera (call a):"),
            ContentBlock::image("iVBORw0KGgo=", "image/png"),
        ]
    );
    assert!(matches!(&history[5], Message::Context(c) if c.text() == "noted: x"));
    let logged = seen
        .lock()
        .iter()
        .filter(|e| matches!(e, Event::ContextDeferred { call_id, .. } if call_id == "a"))
        .count();
    assert_eq!(logged, 1, "the image context is logged like any context");
}

#[tokio::test]
async fn an_empty_batch_ends_the_turn_without_an_answer() {
    let script =
        ScriptedModel::parse(r#"{"turns": [{"tool_calls": []}, {"text": "never asked"}]}"#)
            .unwrap();
    let (bus, seen) = recording_bus();
    let mut agent = Agent::builder(Arc::new(script), registry())
        .events(bus)
        .build();
    assert_eq!(agent.run("go").await.unwrap(), RunEnd::EmptyReply);
    let events = seen.lock().clone();
    assert_eq!(
        events.iter().map(Event::kind).collect::<Vec<_>>(),
        ["user", "turn/end"]
    );
    assert!(matches!(
        events.last(),
        Some(Event::TurnEnd {
            reason: tack_agent::TurnEndReason::EmptyReply,
            steps: 1
        })
    ));
    // No empty answer entered the history.
    assert!(
        !agent
            .history()
            .iter()
            .any(|m| matches!(m, Message::Assistant(_))),
        "{:?}",
        agent.history()
    );
}

/// A logged batch: its calls (position, id, arguments), then its results
/// (position, id).
type Batch = (Vec<(usize, String, String)>, Vec<(usize, String)>);

/// Whatever the scheduler does with a reused id, the log pairs every result
/// with its call: by batch position, within the batch that precedes it.
#[tokio::test]
async fn duplicate_call_ids_stay_unambiguous_in_the_log() {
    let script = ScriptedModel::parse(
        r#"{"turns": [
            {"tool_calls": [
                {"id": "dup", "name": "note", "arguments": "{\"text\": \"one\"}"},
                {"id": "dup", "name": "note", "arguments": "{\"text\": \"two\"}"},
                {"id": "solo", "name": "note", "arguments": "{\"text\": \"three\"}"}
            ]},
            {"tool_calls": [
                {"id": "dup", "name": "nope", "arguments": "{}"}
            ]},
            {"text": "done"}
        ]}"#,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dup.jsonl");
    let log = Arc::new(tack_agent::SessionLog::create(&path).unwrap());
    let mut agent = Agent::builder(Arc::new(script), registry())
        .events(Arc::new(EventBus::new(Some(log))))
        .build();
    agent.run("go").await.unwrap();
    let records = tack_agent::read_log(&path).unwrap().records;
    // Split the log into batches: a run of calls, then its results.
    let mut batches: Vec<Batch> = Vec::new();
    let mut in_calls = false;
    for record in &records {
        match &record.event {
            Event::ToolCall {
                call_id,
                arguments,
                index,
                ..
            } => {
                if !in_calls {
                    batches.push((Vec::new(), Vec::new()));
                    in_calls = true;
                }
                let batch = batches.last_mut().unwrap();
                batch.0.push((*index, call_id.clone(), arguments.clone()));
            }
            Event::ToolResult { outcome, index } => {
                in_calls = false;
                let batch = batches.last_mut().unwrap();
                batch.1.push((*index, outcome.call_id.to_string()));
            }
            _ => in_calls = false,
        }
    }
    assert_eq!(batches.len(), 2);
    for (calls, results) in &batches {
        // Positions are 0..n, each once, for calls and for results alike.
        let positions: Vec<usize> = calls.iter().map(|c| c.0).collect();
        assert_eq!(positions, (0..calls.len()).collect::<Vec<_>>());
        let mut answered: Vec<usize> = results.iter().map(|r| r.0).collect();
        answered.sort_unstable();
        assert_eq!(answered, positions, "one result per call position");
        // A result names the id of the call at its position.
        for (index, id) in results {
            assert_eq!(&calls[*index].1, id);
        }
    }
    let (first, _) = &batches[0];
    assert_eq!(first[0].1, first[1].1, "the script reuses the id");
    assert_ne!(first[0].2, first[1].2, "…for two different calls");
    // Contexts name their call's position too.
    for record in &records {
        if let Event::ContextDeferred { call_id, index, .. } = &record.event {
            assert_eq!(&batches[0].0[*index].1, call_id);
        }
    }
}

/// A model that records the tool names it is offered, then calls `note`.
struct Offered(Mutex<Vec<Vec<String>>>);

#[tack_core::async_trait]
impl tack_agent::ChatModel for Offered {
    fn name(&self) -> String {
        "offered".into()
    }
    async fn complete(
        &self,
        messages: &[Message],
        tools: &[tack_core::host::ToolSchema],
    ) -> Result<tack_agent::Reply, tack_agent::ModelError> {
        self.0
            .lock()
            .push(tools.iter().map(|t| t.name.clone()).collect());
        Ok(match messages.last() {
            Some(Message::User(_)) => {
                let call = tack_core::tool::ToolCall::new("c1", "note", r#"{"text": "hi"}"#);
                // A model cannot choose another agent's view.
                tack_agent::Reply::ToolCalls(vec![call.with_agent("other")])
            }
            _ => tack_agent::Reply::Text("done".into()),
        })
    }
}

#[tokio::test]
async fn an_agent_id_applies_the_registrys_masks_to_the_loop() {
    let pipeline = registry();
    let registry = pipeline.registry().clone();
    let mask = registry
        .restrict("helper", tack_pipeline::Restriction::deny(["note"]))
        .unwrap();
    for (agent, offered, result) in [
        (Some("helper"), Vec::<String>::new(), "UNKNOWN_TOOL"),
        (Some("reviewer"), vec!["note".to_owned()], "hi"),
        (None, vec!["note".to_owned()], "hi"),
    ] {
        let model = Arc::new(Offered(Mutex::new(Vec::new())));
        let builder = Agent::builder(model.clone(), pipeline.clone());
        let mut agent = match agent {
            Some(id) => builder.agent(id).build(),
            None => builder.build(),
        };
        assert_eq!(
            agent.run("go").await.unwrap(),
            RunEnd::Answered("done".into())
        );
        assert_eq!(model.0.lock()[0], offered, "agent {agent:?}");
        let content = agent.history().iter().find_map(|m| match m {
            Message::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        });
        assert!(content.unwrap().contains(result), "agent {agent:?}");
    }
    drop(mask);
}
