//! A tool whose schema, tier, budget and body a test chooses.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tack_core::context::ToolRunContext;
use tack_core::plugin::PluginError;
use tack_core::tool::{CallId, ContentBlock, OutputSpec, Tier, ToolDefinition, ToolError};

type BodyFuture = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send>>;
type Body = Arc<dyn Fn(Arc<Value>, ToolRunContext) -> BodyFuture + Send + Sync>;
type Render = Arc<dyn Fn(&Value, &Value) -> Vec<ContentBlock> + Send + Sync>;

/// A tool for tests: by default it accepts any object, is
/// [`Tier::ReadOnly`], has no time budget and returns `null`. Every setting
/// is a builder method; [`runs`](Self::runs) counts how often the body
/// actually started.
///
/// ```
/// use tack_core::serde_json::json;
/// use tack_core::tool::{Tier, ToolError};
/// use tack_test::FakeTool;
///
/// let echo = FakeTool::new("echo")
///     .schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
///     .tier(Tier::ReadOnly)
///     .body(|args, _cx| async move { Ok(args["text"].clone()) });
/// let broken = FakeTool::new("broken")
///     .tier(Tier::Executes)
///     .fails(ToolError::new("disk on fire"));
/// assert_eq!(echo.name(), "echo");
/// assert_eq!(broken.runs(), 0);
/// ```
#[derive(Clone)]
pub struct FakeTool {
    name: String,
    description: Option<String>,
    schema: Value,
    output: Option<Value>,
    render: Option<Render>,
    tier: Tier,
    timeout: Option<Duration>,
    concurrency_safe: Option<bool>,
    body: Body,
    runs: Arc<AtomicUsize>,
    last_arguments: Arc<Mutex<Option<Arc<Value>>>>,
}

impl std::fmt::Debug for FakeTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeTool")
            .field("name", &self.name)
            .field("schema", &self.schema)
            .field("tier", &self.tier)
            .field("timeout", &self.timeout)
            .field("runs", &self.runs())
            .finish_non_exhaustive()
    }
}

impl FakeTool {
    /// A tool named `name` that accepts any object and returns `null`.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: None,
            schema: json!({"type": "object"}),
            output: None,
            render: None,
            tier: Tier::ReadOnly,
            timeout: None,
            concurrency_safe: None,
            body: Arc::new(|_, _| Box::pin(async { Ok(Value::Null) })),
            runs: Arc::new(AtomicUsize::new(0)),
            last_arguments: Arc::new(Mutex::new(None)),
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the model reads about it (default: "The `<name>` test tool.").
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The JSON Schema of its arguments (default: any object).
    pub fn schema(mut self, schema: Value) -> Self {
        self.schema = schema;
        self
    }

    /// The JSON Schema its value must match (default: anything).
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output = Some(schema);
        self
    }

    /// What the model reads of a success, from the arguments and the value
    /// (default: the pipeline's rendering of the value — a string as it is,
    /// anything else as JSON). For a tool whose content is not its value: an
    /// image, a summary.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use tack_core::plugin::{Plugin, PluginContext, PluginError};
    /// use tack_core::serde_json::json;
    /// use tack_core::tool::ContentBlock;
    /// use tack_test::{Call, FakeTool, Harness};
    ///
    /// struct Nothing;
    /// impl Plugin for Nothing {
    ///     fn name(&self) -> &str { "nothing" }
    ///     fn install(&self, _: &mut PluginContext<'_>) -> Result<(), PluginError> { Ok(()) }
    /// }
    ///
    /// let snap = FakeTool::new("snap").returns(json!({"w": 1})).render(|_args, value| {
    ///     vec![ContentBlock::text(format!("width {}", value["w"])), ContentBlock::image("iVBORw0KGgo=", "image/png")]
    /// });
    /// let h = Harness::builder().tool(snap).install(Nothing).unwrap();
    /// let report = h.call(Call::new("snap", json!({}))).await;
    /// assert_eq!(report.value(), Some(&json!({"w": 1})));
    /// assert_eq!(report.content()[1], ContentBlock::image("iVBORw0KGgo=", "image/png"));
    /// assert_eq!(report.text(), "width 1");
    /// # });
    /// ```
    pub fn render<F>(mut self, render: F) -> Self
    where
        F: Fn(&Value, &Value) -> Vec<ContentBlock> + Send + Sync + 'static,
    {
        self.render = Some(Arc::new(render));
        self
    }

    /// Its tier (default: [`Tier::ReadOnly`]).
    pub fn tier(mut self, tier: Tier) -> Self {
        self.tier = tier;
        self
    }

    /// Its declared time budget (default: none).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Whether calls of it may run alongside others (its execution mode;
    /// default: no classifier, so every call runs alone).
    pub fn concurrency_safe(mut self, safe: bool) -> Self {
        self.concurrency_safe = Some(safe);
        self
    }

    /// The body returns `value`.
    pub fn returns(self, value: Value) -> Self {
        self.body(move |_, _| {
            let value = value.clone();
            async move { Ok(value) }
        })
    }

    /// The body fails with `error`.
    pub fn fails(self, error: ToolError) -> Self {
        self.body(move |_, _| {
            let error = error.clone();
            async move { Err(error) }
        })
    }

    /// The body: any async function of the arguments and the run context.
    pub fn body<F, Fut>(mut self, body: F) -> Self
    where
        F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.body = Arc::new(move |args, cx| Box::pin(body(args, cx)));
        self
    }

    /// How many times the body started, over every call of this tool (and of
    /// its clones).
    pub fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }

    /// The arguments of the body's last start.
    pub fn last_arguments(&self) -> Option<Arc<Value>> {
        self.last_arguments.lock().clone()
    }

    /// The definition the harness registers.
    ///
    /// # Errors
    ///
    /// [`PluginError`] for a bad name or schema, saying which.
    pub fn definition(&self) -> Result<ToolDefinition, PluginError> {
        self.definition_recording(None)
    }

    /// [`definition`](Self::definition), noting in `started` the id of every
    /// call whose body starts.
    pub(crate) fn definition_recording(
        &self,
        started: Option<Arc<Mutex<HashSet<CallId>>>>,
    ) -> Result<ToolDefinition, PluginError> {
        let body = self.body.clone();
        let runs = self.runs.clone();
        let last = self.last_arguments.clone();
        let mut builder = ToolDefinition::builder(self.name.clone())
            .description(
                self.description
                    .clone()
                    .unwrap_or_else(|| format!("The `{}` test tool.", self.name)),
            )
            .input_schema(self.schema.clone())
            .tier(self.tier)
            .handler(move |args: Arc<Value>, cx: ToolRunContext| {
                runs.fetch_add(1, Ordering::SeqCst);
                if let Some(started) = &started {
                    started.lock().insert(cx.call_id().clone());
                }
                *last.lock() = Some(args.clone());
                body(args, cx)
            });
        let mut output = OutputSpec::new(self.output.clone().unwrap_or(json!({})));
        if let Some(render) = self.render.clone() {
            output = output.render(move |args, value| render(args, value));
        }
        builder = builder.output(output);
        if let Some(timeout) = self.timeout {
            builder = builder.timeout(timeout);
        }
        if let Some(safe) = self.concurrency_safe {
            builder = builder.concurrency_safe(move |_| safe);
        }
        builder.build()
    }
}
