//! The host-side tool definition: everything the pipeline needs to run a tool.

use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{BodyFuture, Content, Outcome, Tier, ToolError, ToolName};
use crate::context::ToolRunContext;
use crate::error::PluginError;
use crate::hook::panic_message;
#[cfg(feature = "host")]
use crate::model::ToolSchema;
use crate::model::schema_depth::{MAX_SCHEMA_DEPTH, within_limit};
use crate::model::schema_keywords::misplaced_keyword;
use crate::model::{ExportedTool, ToolFormat, kind_of};

/// Renders a success value for the model: `(arguments, value) -> content`,
/// or why it cannot.
pub(crate) type RenderFn = dyn Fn(&Value, &Value) -> Result<Content, String> + Send + Sync;
/// Projects UI-only data from a success: `(arguments, value) -> meta`, or why
/// it cannot.
pub(crate) type PresentationMetaFn =
    dyn Fn(&Value, &Value) -> Result<Option<Value>, String> + Send + Sync;
/// Renders and projects in one pass: `(arguments, value) -> (content, meta)`,
/// or why it cannot.
pub(crate) type ProjectionFn =
    dyn Fn(&Value, &Value) -> Result<(Content, Option<Value>), String> + Send + Sync;
/// A one-line description of a call for UIs: `arguments -> text`.
pub(crate) type PresentCallFn = dyn Fn(&Value) -> String + Send + Sync;
/// A one-line description of an outcome for UIs: `(arguments, outcome) -> text`.
pub(crate) type PresentResultFn = dyn Fn(&Value, &Outcome) -> String + Send + Sync;
/// Adjusts the final model content of any outcome; `None` keeps it.
pub(crate) type FinalizeContentFn = dyn Fn(&Outcome) -> Option<Content> + Send + Sync;
/// Makes a handler that runs the same body and shares nothing its `call`
/// writes (a typed tool's handler clones a shared count into each future).
pub(crate) type CopyFn = dyn Fn() -> Arc<dyn ToolHandler> + Send + Sync;
/// Decides whether a call may run in parallel with others: `arguments -> bool`.
pub(crate) type ConcurrencyFn = dyn Fn(&Value) -> bool + Send + Sync;

/// The body of a tool, erased: valid frozen arguments in, a JSON value or a
/// [`ToolError`] out.
///
/// Closures `Fn(Arc<Value>, ToolRunContext) -> impl Future<Output =
/// Result<Value, ToolError>>` implement it.
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs the body once.
    fn call(&self, arguments: Arc<Value>, cx: ToolRunContext) -> BodyFuture;
}

/// A shared handler behind a count of its own: the per-thread copy of a
/// handler without a copier of its own.
struct SharedHandler(Arc<dyn ToolHandler>);

impl ToolHandler for SharedHandler {
    fn call(&self, arguments: Arc<Value>, cx: ToolRunContext) -> BodyFuture {
        self.0.call(arguments, cx)
    }
}

impl<F, Fut> ToolHandler for F
where
    F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    fn call(&self, arguments: Arc<Value>, cx: ToolRunContext) -> BodyFuture {
        BodyFuture::new(self(arguments, cx))
    }
}

/// The mandatory output declaration of a tool: the JSON Schema every success
/// value is validated against, a pure renderer to model content, and optional
/// UI-only presentation meta.
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::{ContentBlock, OutputSpec};
/// let out = OutputSpec::new(json!({"type": "integer"}))
///     .render(|_args, value| vec![ContentBlock::text(format!("= {value}"))]);
/// assert_eq!(out.render_value(&json!({}), &json!(3)).unwrap(), vec![ContentBlock::text("= 3")]);
/// ```
///
/// A renderer or projector that may fail returns `Err` with a message
/// (`Err("why".into())`, or `?` on a `String` error). Rendering then fails
/// with an [`ErrorCode::OutputInvalid`](crate::tool::ErrorCode::OutputInvalid)
/// [`ToolError`] whose [`kind`](ToolError::kind) is `render_failed`, or
/// `render_panicked` when the renderer or projector panicked (its message is
/// then `output.<stage> panicked: …`, the stage being `render`,
/// `presentation_meta` or `projection`):
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::{ContentBlock, ErrorCode, OutputSpec};
/// let out = OutputSpec::new(json!({})).try_render(|_, v| {
///     v.as_str().map(|s| vec![ContentBlock::text(s)]).ok_or_else(|| "not text".into())
/// });
/// let err = out.render_value(&json!({}), &json!(1)).unwrap_err();
/// assert_eq!(err.code(), ErrorCode::OutputInvalid);
/// assert_eq!((err.kind(), err.message()), (Some("render_failed"), "not text"));
///
/// let out = OutputSpec::new(json!({})).presentation_meta(|_, _| panic!("no diff"));
/// let err = out.presentation_value(&json!({}), &json!(1)).unwrap_err();
/// assert_eq!(err.kind(), Some("render_panicked"));
/// assert_eq!(err.message(), "output.presentation_meta panicked: no diff");
/// ```
#[derive(Clone)]
pub struct OutputSpec {
    schema: Value,
    /// The schema given nested past [`ToolDefinition::MAX_SCHEMA_DEPTH`] (it was taken apart;
    /// building the definition fails).
    too_deep: bool,
    render: Arc<RenderFn>,
    presentation_meta: Option<Arc<PresentationMetaFn>>,
    projection: Option<Arc<ProjectionFn>>,
}

