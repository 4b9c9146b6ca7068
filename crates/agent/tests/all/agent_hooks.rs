//! The agent hook points: a prompt blocked or given context, a stop turned
//! into one more step, session start and end, a batch's listeners adding
//! context or ending the turn, a model error told to the stop-failure
//! listeners.

use std::sync::Arc;

use parking_lot::Mutex;
use tack_agent::{
    Agent, AgentHooks, Event, EventBus, Message, PromptDecision, RunEnd, ScriptedModel,
    StopDecision, TurnEndReason, history_from_records,
};
use tack_pipeline::{Pipeline, ToolRegistry};

fn bus() -> (Arc<EventBus>, Arc<Mutex<Vec<Event>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let bus = EventBus::new(None).with_observer(move |r| sink.lock().push(r.event.clone()));
    (Arc::new(bus), seen)
}

fn model(turns: &[&str]) -> Arc<ScriptedModel> {
    let turns: Vec<String> = turns
        .iter()
        .map(|t| serde_json::json!({"text": t}).to_string())
        .collect();
    Arc::new(ScriptedModel::parse(&format!(r#"{{"turns": [{}]}}"#, turns.join(","))).unwrap())
}

#[tokio::test]
async fn a_blocked_prompt_never_reaches_the_model_or_the_history() {
    let hooks = AgentHooks::new();
    let _block = hooks
        .user_prompt_submit()
        .tap("guard", |input, next| async move {
            if input.prompt.contains("password") {
                return PromptDecision::accept().block("no passwords");
            }
            next.run(input).await
        });
    let (bus, seen) = bus();
    let mut agent = Agent::builder(model(&["fine"]), Pipeline::new(ToolRegistry::new()))
        .events(bus)
        .hooks(hooks)
        .build();
    let end = agent.run("my password is x").await.unwrap();
    assert_eq!(
        end,
        RunEnd::PromptBlocked {
            reason: "no passwords".into()
        }
    );
    assert!(agent.history().is_empty());
    let events = seen.lock().clone();
    assert_eq!(
        events[0],
        Event::PromptBlocked {
            reason: "no passwords".into()
        }
    );
    assert!(matches!(
        events[1],
        Event::TurnEnd {
            reason: TurnEndReason::PromptBlocked,
            steps: 0
        }
    ));
    // The model was not asked: its one answer is still there.
    assert_eq!(
        agent.run("hello").await.unwrap(),
        RunEnd::Answered("fine".into())
    );
}

#[tokio::test]
async fn prompt_context_follows_the_prompt_and_survives_a_resume() {
    let hooks = AgentHooks::new();
    let _ctx = hooks
        .user_prompt_submit()
        .tap("ctx", |input, next| async move {
            next.run(input).await.add_context("the sprint ends Friday")
        });
    let (bus, seen) = bus();
    let mut agent = Agent::builder(model(&["ok"]), Pipeline::new(ToolRegistry::new()))
        .events(bus)
        .hooks(hooks)
        .build();
    agent.run("plan").await.unwrap();
    assert!(matches!(&agent.history()[0], Message::User(p) if p == "plan"));
    let Message::Context(context) = &agent.history()[1] else {
        panic!("{:?}", agent.history());
    };
    assert_eq!(context.text(), "the sprint ends Friday");
    let records: Vec<_> = seen
        .lock()
        .iter()
        .enumerate()
        .map(|(i, e)| tack_agent::Record::new(i as u64 + 1, 0, e.clone()))
        .collect();
    let resumed = history_from_records(&records);
    assert!(
        matches!(&resumed.messages[1], Message::Context(c) if c.text() == "the sprint ends Friday")
    );
}

#[tokio::test]
async fn a_stop_listener_keeps_the_agent_going_once() {
    let hooks = AgentHooks::new();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let _stop = hooks.stop().tap("tests-first", move |input, _next| {
        log.lock().push(input.stop_hook_active);
        async move {
            if input.stop_hook_active {
                StopDecision::stop()
            } else {
                StopDecision::keep_going("run the tests first")
            }
        }
    });
    let mut agent = Agent::builder(
        model(&["done", "tests pass; done"]),
        Pipeline::new(ToolRegistry::new()),
    )
    .hooks(hooks)
    .build();
    let end = agent.run("fix it").await.unwrap();
    assert_eq!(end, RunEnd::Answered("tests pass; done".into()));
    assert_eq!(*asked.lock(), [false, true]);
    assert!(
        matches!(&agent.history()[2], Message::Context(c) if c.text() == "run the tests first")
    );
}

#[tokio::test]
async fn session_start_adds_context_and_session_end_runs() {
    let hooks = AgentHooks::new();
    let _start = hooks
        .session_start()
        .tap("start", |input, next| async move {
            let mut contexts = next.run(input.clone()).await;
            contexts.push(format!("started by {}", input.source));
            contexts
        });
    let ended = Arc::new(Mutex::new(None));
    let sink = ended.clone();
    let _end = hooks.session_end().tap("end", move |input, _next| {
        *sink.lock() = Some(input.reason.clone());
        async {}
    });
    let mut agent = Agent::builder(model(&[]), Pipeline::new(ToolRegistry::new()))
        .hooks(hooks)
        .build();
    agent.start_session("startup").await.unwrap();
    assert!(matches!(&agent.history()[0], Message::Context(c) if c.text() == "started by startup"));
    agent.end_session("exit").await;
    assert_eq!(ended.lock().as_deref(), Some("exit"));
}

/// A model that makes one batch of two calls (of a tool no registry has),
/// then answers.
fn batch_then_answer() -> Arc<ScriptedModel> {
    Arc::new(
        ScriptedModel::parse(
            r#"{"turns": [
                {"tool_calls": [
                    {"id": "c1", "name": "nope", "arguments": "{}"},
                    {"id": "c2", "name": "nada", "arguments": "{\"x\": 1}"}
                ]},
                {"text": "done"}
            ]}"#,
        )
        .unwrap(),
    )
}

#[tokio::test]
async fn a_batch_listener_sees_the_whole_batch_once_and_its_context_follows_the_results() {
    let hooks = AgentHooks::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let _batch = hooks.post_tool_batch().tap("batch", move |input, next| {
        let sink = sink.clone();
        async move {
            sink.lock().push((
                input
                    .calls
                    .iter()
                    .map(|c| c.call_id.to_string())
                    .collect::<Vec<_>>(),
                input
                    .outcomes
                    .iter()
                    .map(|o| o.call_id.to_string())
                    .collect::<Vec<_>>(),
            ));
            next.run(input).await.add_context("lint the files next")
        }
    });
    let mut agent = Agent::builder(batch_then_answer(), Pipeline::new(ToolRegistry::new()))
        .hooks(hooks)
        .build();
    assert_eq!(
        agent.run("go").await.unwrap(),
        RunEnd::Answered("done".into())
    );
    assert_eq!(
        *seen.lock(),
        [(
            vec!["c1".to_owned(), "c2".to_owned()],
            vec!["c1".to_owned(), "c2".to_owned()]
        )]
    );
    let history = agent.history();
    let context = history
        .iter()
        .position(|m| matches!(m, Message::Context(c) if format!("{c:?}").contains("lint the files next")))
        .unwrap();
    let last_result = history
        .iter()
        .rposition(|m| matches!(m, Message::ToolResult { .. }))
        .unwrap();
    assert_eq!(context, last_result + 1, "{history:?}");
}

#[tokio::test]
async fn a_batch_listener_that_stops_ends_the_turn_before_the_model_is_asked_again() {
    let hooks = AgentHooks::new();
    let _batch = hooks
        .post_tool_batch()
        .tap("gate", |input, next| async move {
            next.run(input).await.stop("review first")
        });
    let (bus, events) = bus();
    let mut agent = Agent::builder(batch_then_answer(), Pipeline::new(ToolRegistry::new()))
        .events(bus)
        .hooks(hooks)
        .build();
    assert_eq!(agent.run("go").await.unwrap(), RunEnd::Concluded);
    // The reason stays in the history; the model's answer was never asked for.
    assert!(
        matches!(agent.history().last(), Some(Message::Context(c)) if format!("{c:?}").contains("review first"))
    );
    let events = events.lock().clone();
    assert!(!events.iter().any(|e| matches!(e, Event::Assistant { .. })));
    assert!(events.iter().any(|e| matches!(
        e,
        Event::TurnEnd {
            reason: TurnEndReason::Concluded,
            ..
        }
    )));
}

#[tokio::test]
async fn a_model_error_reaches_the_stop_failure_listeners_and_not_the_stop_ones() {
    let hooks = AgentHooks::new();
    let failures = Arc::new(Mutex::new(Vec::new()));
    let sink = failures.clone();
    let _failure = hooks.stop_failure().tap("alert", move |input, next| {
        let sink = sink.clone();
        async move {
            sink.lock().push(input.clone());
            next.run(input).await
        }
    });
    let stops = Arc::new(Mutex::new(0));
    let count = stops.clone();
    let _stop = hooks.stop().tap("stop", move |input, next| {
        let count = count.clone();
        async move {
            *count.lock() += 1;
            next.run(input).await
        }
    });
    let mut agent = Agent::builder(model(&[]), Pipeline::new(ToolRegistry::new()))
        .hooks(hooks)
        .build();
    let err = agent.run("hi").await.unwrap_err();
    let failures = failures.lock().clone();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].kind, "unknown");
    assert_eq!(failures[0].message, err.to_string());
    assert_eq!(*stops.lock(), 0);
}
