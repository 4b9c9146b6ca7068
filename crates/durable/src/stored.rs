//! The serde forms of what a session keeps in Restate: its history and the
//! model's recorded replies.

use serde::{Deserialize, Serialize};
use tack_agent::{Message, Reply, Usage};
use tack_core::tool::{DeferredContext, ToolCall};

/// One tool call as recorded: the model's id, name and argument text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCall {
    /// The call's id.
    pub id: String,
    /// The tool name the model wrote.
    pub name: String,
    /// The arguments exactly as the model wrote them.
    pub arguments: String,
}

impl From<&ToolCall> for StoredCall {
    fn from(call: &ToolCall) -> Self {
        Self {
            id: call.call_id.to_string(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        }
    }
}

impl StoredCall {
    /// The call again.
    pub fn to_call(&self) -> ToolCall {
        ToolCall::new(
            self.id.as_str(),
            self.name.as_str(),
            self.arguments.as_str(),
        )
    }
}

/// One history entry as the session's state keeps it (a [`Message`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
#[non_exhaustive]
pub enum StoredMessage {
    /// What the user said.
    User {
        /// The text.
        text: String,
    },
    /// The model's text.
    Assistant {
        /// The text.
        text: String,
    },
    /// A batch of tool calls.
    ToolCalls {
        /// The calls, in model order.
        calls: Vec<StoredCall>,
    },
    /// The result of one call.
    ToolResult {
        /// The call it answers.
        call_id: String,
        /// The tool's name.
        tool: String,
        /// What the model reads.
        content: String,
        /// Whether the call failed.
        is_error: bool,
    },
    /// Context appended after a batch.
    Context {
        /// The context.
        context: DeferredContext,
    },
}

impl StoredMessage {
    /// The stored form of `message` (`None` for a system prompt, which
    /// the host gives each turn).
    pub fn from_message(message: &Message) -> Option<Self> {
        Some(match message {
            Message::User(text) => Self::User { text: text.clone() },
            Message::Assistant(text) => Self::Assistant { text: text.clone() },
            Message::ToolCalls(calls) => Self::ToolCalls {
                calls: calls.iter().map(StoredCall::from).collect(),
            },
            Message::ToolResult {
                call_id,
                tool,
                content,
                is_error,
            } => Self::ToolResult {
                call_id: call_id.clone(),
                tool: tool.clone(),
                content: content.clone(),
                is_error: *is_error,
            },
            Message::Context(context) => Self::Context {
                context: context.clone(),
            },
            _ => return None,
        })
    }

    /// The message again.
    pub fn to_message(&self) -> Message {
        match self {
            Self::User { text } => Message::User(text.clone()),
            Self::Assistant { text } => Message::Assistant(text.clone()),
            Self::ToolCalls { calls } => {
                Message::ToolCalls(calls.iter().map(StoredCall::to_call).collect())
            }
            Self::ToolResult {
                call_id,
                tool,
                content,
                is_error,
            } => Message::ToolResult {
                call_id: call_id.clone(),
                tool: tool.clone(),
                content: content.clone(),
                is_error: *is_error,
            },
            Self::Context { context } => Message::Context(context.clone()),
        }
    }
}

/// A model step as the journal records it: the reply, the text streamed
/// before it and the tokens it used, so a replay reports them again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelRecord {
    /// The reply.
    pub reply: StoredReply,
    /// The text the model streamed while answering.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub streamed: String,
    /// The tokens used, as the provider reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// A model's reply as recorded (a [`Reply`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StoredReply {
    /// A text answer.
    Text(String),
    /// A batch of tool calls.
    ToolCalls(Vec<StoredCall>),
}

impl StoredReply {
    /// The recorded form of `reply`.
    pub fn from_reply(reply: &Reply) -> Self {
        match reply {
            Reply::ToolCalls(calls) => {
                Self::ToolCalls(calls.iter().map(StoredCall::from).collect())
            }
            Reply::Text(text) => Self::Text(text.clone()),
            _ => Self::Text(String::new()),
        }
    }

    /// The reply again.
    pub fn to_reply(&self) -> Reply {
        match self {
            Self::Text(text) => Reply::Text(text.clone()),
            Self::ToolCalls(calls) => {
                Reply::ToolCalls(calls.iter().map(StoredCall::to_call).collect())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_survives_the_state_and_back() {
        let stored = vec![
            StoredMessage::User { text: "hi".into() },
            StoredMessage::ToolCalls {
                calls: vec![StoredCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: "{\"path\": oops".into(),
                }],
            },
            StoredMessage::ToolResult {
                call_id: "c1".into(),
                tool: "read_file".into(),
                content: "INVALID_ARGUMENTS: …".into(),
                is_error: true,
            },
            StoredMessage::Context {
                context: DeferredContext::text_note("later"),
            },
            StoredMessage::Assistant {
                text: "done".into(),
            },
        ];
        let json = serde_json::to_string(&stored).unwrap();
        let back: Vec<StoredMessage> = serde_json::from_str(&json).unwrap();
        let again: Vec<StoredMessage> = back
            .iter()
            .map(StoredMessage::to_message)
            .filter_map(|m| StoredMessage::from_message(&m))
            .collect();
        assert_eq!(again, stored);
        assert!(StoredMessage::from_message(&Message::System("s".into())).is_none());
    }

    #[test]
    fn a_reply_survives_the_journal_and_back() {
        for reply in [
            StoredReply::Text("t".into()),
            StoredReply::ToolCalls(vec![StoredCall {
                id: "c1".into(),
                name: "bash".into(),
                arguments: "{}".into(),
            }]),
        ] {
            let json = serde_json::to_string(&reply).unwrap();
            let back: StoredReply = serde_json::from_str(&json).unwrap();
            assert_eq!(StoredReply::from_reply(&back.to_reply()), reply);
        }
    }
}
