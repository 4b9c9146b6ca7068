//! The plugin author's everyday names, in one import:
//! `use tack_core::prelude::*;`.
//!
//! It holds what nearly every plugin touches — the [`Plugin`] trait and
//! [`PluginFn`], tools ([`Tool`], [`ToolDefinition`], [`ToolCall`],
//! [`ToolError`]), the decisions hook listeners return ([`PreDecision`],
//! [`PostDecision`]; a guard answers a plain `Result<(), String>`), the values the execute and result hook
//! points carry, and the re-exported `json!`, `async_trait`, serde and
//! schemars names. Everything else stays in its module
//! (`tack_core::capability`, `tack_core::policy`, ...).
//!
//! The derive macros [`Serialize`], [`Deserialize`] and [`JsonSchema`] come
//! from tack-core's re-exports. A crate that depends on tack-core alone adds
//! `#[serde(crate = "tack_core::serde")]` and
//! `#[schemars(crate = "tack_core::schemars")]` to each derived type, so the
//! generated code finds them; a crate that also depends on `serde` and
//! `schemars` (same major versions) needs no attribute.
//!
//! ```
//! use tack_core::prelude::*;
//!
//! let count = ToolDefinition::builder("count_words")
//!     .description("Count the words in a text.")
//!     .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
//!     .output(OutputSpec::new(json!({"type": "integer"})))
//!     .tier(Tier::ReadOnly)
//!     .handler(|args, _cx| async move {
//!         let text = args["text"].as_str().unwrap_or_default();
//!         Ok(json!(text.split_whitespace().count()))
//!     })
//!     .build()?;
//! // Installed again after an unload, so the plugin registers a copy.
//! let words = PluginFn::new("words", move |cx| cx.register_tool(count.clone()));
//! assert_eq!(words.name(), "words");
//! # Ok::<(), PluginError>(())
//! ```

#[doc(no_inline)]
pub use crate::CancellationToken;
#[doc(no_inline)]
pub use crate::async_trait;
#[doc(no_inline)]
pub use crate::context::ToolRunContext;
#[doc(no_inline)]
pub use crate::hook::{Order, Scope};
#[doc(no_inline)]
pub use crate::hooks::{ExecuteOutput, ExecuteRequest, ExecutionRecord, PostDecision};
#[doc(no_inline)]
pub use crate::plugin::{Plugin, PluginContext, PluginError, PluginFn};
#[doc(no_inline)]
pub use crate::policy::PreDecision;
#[doc(no_inline)]
pub use crate::schemars::JsonSchema;
#[doc(no_inline)]
pub use crate::serde::{Deserialize, Serialize};
#[doc(no_inline)]
pub use crate::serde_json::{Value, json};
#[doc(no_inline)]
pub use crate::tool::{
    Content, ContentBlock, ErrorCode, OutputSpec, Tier, Tool, ToolCall, ToolDefinition, ToolError,
};
