//! The plain data of a tool call, below everything else in the crate: names,
//! calls and their arguments, content blocks, errors and outcomes, tiers,
//! the model-visible schema with its exporters, and the one error of
//! parsing a name from a closed set (host-side). Re-exported by `tool` (and
//! `host`).

mod arguments;
mod call;
mod content;
mod deferred;
mod error;
mod name;
mod outcome;
mod render_error;
mod rewrite;
mod schema;
pub(crate) mod schema_depth;
pub(crate) mod schema_keywords;
mod tier;
mod unknown_name;

pub(crate) use arguments::kind_of;
pub use arguments::{Arguments, ArgumentsError};
pub(crate) use call::next_serial;
pub use call::{CallId, ExecutionToken, ToolCall};
pub use content::{Content, ContentBlock};
pub use deferred::DeferredContext;
pub use error::ToolError;
pub use name::ToolName;
pub(crate) use outcome::Status;
pub use outcome::{ErrorCode, Outcome};
pub(crate) use rewrite::ArgumentRewrite;
pub use schema::{
    ExportedTool, RenderedTool, ToolFormat, ToolSchema, export_tools, export_tools_json, tools_json,
};
pub use schema_depth::schema_depth;
pub use tier::Tier;
pub use unknown_name::UnknownName;
