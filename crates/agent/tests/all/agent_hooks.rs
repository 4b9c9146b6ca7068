//! The agent hook points: a prompt blocked or given context, a stop turned
//! into one more step, session start and end.

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