impl OutputSpec {
    /// An output declared by `schema`, rendered by the default renderer (a string as itself, anything
    /// else as compact JSON) until
    /// [`render`](Self::render) sets another renderer.
    ///
    /// A schema nested deeper than [`ToolDefinition::MAX_SCHEMA_DEPTH`] is taken apart here,
    /// without recursion, and building the definition fails with
    /// [`PluginError::SchemaTooDeep`].
    pub fn new(schema: Value) -> Self {
        let (schema, too_deep) = match within_limit(schema) {
            Some(schema) => (schema, false),
            None => (Value::Null, true),
        };
        Self {
            schema,
            too_deep,
            render: Arc::new(|_, value| Ok(default_render(value))),
            presentation_meta: None,
            projection: None,
        }
    }

    /// Sets a projector that renders and projects presentation meta in one
    /// pass, for outputs where both need the same expensive preparation (typed
    /// tools deserialize their arguments and output once for both). It must
    /// agree with the renderer and the meta projector.
    pub fn projection<F, C>(mut self, project: F) -> Self
    where
        F: Fn(&Value, &Value) -> Result<(C, Option<Value>), String> + Send + Sync + 'static,
        C: Into<Content>,
    {
        self.projection = Some(Arc::new(move |args, value| {
            project(args, value).map(|(content, meta)| (content.into(), meta))
        }));
        self
    }

    /// Renders `value` and projects its presentation meta, containing panics:
    /// what the pipeline does with every success.
    ///
    /// # Errors
    ///
    /// An `OUTPUT_INVALID` [`ToolError`]: the renderer's or projector's
    /// message (kind `render_failed`), or which of them panicked (kind
    /// `render_panicked`).
    pub fn project_value(
        &self,
        args: &Value,
        value: &Value,
    ) -> Result<(Content, Option<Value>), ToolError> {
        match &self.projection {
            Some(project) => contain("projection", || project(args, value)),
            None => Ok((
                self.render_value(args, value)?,
                self.presentation_value(args, value)?,
            )),
        }
    }

    /// Sets an infallible renderer.
    pub fn render<F, C>(mut self, render: F) -> Self
    where
        F: Fn(&Value, &Value) -> C + Send + Sync + 'static,
        C: Into<Content>,
    {
        self.render = Arc::new(move |args, value| Ok(render(args, value).into()));
        self
    }

    /// Sets a renderer that may fail: its `Err(message)` becomes an
    /// `OUTPUT_INVALID` outcome.
    pub fn try_render<F, C>(mut self, render: F) -> Self
    where
        F: Fn(&Value, &Value) -> Result<C, String> + Send + Sync + 'static,
        C: Into<Content>,
    {
        self.render = Arc::new(move |args, value| render(args, value).map(Into::into));
        self
    }

    /// Sets the presentation-meta projector (UI-only data such as a diff); its
    /// `Err(message)` becomes an `OUTPUT_INVALID` outcome.
    pub fn presentation_meta<F>(mut self, meta: F) -> Self
    where
        F: Fn(&Value, &Value) -> Result<Option<Value>, String> + Send + Sync + 'static,
    {
        self.presentation_meta = Some(Arc::new(meta));
        self
    }

