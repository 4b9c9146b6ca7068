//! Shared doubles: tools, a stage recorder, result collection, approval services.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tack_core::capability::CapabilitySlots;
use tack_core::context::ToolRunContext;
use tack_core::hook::{Disposer, ListenerSpec};
use tack_core::hooks::ToolHooks;
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use tack_core::tool::{
    CallId, ErrorCode, Outcome, OutputSpec, Tool, ToolCall, ToolDefinition, ToolError,
};
use tack_pipeline::{PipelineConfig, Stage, StageRecorder, ToolRegistry};
use tokio_util::sync::CancellationToken;

/// Collects `(call_id, stage)` in the order the pipeline reports them.
#[derive(Default)]
pub struct Recorder {
    events: Mutex<Vec<(String, Stage)>>,
}

impl StageRecorder for Recorder {
    fn record(&self, call_id: &CallId, stage: Stage) {
        self.events
            .lock()
            .push((call_id.as_str().to_owned(), stage));
    }
}

impl Recorder {
    /// The stages `call_id` went through, by short name.
    pub fn stages(&self, call_id: &str) -> Vec<&'static str> {
        self.events
            .lock()
            .iter()
            .filter(|(id, _)| id == call_id)
            .map(|(_, stage)| stage.as_str())
            .collect()
    }

    pub fn all(&self) -> Vec<(String, Stage)> {
        self.events.lock().clone()
    }
}

/// A registry with a stage recorder and a `tools/result` observer that keeps
/// every outcome it sees.
pub struct Harness {
    pub registry: ToolRegistry,
    pub recorder: Arc<Recorder>,
    pub results: Arc<Mutex<Vec<Arc<Outcome>>>>,
    _observer: Disposer,
}

impl Harness {
    pub fn new() -> Self {
        Self::with_config(PipelineConfig::default())
    }

    pub fn with_config(config: PipelineConfig) -> Self {
        let recorder = Arc::new(Recorder::default());
        let registry = ToolRegistry::with_parts(
            ToolHooks::new(),
            CapabilitySlots::new(),
            config.with_stage_recorder(recorder.clone()),
        );
        let results: Arc<Mutex<Vec<Arc<Outcome>>>> = Arc::default();
        let seen = results.clone();
        let observer =
            registry
                .hooks()
                .result()
                .tap(ListenerSpec::new("harness-results"), move |record| {
                    seen.lock().push(record.outcome.clone());
                });
        Self {
            registry,
            recorder,
            results,
            _observer: observer,
        }
    }

    /// Registers a global tool; the registration lives as long as the harness
    /// (the disposer is forgotten).
    pub fn add(&self, definition: ToolDefinition) {
        self.registry.register(definition).unwrap().forget();
    }

    pub async fn call(&self, id: &str, name: &str, args: &str) -> Arc<Outcome> {
        self.registry
            .execute(ToolCall::new(id, name, args), CancellationToken::new())
            .await
    }

    pub fn stages(&self, id: &str) -> Vec<&'static str> {
        self.recorder.stages(id)
    }

    /// The outcomes result observers saw for `id`.
    pub fn observed(&self, id: &str) -> Vec<Arc<Outcome>> {
        self.results
            .lock()
            .iter()
            .filter(|o| o.call_id.as_str() == id)
            .cloned()
            .collect()
    }
}

/// A raw tool from its parts.
pub fn raw_tool<F, Fut>(name: &str, input: Value, output: Value, handler: F) -> ToolDefinition
where
    F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    ToolDefinition::builder(name)
        .description(format!("The `{name}` test tool."))
        .input_schema(input)
        .output(OutputSpec::new(output))
        .handler(handler)
        .build()
        .unwrap()
}

/// The input schema of `echo`: `{text: string}`, required, closed.
pub fn echo_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": false
    })
}

/// `echo(text) -> text` (a raw tool, hand-written schema).
pub fn echo(name: &str) -> ToolDefinition {
    raw_tool(
        name,
        echo_schema(),
        json!({"type": "string"}),
        |args, _cx| async move { Ok(args["text"].clone()) },
    )
}

