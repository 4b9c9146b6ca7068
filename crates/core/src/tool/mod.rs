//! The tool model.
//!
//! A tool has three layers (docs/design.md):
//!
//! 1. **model-visible**: [`ToolSchema`] — name, description, input schema —
//!    with exporters to the OpenAI, Anthropic and MCP formats;
//! 2. **host-only**: the handler, timeout, concurrency classifier and [`Tier`]
//!    of a [`ToolDefinition`];
//! 3. **output**: the mandatory [`OutputSpec`] (schema, pure renderer,
//!    presentation meta), UI presenters and the optional `finalize_content`.
//!
//! A model's utterance is a [`ToolCall`]; the pipeline turns it into exactly
//! one [`Outcome`], whose failures carry an [`ErrorCode`].

mod arguments;
mod body_future;
mod call;
mod content;
mod deferred;
mod definition;
mod definition_error;
mod error;
pub(crate) mod execution;
mod name;
mod outcome;
mod render_error;
mod schema;
mod schema_depth;
mod schema_keywords;
mod tier;
mod typed;

pub use arguments::{Arguments, ArgumentsError};
pub use body_future::{BodyFuture, BodyResult};
pub use call::{CallId, ExecutionToken, ToolCall};
pub use content::{Content, ContentBlock, joined_text};
pub use deferred::DeferredContext;
pub use definition::{
    ConcurrencyFn, FinalizeContentFn, OutputSpec, PresentCallFn, PresentResultFn,
    PresentationMetaFn, RenderFn, ToolDefinition, ToolDefinitionBuilder, ToolHandler,
    default_present_call, default_present_result, default_render,
};
pub use definition_error::{DefinitionError, MisplacedKeyword};
pub use error::{ToolError, ToolErrorCode};
pub use execution::ToolExecution;
pub use name::{MAX_TOOL_NAME_LEN, NameError, ToolName};
pub use outcome::{ErrorCode, Failure, Outcome, Status, UnknownErrorCode};
pub use render_error::RenderError;
pub use schema::{
    ExportedTool, RenderedTool, ToolFormat, ToolSchema, UnknownFormat, export_tools,
    export_tools_json, tools_json,
};
pub use schema_depth::{MAX_SCHEMA_DEPTH, schema_depth};
pub use tier::Tier;
pub use typed::Tool;