    /// The output schema.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Renders `value`, containing a panicking renderer.
    ///
    /// # Errors
    ///
    /// An `OUTPUT_INVALID` [`ToolError`]: the renderer's message (kind
    /// `render_failed`), or `output.render panicked: …` (kind
    /// `render_panicked`).
    pub fn render_value(&self, args: &Value, value: &Value) -> Result<Content, ToolError> {
        contain("render", || (self.render)(args, value))
    }

    /// Projects presentation meta, containing a panicking projector.
    ///
    /// # Errors
    ///
    /// An `OUTPUT_INVALID` [`ToolError`]: the projector's message (kind
    /// `render_failed`), or `output.presentation_meta panicked: …` (kind
    /// `render_panicked`).
    pub fn presentation_value(
        &self,
        args: &Value,
        value: &Value,
    ) -> Result<Option<Value>, ToolError> {
        match &self.presentation_meta {
            None => Ok(None),
            Some(meta) => contain("presentation_meta", || meta(args, value)),
        }
    }
}

/// Runs the renderer or projector of `stage`, containing a panic: its
/// message, or the panic, as an `OUTPUT_INVALID` tool error.
fn contain<T>(stage: &str, run: impl FnOnce() -> Result<T, String>) -> Result<T, ToolError> {
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(result) => result.map_err(ToolError::render_failed),
        Err(payload) => Err(ToolError::render_panicked(stage, &panic_message(&*payload))),
    }
}

impl fmt::Debug for OutputSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputSpec")
            .field("schema", &self.schema)
            .field("presentation_meta", &self.presentation_meta.is_some())
            .finish_non_exhaustive()
    }
}

/// The renderer used when a tool declares none: a string value as its own
/// text, any other value as compact JSON text.
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::ContentBlock;
/// use tack_core::host::default_render;
/// assert_eq!(default_render(&json!("hi")), vec![ContentBlock::text("hi")]);
/// assert_eq!(default_render(&json!({"n": 1})), vec![ContentBlock::text(r#"{"n":1}"#)]);
/// ```
pub fn default_render(value: &Value) -> Content {
    match value {
        Value::String(text) => Content::text(text.clone()),
        other => Content::text(other.to_string()),
    }
}

/// The default one-line description of a call: `name(arguments as compact JSON)`.
///
/// ```
/// use serde_json::json;
/// assert_eq!(tack_core::host::default_present_call("read_file", &json!({"path": "a"})), r#"read_file({"path":"a"})"#);
/// ```
pub fn default_present_call(name: &str, args: &Value) -> String {
    format!("{name}({args})")
}

/// The default one-line description of an outcome: `ok`, or `ERR CODE: message`.
pub fn default_present_result(outcome: &Outcome) -> String {
    match outcome.failure_info() {
        None => "ok".to_owned(),
        Some(f) => format!("ERR {}: {}", f.code, f.message),
    }
}

/// A tool as the host knows it: the model-visible part, the host-only part
/// (handler, timeout, concurrency classifier, tier) and the output declaration.
///
/// Cheap to clone (shared parts). Built with [`ToolDefinition::builder`] for
/// hand-written (raw JSON Schema, e.g. MCP) tools, or from a typed
/// [`Tool`](super::Tool) with [`ToolDefinition::from_tool`].
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::{OutputSpec, Tier, ToolDefinition};
///
/// let echo = ToolDefinition::builder("echo")
///     .description("Repeat the given text back. Use to test the tool loop.")
///     .input_schema(json!({
///         "type": "object",
///         "properties": {"text": {"type": "string"}},
///         "required": ["text"],
///         "additionalProperties": false
///     }))
///     .output(OutputSpec::new(json!({"type": "string"})))
///     .tier(Tier::ReadOnly)
///     .concurrency_safe(|_| true)
///     .handler(|args, _cx| async move { Ok(args["text"].clone()) })
///     .build()
///     .unwrap();
/// assert_eq!(echo.name().as_str(), "echo");
/// // The model sees exactly three fields.
/// let seen = serde_json::to_value(echo.schema()).unwrap();
/// assert_eq!(seen.as_object().unwrap().len(), 3);
/// ```
#[derive(Clone)]
pub struct ToolDefinition {
    name: ToolName,
    description: Arc<str>,
    input_schema: Arc<Value>,
    handler: Arc<dyn ToolHandler>,
    /// How to copy the handler for one thread's calls, when copying the
    /// outer count is not enough.
    copier: Option<Arc<CopyFn>>,
    timeout: Option<Duration>,
    concurrency: Option<Arc<ConcurrencyFn>>,
    tier: Tier,
    idempotent: bool,
    output: OutputSpec,
    present_call: Option<Arc<PresentCallFn>>,
    present_result: Option<Arc<PresentResultFn>>,
    finalize_content: Option<Arc<FinalizeContentFn>>,
}

