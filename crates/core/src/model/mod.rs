//! The plain data of a tool call, below everything else in the crate: names,
//! calls and their arguments, content blocks, errors and outcomes, tiers,
//! the model-visible schema with its exporters, and the errors a definition
//! can be refused with. Re-exported by `tool` (and `policy` for
//! [`ArgumentRewrite`]).

mod arguments;
mod call;
mod content;
mod deferred;
mod definition_error;
mod error;
mod name;
mod outcome;
mod render_error;
mod rewrite;
mod schema;
pub(crate) mod schema_depth;
pub(crate) mod schema_keywords;
mod tier;

pub(crate) use arguments::kind_of;
pub use arguments::{Arguments, ArgumentsError};
pub(crate) use call::next_serial;
pub use call::{CallId, ExecutionToken, ToolCall};
pub use content::{Content, ContentBlock};
pub use deferred::DeferredContext;
pub use definition_error::{DefinitionError, MisplacedKeyword};
pub use error::{ToolError, ToolErrorCode};
pub use name::{NameError, ToolName};
pub use outcome::{ErrorCode, Failure, Outcome, Status, UnknownErrorCode};
pub use render_error::RenderError;
pub use rewrite::ArgumentRewrite;
pub use schema::{
    ExportedTool, RenderedTool, ToolFormat, ToolSchema, UnknownFormat, export_tools,
    export_tools_json, tools_json,
};
pub use schema_depth::schema_depth;
pub use tier::Tier;
