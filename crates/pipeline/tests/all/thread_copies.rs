//! Each thread calls a tool through a copy of its own (so threads write no
//! shared reference count): the copies are the same tool, follow every change
//! of the registry, and keep nothing alive once the tool is unregistered.

use std::sync::{Arc, Weak, mpsc};
use std::thread;

use serde_json::json;
use tack_core::context::ToolRunContext;
use tack_core::tool::{Tool, ToolCall, ToolDefinition, ToolError};
use tack_pipeline::{Pipeline, ToolRegistry};
use tokio_util::sync::CancellationToken;

use crate::harness::*;

/// Runs `name({"text": ...})` to its end on this thread: the text of its
/// result, or the code of its failure.
fn call_here(pipeline: &Pipeline, name: &str) -> String {
    let call = ToolCall::new("c1", name, r#"{"text": "hi"}"#);
    let outcome = futures::executor::block_on(pipeline.execute(call, CancellationToken::new()));
    if outcome.is_success() {
        text(&outcome)
    } else {
        failure(&outcome).code().to_string()
    }
}

/// A thread that runs each name sent to it as a call and reports the text,
/// then stays alive (holding whatever it holds) until dropped.
struct Caller {
    names: mpsc::Sender<String>,
    texts: mpsc::Receiver<String>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Caller {
    fn new(pipeline: &Pipeline) -> Self {
        let (names, todo) = mpsc::channel::<String>();
        let (done, texts) = mpsc::channel();
        let pipeline = pipeline.clone();
        let thread = thread::spawn(move || {
            for name in todo {
                done.send(call_here(&pipeline, &name)).unwrap();
            }
        });
        Self {
            names,
            texts,
            thread: Some(thread),
        }
    }

    fn call(&self, name: &str) -> String {
        self.names.send(name.to_owned()).unwrap();
        self.texts.recv().unwrap()
    }
}

impl Drop for Caller {
    fn drop(&mut self) {
        let (names, _) = mpsc::channel();
        drop(std::mem::replace(&mut self.names, names));
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
    }
}

/// `name` answering `answer`, its body holding `held` (alive while the tool is).
fn holding(name: &str, answer: &str, held: Arc<()>) -> ToolDefinition {
    let answer = answer.to_owned();
    raw_tool(
        name,
        echo_schema(),
        json!({"type": "string"}),
        move |_args, _cx| {
            let _held = &held;
            let answer = answer.clone();
            async move { Ok(json!(answer)) }
        },
    )
}

/// Registers `definition` (named `name`, answering `answer`, its body holding
/// the value `weak` points to); two threads call it (each makes its copy) and
/// stay idle, then it is unregistered: nothing may keep it alive, and the
/// name is gone on every thread.
fn released_when_unregistered(
    definition: ToolDefinition,
    name: &str,
    answer: &str,
    weak: Weak<()>,
) {
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let kept = registry.register(definition).unwrap();
    let callers = [Caller::new(&pipeline), Caller::new(&pipeline)];
    for caller in &callers {
        assert_eq!(caller.call(name), answer);
    }
    assert_eq!(call_here(&pipeline, name), answer);
    kept.dispose();
    assert!(
        weak.upgrade().is_none(),
        "an idle thread's copy kept the unregistered tool alive"
    );
    for caller in &callers {
        assert_eq!(caller.call(name), "UNKNOWN_TOOL");
    }
}

#[test]
fn a_tool_called_on_other_threads_is_released_when_unregistered() {
    let held = Arc::new(());
    let weak = Arc::downgrade(&held);
    released_when_unregistered(holding("t", "one", held), "t", "one", weak);
}

#[test]
fn a_thread_that_called_a_tool_runs_its_replacement_after_a_change() {
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let caller = Caller::new(&pipeline);
    let old = registry
        .register(holding("t", "old", Arc::new(())))
        .unwrap();
    assert_eq!(caller.call("t"), "old");
    assert_eq!(call_here(&pipeline, "t"), "old");
    old.dispose();
    let _new = registry
        .register(holding("t", "new", Arc::new(())))
        .unwrap();
    assert_eq!(caller.call("t"), "new");
    assert_eq!(call_here(&pipeline, "t"), "new");
}

#[test]
fn an_unrelated_change_keeps_every_thread_on_the_same_tool() {
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let caller = Caller::new(&pipeline);
    let _t = registry
        .register(holding("t", "same", Arc::new(())))
        .unwrap();
    assert_eq!(caller.call("t"), "same");
    let other = registry.register(echo("other")).unwrap();
    assert_eq!(caller.call("t"), "same");
    other.dispose();
    assert_eq!(caller.call("t"), "same");
    assert_eq!(caller.call("other"), call_here(&pipeline, "other"));
}

/// A typed tool holding a value (alive while the tool is).
struct Dropped(#[allow(dead_code)] Arc<()>);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct TextArgs {
    #[allow(dead_code)]
    text: String,
}

impl Tool for Dropped {
    const NAME: &'static str = "dropped";
    type Args = TextArgs;
    type Output = String;
    fn description(&self) -> &str {
        "Answers `kept`."
    }
    async fn execute(&self, _args: Self::Args, _cx: &ToolRunContext) -> Result<String, ToolError> {
        Ok("kept".to_owned())
    }
}

#[test]
fn a_typed_tool_called_on_other_threads_is_dropped_when_unregistered() {
    let held = Arc::new(());
    let weak = Arc::downgrade(&held);
    let definition = ToolDefinition::from_tool(Dropped(held)).unwrap();
    released_when_unregistered(definition, "dropped", "kept", weak);
}