impl fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDefinition")
            .field("name", &self.name)
            .field("tier", &self.tier)
            .field("idempotent", &self.idempotent)
            .field("timeout", &self.timeout)
            .field("concurrency", &self.concurrency.is_some())
            .field("finalize_content", &self.finalize_content.is_some())
            .finish_non_exhaustive()
    }
}

impl ToolDefinition {
    /// The deepest a tool's input or output schema may nest (64), counting
    /// JSON objects and arrays and stepping into `$ref`s: deeper, building
    /// the definition fails.
    pub const MAX_SCHEMA_DEPTH: usize = MAX_SCHEMA_DEPTH;

    /// A copy for one thread's calls: the same tool in every respect, but
    /// its name and handler are allocations of its own, so the reference
    /// counts a call clones and drops are written by that thread only
    /// (reached by hosts through `tack_core::host::ThreadCopy`).
    pub(crate) fn copy_for_thread(&self) -> ToolDefinition {
        let handler = match &self.copier {
            Some(copy) => copy(),
            None => Arc::new(SharedHandler(self.handler.clone())),
        };
        ToolDefinition {
            name: self.name.detached(),
            handler,
            ..self.clone()
        }
    }

    /// Starts a definition named `name` (validated by [`build`](ToolDefinitionBuilder::build)).
    pub fn builder(name: impl Into<String>) -> ToolDefinitionBuilder {
        ToolDefinitionBuilder {
            name: name.into(),
            description: None,
            input_schema: None,
            input_too_deep: false,
            allow_misplaced_keywords: false,
            handler: None,
            copier: None,
            timeout: None,
            concurrency: None,
            tier: Tier::Executes,
            idempotent: false,
            output: None,
            present_call: None,
            present_result: None,
            finalize_content: None,
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &ToolName {
        &self.name
    }

    /// The description the model reads.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON Schema of the arguments object.
    pub fn input_schema(&self) -> &Arc<Value> {
        &self.input_schema
    }

    /// The model-visible view: name, description, input schema — built by an
    /// explicit whitelist, so no host field can leak.
    #[cfg(feature = "host")]
    pub fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: self.name.as_str().to_owned(),
            description: self.description.to_string(),
            parameters: self.input_schema.clone(),
        }
    }

    /// The body, erased (what `tools/execute` runs). For hosts.
    #[cfg(feature = "host")]
    pub fn handler(&self) -> &Arc<dyn ToolHandler> {
        &self.handler
    }

    /// Runs the body once on `arguments`, outside any pipeline: no
    /// validation, hook, guard or deadline. For a tool that delegates to
    /// another tool's body, and for tests of a body alone.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use serde_json::json;
    /// use tack_core::tool::{OutputSpec, ToolDefinition};
    /// # use tack_core::host::Capabilities;
    /// # use tack_core::context::ToolRunContext;
    /// # use tack_core::host::{NewExecutionToken, NewRunContext, NewToolExecution};
    /// # use tack_core::tool::{CallId, ExecutionToken, Tier, ToolExecution, ToolName};
    ///
    /// let echo = ToolDefinition::builder("echo")
    ///     .description("Echo.")
    ///     .input_schema(json!({"type": "object"}))
    ///     .output(OutputSpec::new(json!({})))
    ///     .handler(|args, _cx| async move { Ok((*args).clone()) })
    ///     .build()
    ///     .unwrap();
    /// # let execution = Arc::new(ToolExecution::new(
    /// #     CallId::from("c1"), ToolName::new("echo").unwrap(), json!({}), Tier::ReadOnly,
    /// #     ExecutionToken::issue(CallId::from("c1")),
    /// # ));
    /// # let (cx, _effects) = ToolRunContext::with_fresh_effects(
    /// #     execution, Arc::new(Capabilities::default()), tack_core::CancellationToken::new());
    /// let value = futures::executor::block_on(echo.run_body(Arc::new(json!({"a": 1})), cx));
    /// assert_eq!(value.unwrap(), json!({"a": 1}));
    /// ```
    pub fn run_body(
        &self,
        arguments: Arc<Value>,
        cx: ToolRunContext,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'static {
        self.handler.call(arguments, cx)
    }

