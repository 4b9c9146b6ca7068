//! The tool model.
//!
//! A tool has three layers (docs/design.md):
//!
//! 1. **model-visible**: name, description, input schema — all a host
//!    exports to the model (the OpenAI, Anthropic and MCP formats);
//! 2. **host-only**: the handler, timeout, concurrency classifier and [`Tier`]
//!    of a [`ToolDefinition`];
//! 3. **output**: the mandatory [`OutputSpec`] (schema, pure renderer,
//!    presentation meta), UI presenters and the optional `finalize_content`.
//!
//! A model's utterance is a [`ToolCall`]; the pipeline turns it into exactly
//! one [`Outcome`], whose failures carry an [`ErrorCode`].

pub(crate) mod body_future;
pub(crate) mod definition;
mod typed;

pub(crate) use body_future::BodyFuture;
pub(crate) use body_future::BodyResult;
pub(crate) use definition::ToolHandler;
pub use definition::{OutputSpec, ToolDefinition, ToolDefinitionBuilder};
pub use typed::Tool;

pub use crate::context::execution::ToolExecution;
pub use crate::model::{
    CallId, Content, ContentBlock, DeferredContext, ErrorCode, ExecutionToken, Outcome, Tier,
    ToolCall, ToolError, ToolName,
};
