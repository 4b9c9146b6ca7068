//! Resuming a session from its log: the history rebuilt, the chain
//! continued, a torn log cut, a tampered one refused untouched.

use std::sync::Arc;

use parking_lot::Mutex;
use tack_agent::{
    Agent, ChatModel, Event, EventBus, LogReadError, Message, ModelError, Reply, SessionLog,
    history_from_records, read_log,
};
use tack_core::host::ToolSchema;
use tack_core::tool::ToolCall;

use super::agent_loop::registry;

/// Calls `note` once per turn, then answers with how many messages it saw.
struct Counting {
    seen: Mutex<Vec<usize>>,
}

#[async_trait::async_trait]
impl ChatModel for Counting {
    fn name(&self) -> String {
        "counting".into()
    }

    async fn complete(
        &self,
        messages: &[Message],
        _tools: &[ToolSchema],
    ) -> Result<Reply, ModelError> {
        self.seen.lock().push(messages.len());
        Ok(match messages.last() {
            Some(Message::User(_)) => Reply::ToolCalls(vec![
                ToolCall::new(format!("c{}", messages.len()), "note", r#"{"text": "a"}"#),
                ToolCall::new(format!("d{}", messages.len()), "note", r#"{"text": "b"}"#),
            ]),
            _ => Reply::Text(format!("saw {}", messages.len())),
        })
    }
}

async fn first_session(path: &std::path::Path) -> Vec<Message> {
    let bus = Arc::new(EventBus::new(Some(Arc::new(
        SessionLog::create(path).unwrap(),
    ))));
    let model = Arc::new(Counting {
        seen: Mutex::new(Vec::new()),
    });
    let mut agent = Agent::builder(model, registry()).events(bus).build();
    agent.run("first").await.unwrap();
    agent.history().to_vec()
}

fn shape(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            Message::User(t) => format!("user {t}"),
            Message::Assistant(t) => format!("assistant {t}"),
            Message::ToolCalls(calls) => format!("calls {}", calls.len()),
            Message::ToolResult { call_id, .. } => format!("result {call_id}"),
            Message::Context(c) => format!("context {}", c.text()),
            other => format!("{other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn a_resumed_session_continues_the_conversation_and_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let history = first_session(&path).await;
    let before = read_log(&path).unwrap().records.len();

    let (log, contents) = SessionLog::resume(&path).unwrap();
    let resumed = history_from_records(&contents.records);
    assert_eq!(shape(&resumed.messages), shape(&history));
    assert!(resumed.notes.is_empty());
    let last = contents.records.last().unwrap();
    let bus = Arc::new(EventBus::resuming(Arc::new(log), last));
    let model = Arc::new(Counting {
        seen: Mutex::new(Vec::new()),
    });
    let mut agent = Agent::builder(model.clone(), registry())
        .events(bus)
        .resume(resumed.messages, resumed.usage)
        .build();
    agent.run("second").await.unwrap();
    // The model saw the first turn: system + its history + the new prompt.
    assert_eq!(model.seen.lock()[0], 1 + history.len() + 1);

    let all = read_log(&path).unwrap();
    assert!(all.warnings.is_empty(), "{:?}", all.warnings);
    assert!(all.records.len() > before);
    let seqs: Vec<u64> = all.records.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    assert_eq!(
        all.records[before].event,
        Event::User {
            text: "second".into()
        }
    );
}

#[tokio::test]
async fn a_torn_log_is_cut_and_continued() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    first_session(&path).await;
    let intact = std::fs::read(&path).unwrap();
    let next = read_log(&path).unwrap().records.len() + 1;
    // A crash in the middle of writing the next record.
    let mut torn = intact.clone();
    torn.extend_from_slice(format!("{{\"seq\":{next},\"ts\":1,\"type\":\"us").as_bytes());
    std::fs::write(&path, &torn).unwrap();

    let (log, contents) = SessionLog::resume(&path).unwrap();
    assert!(
        contents.warnings[0].contains("torn"),
        "{:?}",
        contents.warnings
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        intact,
        "the torn tail is cut"
    );
    let bus = EventBus::resuming(Arc::new(log), contents.records.last().unwrap());
    bus.emit(Event::User {
        text: "after the crash".into(),
    })
    .unwrap();
    let all = read_log(&path).unwrap();
    assert_eq!(all.records.len(), next);
    assert_eq!(all.records.last().unwrap().seq, next as u64);
}

#[tokio::test]
async fn a_tampered_log_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    first_session(&path).await;
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("first", "FIRST");
    std::fs::write(&path, &text).unwrap();
    let err = SessionLog::resume(&path).unwrap_err();
    assert!(matches!(err, LogReadError::Invalid { .. }), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);

    // A log another session is writing is not resumed.
    let held = SessionLog::create(&dir.path().join("held.jsonl")).unwrap();
    let bus = EventBus::new(Some(Arc::new(held)));
    bus.emit(Event::User { text: "hi".into() }).unwrap();
    let err = SessionLog::resume(&dir.path().join("held.jsonl")).unwrap_err();
    assert!(err.to_string().contains("another tack session"), "{err}");
    drop(bus);
    // Once it ended (its log dropped), it can be.
    assert!(SessionLog::resume(&dir.path().join("held.jsonl")).is_ok());

    // A link is not followed.
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    assert!(matches!(
        SessionLog::resume(&link).unwrap_err(),
        LogReadError::Io { .. }
    ));
}

#[tokio::test]
async fn a_batch_cut_off_by_a_crash_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    first_session(&path).await;
    // Keep the log up to the first tool/call only: the batch never finished.
    let contents = read_log(&path).unwrap();
    let cut = contents
        .records
        .iter()
        .position(|r| matches!(r.event, Event::ToolResult { .. }))
        .unwrap();
    let resumed = history_from_records(&contents.records[..cut]);
    assert_eq!(shape(&resumed.messages), ["user first"]);
    assert!(
        resumed.notes[0].contains("2 result(s) missing"),
        "{:?}",
        resumed.notes
    );
    // One of two results in: still incomplete.
    let resumed = history_from_records(&contents.records[..=cut]);
    assert_eq!(shape(&resumed.messages), ["user first"]);
    assert!(resumed.notes[0].contains("1 result(s) missing"));
}

#[tokio::test]
async fn a_call_run_again_replaces_its_result_in_the_history_and_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let history = first_session(&path).await;
    let (log, contents) = SessionLog::resume(&path).unwrap();
    let resumed = history_from_records(&contents.records);
    let bus = Arc::new(EventBus::resuming(
        Arc::new(log),
        contents.records.last().unwrap(),
    ));
    let model = Arc::new(Counting {
        seen: Mutex::new(Vec::new()),
    });
    let mut agent = Agent::builder(model, registry())
        .events(bus)
        .resume(resumed.messages, resumed.usage)
        .build();
    let first = match &history[1] {
        Message::ToolCalls(calls) => calls[0].clone(),
        other => panic!("{other:?}"),
    };
    let unknown = ToolCall::new("nowhere", "note", r#"{"text": "c"}"#);
    let (ran, stopped) = agent.rerun(vec![first, unknown]).await.unwrap();
    assert_eq!(
        (ran, stopped),
        (1, None),
        "a call without a result is skipped"
    );
    // One result per call still, in place; the call's context follows.
    let mut expected = shape(&history);
    expected.push("context noted: a".into());
    assert_eq!(shape(agent.history()), expected);
    let again = history_from_records(&read_log(&path).unwrap().records);
    assert_eq!(shape(&again.messages), expected);
    assert!(again.notes.is_empty(), "{:?}", again.notes);
}