    /// The declared time budget (`None`: no deadline).
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The tier.
    pub fn tier(&self) -> Tier {
        self.tier
    }

    /// Whether the tool declared itself idempotent: running a call of it
    /// twice with the same arguments has the effect of running it once.
    /// A durable host runs such a call again when a crash interrupted it
    /// before its outcome was recorded; any other interrupted call is
    /// reported to the model instead. MCP's `idempotentHint` maps here.
    pub fn is_idempotent(&self) -> bool {
        self.idempotent
    }

    /// The output declaration.
    pub fn output(&self) -> &OutputSpec {
        &self.output
    }

    /// Whether a call with `args` may run in parallel with others: only an
    /// explicit `true` from the classifier; no classifier, `false` or a panic
    /// mean exclusive.
    pub fn is_concurrency_safe(&self, args: &Value) -> bool {
        match &self.concurrency {
            None => false,
            Some(classify) => catch_unwind(AssertUnwindSafe(|| classify(args))).unwrap_or(false),
        }
    }

    /// Whether the tool declares a concurrency classifier.
    pub fn has_concurrency_classifier(&self) -> bool {
        self.concurrency.is_some()
    }

    /// The one-line description of a call for UIs (a panicking presenter falls
    /// back to the default).
    pub fn present_call(&self, args: &Value) -> String {
        self.present_call
            .as_ref()
            .and_then(|present| catch_unwind(AssertUnwindSafe(|| present(args))).ok())
            .unwrap_or_else(|| default_present_call(self.name.as_str(), args))
    }

    /// The one-line description of an outcome for UIs (a panicking presenter
    /// falls back to the default).
    pub fn present_result(&self, args: &Value, outcome: &Outcome) -> String {
        self.present_result
            .as_ref()
            .and_then(|present| catch_unwind(AssertUnwindSafe(|| present(args, outcome))).ok())
            .unwrap_or_else(|| default_present_result(outcome))
    }

    /// Whether the tool declares `finalize_content`.
    pub fn has_finalize_content(&self) -> bool {
        self.finalize_content.is_some()
    }

    /// The final model content for `outcome`: the finalizer's replacement, or
    /// `None` to keep the content. Total: a panicking finalizer keeps the
    /// content (and is logged).
    pub fn finalize_content(&self, outcome: &Outcome) -> Option<Content> {
        let finalize = self.finalize_content.as_ref()?;
        match catch_unwind(AssertUnwindSafe(|| finalize(outcome))) {
            Ok(replacement) => replacement,
            Err(payload) => {
                tracing::error!(
                    tool = self.name.as_str(),
                    message = %panic_message(&*payload),
                    "finalize_content panicked; the content is kept"
                );
                None
            }
        }
    }
}

/// Builds a [`ToolDefinition`]; every check happens in [`build`](Self::build).
#[must_use = "a builder does nothing until .build() is called"]
pub struct ToolDefinitionBuilder {
    name: String,
    description: Option<String>,
    input_schema: Option<Value>,
    /// The input schema given nested past [`ToolDefinition::MAX_SCHEMA_DEPTH`] (taken apart).
    input_too_deep: bool,
    /// Whether schemas may hold keywords misplaced for their `type`.
    allow_misplaced_keywords: bool,
    handler: Option<Arc<dyn ToolHandler>>,
    copier: Option<Arc<CopyFn>>,
    timeout: Option<Duration>,
    concurrency: Option<Arc<ConcurrencyFn>>,
    tier: Tier,
    idempotent: bool,
    output: Option<OutputSpec>,
    present_call: Option<Arc<PresentCallFn>>,
    present_result: Option<Arc<PresentResultFn>>,
    finalize_content: Option<Arc<FinalizeContentFn>>,
}

