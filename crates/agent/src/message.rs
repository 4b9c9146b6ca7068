//! The conversation as the loop keeps it.

use tack_core::tool::{DeferredContext, ToolCall};

/// One entry of the history the model reads.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Message {
    /// Instructions for the model (sent first).
    System(String),
    /// What the user said.
    User(String),
    /// The model's text answer.
    Assistant(String),
    /// The model asked for these tool calls (one batch).
    ToolCalls(Vec<ToolCall>),
    /// The result of one call, in model order after its batch.
    ToolResult {
        /// The call it answers.
        call_id: String,
        /// The tool's name.
        tool: String,
        /// The content the model reads (an error's code and message included).
        content: String,
        /// Whether the call failed.
        is_error: bool,
    },
    /// Context a tool deferred, appended after the batch's results: text, or
    /// content blocks (an image a `run_code` sub-call returned).
    Context(DeferredContext),
}

/// What a model answered.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Reply {
    /// A text answer: the turn ends here.
    Text(String),
    /// A batch of tool calls, run by the scheduler.
    ToolCalls(Vec<ToolCall>),
}
