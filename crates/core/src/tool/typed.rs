//! Typed tools: argument and output types with generated schemas, erased once
//! into a [`ToolDefinition`].

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{
    BodyFuture, Content, ErrorCode, Outcome, OutputSpec, Tier, ToolDefinition, ToolError,
    ToolHandler,
};
use crate::context::ToolRunContext;
use crate::error::PluginError;
use crate::hook::panic_message;
use crate::tool::BodyResult;
use tack_hook::future_pool::PoolKey;

/// A tool with typed arguments and output. Its input and output JSON Schemas
/// are generated from the types (schemars) once, when it is turned into a
/// [`ToolDefinition`].
///
/// ```
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
/// use tack_core::context::ToolRunContext;
/// use tack_core::tool::{Tier, Tool, ToolDefinition, ToolError};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct AddArgs { x: i64 }
/// #[derive(Serialize, Deserialize, JsonSchema)]
/// struct AddOut { y: i64 }
///
/// struct AddOne;
/// impl Tool for AddOne {
///     const NAME: &'static str = "add_one";
///     type Args = AddArgs;
///     type Output = AddOut;
///     fn description(&self) -> &str { "Add one to x. Use when you need x + 1." }
///     fn tier(&self) -> Tier { Tier::ReadOnly }
///     fn is_concurrency_safe(&self, _: &AddArgs) -> bool { true }
///     async fn execute(&self, args: AddArgs, _cx: &ToolRunContext) -> Result<AddOut, ToolError> {
///         args.x.checked_add(1).map(|y| AddOut { y }).ok_or_else(|| ToolError::new("x + 1 overflows"))
///     }
/// }
///
/// let def = ToolDefinition::from_tool(AddOne).unwrap();
/// assert_eq!(def.name().as_str(), "add_one");
/// assert_eq!(def.input_schema()["properties"]["x"]["type"], "integer");
/// assert!(def.is_concurrency_safe(&serde_json::json!({"x": 1})));
/// ```
pub trait Tool: Send + Sync + 'static {
    /// The tool's name, `^[A-Za-z0-9_-]{1,64}$`.
    const NAME: &'static str;
    /// The arguments. The body's are deserialized from the exact text the
    /// model sent (an order-keeping map gets the model's order, a number its
    /// spelling); the pure functions below (classifier, renderer, presenters)
    /// deserialize them from the parsed value, which holds the same numbers
    /// and keys: the parse stage refuses a number a 64-bit integer or float
    /// would round, and a repeated key.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// The success value. `Deserialize` too, so a log can be re-rendered.
    type Output: Serialize + DeserializeOwned + JsonSchema + Send + 'static;

    /// What the tool does and *when* the model should use it.
    fn description(&self) -> &str;

    /// The tier policies read (default: [`Tier::Executes`], the cautious assumption).
    fn tier(&self) -> Tier {
        Tier::Executes
    }

    /// The time budget (default: none). Declaring one asserts that
    /// [`execute`](Self::execute) honours the cancellation signal.
    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// Whether a call with `args` may run in parallel with others (default: no).
    fn is_concurrency_safe(&self, _args: &Self::Args) -> bool {
        false
    }

    /// Runs the tool.
    fn execute(
        &self,
        args: Self::Args,
        cx: &ToolRunContext,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;

    /// Renders a success for the model. Must be pure: a replay renders the
    /// logged value with it. Default: what the default renderer makes of the JSON
    /// value (a string as itself, anything else as compact JSON).
    fn render(&self, _args: &Self::Args, output: &Self::Output) -> Content {
        render_serialized(output)
    }

    /// UI-only data for a success (e.g. a diff). Default: none.
    fn presentation_meta(&self, _args: &Self::Args, _output: &Self::Output) -> Option<Value> {
        None
    }

    /// A one-line description of a call for UIs. Default: `name(args)`.
    fn present_call(&self, _args: &Self::Args) -> Option<String> {
        None
    }

    /// Adjusts the final model content of any outcome (`None` keeps it), e.g.
    /// to cap a large output while the log keeps the whole value.
    fn finalize_content(&self, _outcome: &Outcome) -> Option<Content> {
        None
    }
}

/// A typed tool's body. The future of each call holds the tool; it clones
/// the outer `Arc`, so a thread's copy of the definition (a new outer `Arc`
/// around the same tool) gives each thread a count of its own.
/// `key`: the pool of its futures' boxes.
struct TypedHandler<T> {
    // The double `Arc` is the point: the outer one is per thread.
    #[allow(clippy::redundant_allocation)]
    tool: Arc<Arc<T>>,
    key: PoolKey,
}

impl<T: Tool> TypedHandler<T> {
    #[allow(clippy::redundant_allocation)]
    fn new(tool: Arc<Arc<T>>) -> Self {
        Self {
            tool,
            key: PoolKey::returned_by(typed_body::<T>),
        }
    }
}

impl<T: Tool> ToolHandler for TypedHandler<T> {
    fn call(&self, arguments: Arc<Value>, cx: ToolRunContext) -> BodyFuture {
        BodyFuture::new_keyed(self.key, typed_body(self.tool.clone(), arguments, cx))
    }
}