impl fmt::Debug for ToolDefinitionBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDefinitionBuilder")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ToolDefinitionBuilder {
    /// Tells the model what the tool does and *when* to use it. Required.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The JSON Schema of the arguments; must describe an object. Required.
    ///
    /// A schema nested deeper than [`ToolDefinition::MAX_SCHEMA_DEPTH`] is taken apart here,
    /// without recursion, and [`build`](Self::build) fails with
    /// [`PluginError::SchemaTooDeep`].
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = within_limit(schema);
        self.input_too_deep = self.input_schema.is_none();
        self
    }

    /// Accepts keywords misplaced for their schema's declared `type` (by
    /// default [`build`](Self::build) refuses them with
    /// [`PluginError::MisplacedKeyword`]): for a schema taken as written
    /// from elsewhere (a server's, a generated one) that must stay
    /// byte-for-byte as it is, knowing such a keyword constrains nothing.
    ///
    /// ```
    /// use serde_json::json;
    /// use tack_core::plugin::PluginError;
    /// use tack_core::tool::{OutputSpec, ToolDefinition};
    ///
    /// let builder = || {
    ///     ToolDefinition::builder("tag")
    ///         .description("Tag a file.")
    ///         // `minLength` does nothing on an integer.
    ///         .input_schema(json!({"type": "object", "properties": {"n": {"type": "integer", "minLength": 1}}}))
    ///         .output(OutputSpec::new(json!({})))
    ///         .handler(|_args, _cx| async move { Ok(json!(null)) })
    /// };
    /// let refused = builder().build().unwrap_err();
    /// assert!(matches!(refused, PluginError::MisplacedKeyword { ref pointer, .. } if &**pointer == "/properties/n/minLength"));
    /// assert!(builder().allow_misplaced_keywords().build().is_ok());
    /// ```
    pub fn allow_misplaced_keywords(mut self) -> Self {
        self.allow_misplaced_keywords = true;
        self
    }

    /// The body, as a closure. Required.
    pub fn handler<F, Fut>(self, handler: F) -> Self
    where
        F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.handler_arc(Arc::new(handler))
    }

    /// The body, already shared.
    fn handler_arc(mut self, handler: Arc<dyn ToolHandler>) -> Self {
        self.handler = Some(handler);
        self.copier = None;
        self
    }

    /// The body, with how to copy it for one thread's calls.
    pub(crate) fn handler_copied(
        mut self,
        handler: impl ToolHandler,
        copier: impl Fn() -> Arc<dyn ToolHandler> + Send + Sync + 'static,
    ) -> Self {
        self.handler = Some(Arc::new(handler));
        self.copier = Some(Arc::new(copier));
        self
    }

    /// The output declaration. Required.
    pub fn output(mut self, output: OutputSpec) -> Self {
        self.output = Some(output);
        self
    }

    /// The time budget. Declaring one asserts that the body honours the
    /// cancellation signal. Must be positive.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The tier (default [`Tier::Executes`], the cautious assumption).
    pub fn tier(mut self, tier: Tier) -> Self {
        self.tier = tier;
        self
    }

    /// Declares the tool idempotent (default: not): a call run twice with
    /// the same arguments has the effect of running it once, so a durable
    /// host may run again a call a crash interrupted (see
    /// [`ToolDefinition::is_idempotent`]).
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// The concurrency classifier (default: always exclusive).
    pub fn concurrency_safe(
        mut self,
        classify: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.concurrency = Some(Arc::new(classify));
        self
    }

    /// The one-line call presenter for UIs.
    pub fn present_call(
        mut self,
        present: impl Fn(&Value) -> String + Send + Sync + 'static,
    ) -> Self {
        self.present_call = Some(Arc::new(present));
        self
    }

    /// The one-line outcome presenter for UIs.
    pub fn present_result(
        mut self,
        present: impl Fn(&Value, &Outcome) -> String + Send + Sync + 'static,
    ) -> Self {
        self.present_result = Some(Arc::new(present));
        self
    }

    /// The content finalizer, run exactly once for every outcome of this tool.
    pub fn finalize_content<C: Into<Content>>(
        mut self,
        finalize: impl Fn(&Outcome) -> Option<C> + Send + Sync + 'static,
    ) -> Self {
        self.finalize_content = Some(Arc::new(move |outcome| finalize(outcome).map(Into::into)));
        self
    }

    /// Checks everything and builds the definition.
    ///
    /// # Errors
    ///
    /// [`PluginError`] for an invalid name, an empty description, a
    /// missing or non-object input schema, a missing or invalid output schema,
    /// a schema nested deeper than [`ToolDefinition::MAX_SCHEMA_DEPTH`], a keyword misplaced
    /// for its schema's `type` (unless
    /// [`allow_misplaced_keywords`](Self::allow_misplaced_keywords)), a
    /// missing handler, or a zero timeout.
    pub fn build(self) -> Result<ToolDefinition, PluginError> {
        let name = ToolName::new(&self.name)?;
        let tool = || name.as_str().to_owned();
        let description = match self.description {
            Some(d) if !d.trim().is_empty() => d,
            _ => {
                return Err(PluginError::EmptyDescription {
                    plugin: None,
                    tool: tool(),
                });
            }
        };
        let too_deep = |which| PluginError::SchemaTooDeep {
            plugin: None,
            tool: tool(),
            which,
            limit: MAX_SCHEMA_DEPTH,
        };
        if self.input_too_deep {
            return Err(too_deep("input"));
        }
        let input_schema = self
            .input_schema
            .ok_or_else(|| PluginError::MissingInputSchema {
                plugin: None,
                tool: tool(),
            })?;
        check_input_schema(name.as_str(), &input_schema)?;
        let mut output = self.output.ok_or_else(|| PluginError::MissingOutput {
            plugin: None,
            tool: tool(),
        })?;
        if output.too_deep {
            return Err(too_deep("output"));
        }
        output.schema = normalize_output_schema(name.as_str(), output.schema)?;
        if !self.allow_misplaced_keywords {
            for (which, schema) in [("input", &input_schema), ("output", &output.schema)] {
                if let Some(found) = misplaced_keyword(schema) {
                    return Err(PluginError::MisplacedKeyword {
                        plugin: None,
                        tool: tool(),
                        which,
                        pointer: found.pointer.into(),
                        keyword: found.keyword.into(),
                        declared: Box::new(found.declared),
                        applies_to: found.applies_to,
                    });
                }
            }
        }
        let handler = self.handler.ok_or_else(|| PluginError::MissingHandler {
            plugin: None,
            tool: tool(),
        })?;
        if self.timeout.is_some_and(|t| t.is_zero()) {
            return Err(PluginError::ZeroTimeout {
                plugin: None,
                tool: tool(),
            });
        }
        Ok(ToolDefinition {
            name,
            description: description.into(),
            input_schema: Arc::new(input_schema),
            handler,
            copier: self.copier,
            timeout: self.timeout,
            concurrency: self.concurrency,
            tier: self.tier,
            idempotent: self.idempotent,
            output,
            present_call: self.present_call,
            present_result: self.present_result,
            finalize_content: self.finalize_content,
        })
    }
}

