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

mod body_future;
mod definition;
mod typed;

pub use body_future::{BodyFuture, BodyResult};
pub use definition::{
    OutputSpec, ToolDefinition, ToolDefinitionBuilder, ToolHandler, default_present_call,
    default_present_result, default_render,
};
pub use typed::Tool;

pub use crate::context::execution::ToolExecution;
pub use crate::model::{
    Arguments, ArgumentsError, CallId, Content, ContentBlock, DeferredContext, DefinitionError,
    ErrorCode, ExecutionToken, ExportedTool, Failure, MAX_SCHEMA_DEPTH, MisplacedKeyword,
    NameError, Outcome, RenderError, RenderedTool, Status, Tier, ToolCall, ToolError,
    ToolErrorCode, ToolFormat, ToolName, ToolSchema, UnknownErrorCode, UnknownFormat, export_tools,
    export_tools_json, joined_text, schema_depth, tools_json,
};