/// One run of a typed tool's body: its arguments deserialized, the tool
/// run, its output made a JSON value.
#[allow(clippy::redundant_allocation)]
async fn typed_body<T: Tool>(
    tool: Arc<Arc<T>>,
    arguments: Arc<Value>,
    cx: ToolRunContext,
) -> BodyResult {
    // The exact text the model sent, when these are the execution's own
    // arguments (always, in the pipeline): the arguments type sees the
    // model's key order and number spelling.
    let parsed = cx.execution().parsed_arguments();
    let args = if Arc::ptr_eq(parsed.value(), &arguments) {
        parsed
            .deserialize::<T::Args>()
            .map_err(|e| not_fitting::<T>(&e))
    } else {
        deserialize_args::<T>(&arguments)
    }?;
    let output = tool.execute(args, &cx).await?;
    serde_json::to_value(output).map_err(|e| {
        ToolError::with_wire_code(
            ErrorCode::OutputInvalid,
            format!("tool `{}` returned a value that is not JSON: {e}", T::NAME),
        )
    })
}

/// [`default_render`](super::default_render) of `output`'s JSON form, written straight to text
/// instead of building a JSON value first.
fn render_serialized<O: Serialize>(output: &O) -> Content {
    let Ok(json) = serde_json::to_string(output) else {
        return Content::new();
    };
    if json.starts_with('"') {
        if let Ok(text) = serde_json::from_str::<String>(&json) {
            return Content::text(text);
        }
    }
    Content::text(json)
}

fn not_fitting<T: Tool>(error: &serde_json::Error) -> ToolError {
    ToolError::invalid_arguments(format!(
        "the arguments do not fit tool `{}`: {error}",
        T::NAME
    ))
}

fn deserialize_args<T: Tool>(arguments: &Value) -> Result<T::Args, ToolError> {
    T::Args::deserialize(arguments).map_err(|e| not_fitting::<T>(&e))
}

fn deserialize_output<T: Tool>(value: &Value) -> Result<T::Output, String> {
    T::Output::deserialize(value).map_err(|e| {
        format!(
            "the value does not fit the output type of tool `{}`: {e}",
            T::NAME
        )
    })
}

use serde::Deserialize as _;

/// Generates the JSON Schema of `S` (draft 2020-12), without the `$schema` and
/// `title` keys the model does not need, containing a panicking `JsonSchema` impl.
fn generate_schema<S: JsonSchema>(tool: &str, which: &'static str) -> Result<Value, PluginError> {
    let generated = catch_unwind(AssertUnwindSafe(|| {
        SchemaSettings::draft2020_12()
            .into_generator()
            .into_root_schema_for::<S>()
    }));
    let schema = generated.map_err(|payload| PluginError::SchemaGeneration {
        plugin: None,
        tool: tool.to_owned(),
        which,
        message: panic_message(&*payload),
    })?;
    let mut value = schema.to_value();
    if let Some(map) = value.as_object_mut() {
        map.remove("$schema");
        map.remove("title");
    }
    Ok(value)
}

impl ToolDefinition {
    /// Erases a typed tool into a definition, generating its schemas.
    ///
    /// # Errors
    ///
    /// [`PluginError`] for an invalid name or description, an `Args` type
    /// whose schema is not an object, or a schema whose generation failed.
    pub fn from_tool<T: Tool>(tool: T) -> Result<ToolDefinition, PluginError> {
        super::ToolName::check(T::NAME)?;
        let input = generate_schema::<T::Args>(T::NAME, "input")?;
        let output_schema = generate_schema::<T::Output>(T::NAME, "output")?;
        let tool = Arc::new(tool);

        let render_tool = tool.clone();
        let meta_tool = tool.clone();
        let project_tool = tool.clone();
        let output = OutputSpec::new(output_schema)
            .try_render(move |args, value| {
                let args = deserialize_args::<T>(args).map_err(|e| e.to_string())?;
                let output = deserialize_output::<T>(value)?;
                Ok(render_tool.render(&args, &output))
            })
            .presentation_meta(move |args, value| {
                let args = deserialize_args::<T>(args).map_err(|e| e.to_string())?;
                let output = deserialize_output::<T>(value)?;
                Ok(meta_tool.presentation_meta(&args, &output))
            })
            .projection(move |args, value| {
                let args = deserialize_args::<T>(args).map_err(|e| e.to_string())?;
                let output = deserialize_output::<T>(value)?;
                Ok((
                    project_tool.render(&args, &output),
                    project_tool.presentation_meta(&args, &output),
                ))
            });

        let classify_tool = tool.clone();
        let present_tool = tool.clone();
        let finalize_tool = tool.clone();
        let copied_tool = tool.clone();
        let mut builder = ToolDefinition::builder(T::NAME)
            .description(tool.description())
            .input_schema(input)
            .output(output)
            .tier(tool.tier())
            .concurrency_safe(move |args| {
                deserialize_args::<T>(args).is_ok_and(|a| classify_tool.is_concurrency_safe(&a))
            })
            .present_call(move |args| {
                deserialize_args::<T>(args)
                    .ok()
                    .and_then(|a| present_tool.present_call(&a))
                    .unwrap_or_else(|| super::definition::default_present_call(T::NAME, args))
            })
            .finalize_content(move |outcome| finalize_tool.finalize_content(outcome))
            .handler_copied(TypedHandler::new(Arc::new(tool.clone())), move || {
                Arc::new(TypedHandler::new(Arc::new(copied_tool.clone())))
            });
        if let Some(timeout) = tool.timeout() {
            builder = builder.timeout(timeout);
        }
        builder.build()
    }
}
