//! Shared doubles: the harness (a recorded registry and ways to call it), tools,
//! approval services, and a log for listeners.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tack_core::context::ToolRunContext;
use tack_core::hook::{AgentId, Disposer, Scope};
use tack_core::hooks::ToolHooks;
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use tack_core::tool::{Outcome, OutputSpec, Tool, ToolCall, ToolDefinition, ToolError};
use tack_pipeline::{Pipeline, PipelineConfig, ToolRegistry};
use tokio_util::sync::CancellationToken;

pub use crate::recording::Recorder;
use crate::recording::{Recorded, recorded_registry};

impl Recorder {
    /// The stages `call_id` went through, by short name.
    pub fn stages(&self, call_id: &str) -> Vec<&'static str> {
        self.all()
            .into_iter()
            .filter(|(id, _)| id == call_id)
            .map(|(_, stage)| stage.as_str())
            .collect()
    }
}

/// A registry and its pipeline with a stage recorder and a `tools/result` observer that keeps
/// every outcome it sees.
pub struct Harness {
    pub registry: ToolRegistry,
    pub pipeline: Pipeline,
    pub recorder: Arc<Recorder>,
    pub results: Arc<Mutex<Vec<Arc<Outcome>>>>,
    _observer: Disposer,
}

impl Harness {
    pub fn new() -> Self {
        Self::with_config(PipelineConfig::default())
    }

    pub fn with_config(config: PipelineConfig) -> Self {
        let Recorded {
            registry,
            pipeline,
            recorder,
            outcomes,
            observer,
        } = recorded_registry(config, "harness-results");
        Self {
            registry,
            pipeline,
            recorder,
            results: outcomes,
            _observer: observer,
        }
    }

    /// A default harness with one global tool.
    pub fn with_tool(definition: ToolDefinition) -> Self {
        let h = Self::new();
        h.add(definition);
        h
    }

    /// A default harness with a [`counted_echo`] named `name`, and its run counter.
    pub fn with_counted_echo(name: &str) -> (Self, Arc<AtomicUsize>) {
        let (definition, runs) = counted_echo(name);
        (Self::with_tool(definition), runs)
    }

    /// Registers a global tool; the registration lives as long as the harness
    /// (the disposer is forgotten).
    pub fn add(&self, definition: ToolDefinition) {
        self.registry.register(definition).unwrap();
    }

    /// Registers a tool in `agent`'s own layer, for as long as the returned disposer lives.
    pub fn add_for(&self, agent: &AgentId, definition: ToolDefinition) -> Disposer {
        self.registry
            .register_in(Scope::Agent(agent.clone()), definition)
            .unwrap()
    }

    /// Registers a global tool and shares its disposer, so a listener can unregister it mid-call.
    pub fn add_disposable(&self, definition: ToolDefinition) -> Arc<Disposer> {
        Arc::new(self.registry.register(definition).unwrap())
    }

    /// The registry's hook points.
    pub fn hooks(&self) -> &ToolHooks {
        self.pipeline.hooks()
    }

    /// Installs `approver` as the approval service for as long as the harness lives.
    pub fn provide_approval(&self, approver: Arc<Approver>) {
        self.pipeline.capabilities().provide_approval(approver);
    }

    pub async fn call(&self, id: &str, name: &str, args: &str) -> Arc<Outcome> {
        self.call_with(id, name, args, CancellationToken::new())
            .await
    }

    /// [`call`](Self::call) under the caller's `cancel` token.
    pub async fn call_with(
        &self,
        id: &str,
        name: &str,
        args: &str,
        cancel: CancellationToken,
    ) -> Arc<Outcome> {
        self.pipeline
            .execute(ToolCall::new(id, name, args), cancel)
            .await
    }

    /// [`call`](Self::call) on behalf of `agent`.
    pub async fn call_as(&self, id: &str, name: &str, args: &str, agent: &str) -> Arc<Outcome> {
        self.call_for(id, name, args, Some(agent)).await
    }

    /// [`call`](Self::call) on behalf of `agent` when there is one.
    pub async fn call_for(
        &self,
        id: &str,
        name: &str,
        args: &str,
        agent: Option<&str>,
    ) -> Arc<Outcome> {
        let mut call = ToolCall::new(id, name, args);
        if let Some(agent) = agent {
            call = call.with_agent(agent);
        }
        self.pipeline.execute(call, CancellationToken::new()).await
    }

    /// Runs `call` and cancels the caller's token once `ready()` holds.
    pub async fn call_cancelled_when(
        &self,
        call: ToolCall,
        ready: impl Fn() -> bool,
    ) -> Arc<Outcome> {
        let caller = CancellationToken::new();
        self.call_and_interrupt(call, caller.clone(), ready, || caller.cancel())
            .await
    }

    /// Runs `call` under `caller` and, once `ready()` holds mid-call, runs `interrupt`.
    pub async fn call_and_interrupt(
        &self,
        call: ToolCall,
        caller: CancellationToken,
        ready: impl Fn() -> bool,
        interrupt: impl FnOnce(),
    ) -> Arc<Outcome> {
        let run = self.pipeline.execute(call, caller);
        let interrupter = async {
            while !ready() {
                tokio::task::yield_now().await;
            }
            interrupt();
        };
        let (out, ()) = tokio::join!(run, interrupter);
        out
    }

    /// The names of the tools `agent` is shown, in listing order.
    pub fn names(&self, agent: Option<&AgentId>) -> Vec<String> {
        tool_names(&self.registry, agent)
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

/// A caller token that is already cancelled.
pub fn cancelled() -> CancellationToken {
    let token = CancellationToken::new();
    token.cancel();
    token
}

/// The names of the tools `agent` is shown, in listing order.
pub fn tool_names(registry: &ToolRegistry, agent: Option<&AgentId>) -> Vec<String> {
    registry
        .schemas(agent)
        .into_iter()
        .map(|s| s.name)
        .collect()
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

/// A raw tool with an open object input and an unconstrained output.
pub fn open_tool<F, Fut>(name: &str, handler: F) -> ToolDefinition
where
    F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    raw_tool(name, json!({"type": "object"}), json!({}), handler)
}

/// A tool whose body never finishes.
pub fn hanging(name: &str) -> ToolDefinition {
    open_tool(name, |_a, _c| async move {
        futures::future::pending::<()>().await;
        Ok(json!(null))
    })
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
    open_tool(name, |_args, _cx| async move {
        if true {
            panic!("the body blew up");
        }
        Ok(Value::Null)
    })
}

/// A tool whose body fails with `error`.
pub fn failing(name: &str, error: ToolError) -> ToolDefinition {
    open_tool(name, move |_args, _cx| {
        let error = error.clone();
        async move { Err(error) }
    })
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
pub fn failure(outcome: &Outcome) -> &tack_core::tool::ToolError {
    outcome
        .failure_info()
        .unwrap_or_else(|| panic!("expected a failure, got {outcome:?}"))
}

/// The listener that decided an outcome (`None` for a hook point's default),
/// from its provenance (which must be there).
pub fn decided_by(outcome: &Outcome) -> Option<&str> {
    outcome.provenance.as_ref().unwrap().listener.as_deref()
}

pub fn text(outcome: &Outcome) -> String {
    outcome.content.joined_text()
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