/// An `echo` that counts how often its body ran.
pub fn counted_echo(name: &str) -> (ToolDefinition, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let def = raw_tool(
        name,
        echo_schema(),
        json!({"type": "string"}),
        move |args, _cx| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok(args["text"].clone()) }
        },
    );
    (def, runs)
}

/// A tool whose body panics.
pub fn panicking(name: &str) -> ToolDefinition {
    raw_tool(
        name,
        json!({"type": "object"}),
        json!({}),
        |_args, _cx| async move {
            if true {
                panic!("the body blew up");
            }
            Ok(Value::Null)
        },
    )
}

/// A tool whose body fails with `code`.
pub fn failing(name: &str, code: ErrorCode, message: &str) -> ToolDefinition {
    let message = message.to_owned();
    raw_tool(
        name,
        json!({"type": "object"}),
        json!({}),
        move |_args, _cx| {
            let message = message.clone();
            async move { Err(ToolError::with_code(code, message)) }
        },
    )
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct AddOneArgs {
    pub x: i64,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
pub struct AddOneOut {
    pub y: i64,
}

/// A typed tool: `add_one({x}) -> {y: x + 1}`.
pub struct AddOne;

impl Tool for AddOne {
    const NAME: &'static str = "add_one";
    type Args = AddOneArgs;
    type Output = AddOneOut;

    fn description(&self) -> &str {
        "Add one to x."
    }

    async fn execute(
        &self,
        args: AddOneArgs,
        _cx: &ToolRunContext,
    ) -> Result<AddOneOut, ToolError> {
        Ok(AddOneOut { y: args.x + 1 })
    }
}

pub fn add_one() -> ToolDefinition {
    ToolDefinition::from_tool(AddOne).unwrap()
}

/// The failure of an outcome, which must be one.
pub fn failure(outcome: &Outcome) -> &tack_core::tool::Failure {
    outcome
        .failure_info()
        .unwrap_or_else(|| panic!("expected a failure, got {outcome:?}"))
}

pub fn text(outcome: &Outcome) -> String {
    tack_core::tool::joined_text(&outcome.content)
}

type BoxedAnswer<'a> = Pin<Box<dyn Future<Output = ApprovalOutcome> + Send + 'a>>;

/// What an approval double does.
#[derive(Clone)]
pub enum Behaviour {
    Answer(ApprovalOutcome),
    /// Panics inside the returned future.
    Panic,
    /// Panics when `request` is called, before returning a future.
    PanicEagerly,
    /// Never answers, not even on cancellation.
    Never,
}

/// An approval service double that records the requests it got.
pub struct Approver {
    pub behaviour: Behaviour,
    pub requests: Mutex<Vec<ApprovalRequest>>,
}

impl Approver {
    pub fn new(behaviour: Behaviour) -> Arc<Self> {
        Arc::new(Self {
            behaviour,
            requests: Mutex::new(Vec::new()),
        })
    }

    pub fn answering(outcome: ApprovalOutcome) -> Arc<Self> {
        Self::new(Behaviour::Answer(outcome))
    }
}

impl ApprovalService for Approver {
    fn request<'life0, 'async_trait>(
        &'life0 self,
        request: ApprovalRequest,
        _cancel: CancellationToken,
    ) -> BoxedAnswer<'async_trait>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        self.requests.lock().push(request);
        match self.behaviour.clone() {
            Behaviour::Answer(outcome) => Box::pin(async move { outcome }),
            Behaviour::Panic => Box::pin(async move { panic!("the approver blew up") }),
            Behaviour::PanicEagerly => panic!("the approver blew up eagerly"),
            Behaviour::Never => Box::pin(futures::future::pending()),
        }
    }
}

/// A shared log listeners append to, to assert their own runs.
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, entry: impl Into<String>) {
        self.0.lock().push(entry.into());
    }

    pub fn entries(&self) -> Vec<String> {
        self.0.lock().clone()
    }
}
