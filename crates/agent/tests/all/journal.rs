//! `Agent::run_journaled`: a host's journal sees every model step and tool
//! call, and a turn replayed from what it recorded ends the same way —
//! results, deferred context, the conclusion — without asking the model or
//! running a tool.

use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use tack_agent::{
    Agent, ChatModel, Message, ModelError, ModelObserver, Reply, RunEnd, ScriptedModel, StepJournal,
};
use tack_core::host::ToolSchema;
use tack_core::tool::{Outcome, ToolCall};
use tack_pipeline::Pipeline;
use tokio_util::sync::CancellationToken;

use crate::agent_loop::registry;

/// Records each step's result, or replays the recorded ones in order.
#[derive(Default)]
struct Tape {
    replaying: bool,
    replies: Mutex<Vec<Reply>>,
    outcomes: Mutex<Vec<Arc<Outcome>>>,
    /// What ran for real: `model`, and each call's id.
    ran: Mutex<Vec<String>>,
}

#[async_trait]
impl StepJournal for Tape {
    async fn model_step(
        &self,
        model: &Arc<dyn ChatModel>,
        messages: &[Message],
        tools: &[ToolSchema],
        observer: &dyn ModelObserver,
    ) -> Result<Reply, ModelError> {
        if self.replaying {
            return Ok(self.replies.lock().remove(0));
        }
        self.ran.lock().push("model".into());
        let reply = model.complete_observed(messages, tools, observer).await?;
        self.replies.lock().push(reply.clone());
        Ok(reply)
    }

    async fn tool_call(
        &self,
        pipeline: &Pipeline,
        call: ToolCall,
        cancel: CancellationToken,
    ) -> Arc<Outcome> {
        if self.replaying {
            return self.outcomes.lock().remove(0);
        }
        self.ran.lock().push(call.call_id.to_string());
        let outcome = pipeline.execute(call, cancel).await;
        self.outcomes.lock().push(Arc::clone(&outcome));
        outcome
    }
}

#[tokio::test]
async fn a_replayed_turn_ends_the_same_without_running_anything() {
    let script = ScriptedModel::parse(
        r#"{"turns": [
            {"tool_calls": [
                {"id": "a", "name": "note", "arguments": "{\"text\": \"one\"}"},
                {"id": "b", "name": "note", "arguments": "{\"text\": \"two\"}"}
            ]},
            {"tool_calls": [{"id": "c", "name": "note", "arguments": "{\"text\": \"stop\"}"}]},
            {"text": "never asked"}
        ]}"#,
    )
    .unwrap();
    let tape = Tape::default();
    let mut agent = Agent::builder(Arc::new(script), registry()).build();
    assert_eq!(
        agent.run_journaled("go", &tape).await.unwrap(),
        RunEnd::Concluded
    );
    // Each step went through the journal, the calls one at a time in model order.
    assert_eq!(*tape.ran.lock(), ["model", "a", "b", "model", "c"]);
    let recorded = format!("{:?}", agent.history());
    assert!(recorded.contains("noted: two") && recorded.contains("noted: stop"));

    // A new agent (a new process) replays the tape: a model with no turn
    // left is never asked, and no tool runs.
    let replay = Tape {
        replaying: true,
        replies: Mutex::new(tape.replies.lock().clone()),
        outcomes: Mutex::new(tape.outcomes.lock().clone()),
        ran: Mutex::default(),
    };
    let empty = ScriptedModel::parse(r#"{"turns": []}"#).unwrap();
    let mut again = Agent::builder(Arc::new(empty), registry()).build();
    assert_eq!(
        again.run_journaled("go", &replay).await.unwrap(),
        RunEnd::Concluded
    );
    assert!(replay.ran.lock().is_empty());
    assert_eq!(format!("{:?}", again.history()), recorded);
}