/// Arguments are always a JSON object, so the input schema must be a schema
/// object that says `"type": "object"`.
fn check_input_schema(tool: &str, schema: &Value) -> Result<(), PluginError> {
    let Some(map) = schema.as_object() else {
        return Err(PluginError::InputSchemaNotObject {
            plugin: None,
            tool: tool.to_owned(),
            found: kind_of(schema),
        });
    };
    match map.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(()),
        other => Err(PluginError::InputSchemaNotObjectType {
            plugin: None,
            tool: tool.to_owned(),
            found: other.map(Value::to_string),
        }),
    }
}

/// Output schemas may be any schema object; `true` is accepted as `{}` (any
/// value), `false` and non-schemas are refused.
fn normalize_output_schema(tool: &str, schema: Value) -> Result<Value, PluginError> {
    match schema {
        Value::Object(_) => Ok(schema),
        Value::Bool(true) => Ok(Value::Object(Default::default())),
        Value::Bool(false) => Err(PluginError::OutputSchemaInvalid {
            plugin: None,
            tool: tool.to_owned(),
            reason: "the schema `false` accepts no value, so every call would fail".to_owned(),
        }),
        other => Err(PluginError::OutputSchemaInvalid {
            plugin: None,
            tool: tool.to_owned(),
            reason: format!(
                "a schema is a JSON object (or `true`), found {}",
                kind_of(&other)
            ),
        }),
    }
}

impl<'a> ExportedTool<'a> {
    /// The model-visible parts of `definition` (name, description, argument
    /// schema) in `format`, without building a [`ToolSchema`].
    pub fn of_definition(definition: &'a ToolDefinition, format: ToolFormat) -> Self {
        Self::new(
            definition.name().as_str(),
            definition.description(),
            definition.input_schema(),
            format,
        )
    }
}
