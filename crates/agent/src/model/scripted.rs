//! A model that replays a file of turns (tests, demos of edge cases).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use serde::Deserialize;
use tack_core::host::ToolSchema;
use tack_core::tool::ToolCall;

use super::{ChatModel, ModelError};
use crate::message::{Message, Reply};

/// A model that answers with the turns of a script, in order, whatever it is
/// asked.
///
/// The script is JSON: `{"turns": [ {"text": "…"} | {"tool_calls": [{"id":
/// "c1", "name": "read_file", "arguments": "{\"path\":\"README.md\"}"}]} … ]}`.
/// `arguments` is the raw string a model produced, so malformed JSON can be
/// scripted.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use tack_agent::{ChatModel, Reply, ScriptedModel};
/// let script = ScriptedModel::parse(r#"{"turns": [
///     {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": "{\"path\": oops"}]},
///     {"text": "done"}
/// ]}"#).unwrap();
/// assert!(matches!(script.complete(&[], &[]).await.unwrap(), Reply::ToolCalls(c) if c[0].arguments == "{\"path\": oops"));
/// assert!(matches!(script.complete(&[], &[]).await.unwrap(), Reply::Text(t) if t == "done"));
/// assert!(script.complete(&[], &[]).await.is_err());
///
/// let err = ScriptedModel::parse("{\"turns\": [\n  {\"text\": }\n]}").unwrap_err();
/// assert!(err.to_string().contains("line 2 column"), "{err}");
/// # }
/// ```
#[derive(Debug)]
pub struct ScriptedModel {
    turns: Vec<Turn>,
    next: AtomicUsize,
    by_history: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Script {
    turns: Vec<Turn>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Turn {
    Text { text: String },
    ToolCalls { tool_calls: Vec<ScriptedCall> },
}

#[derive(Debug, Deserialize)]
struct ScriptedCall {
    id: String,
    name: String,
    arguments: String,
}

/// A script that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read the script {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The text is not a valid script.
    #[error(
        "the script {origin} is not valid: {source} (expected {{\"turns\": [{{\"text\": …}} | {{\"tool_calls\": [{{\"id\", \"name\", \"arguments\"}}]}}]}})"
    )]
    Invalid {
        /// Where the text came from.
        origin: String,
        /// The parse error, with its line and column.
        source: serde_json::Error,
    },
}

impl ScriptError {
    /// The line and column of a parse error (1-based), if any.
    pub fn position(&self) -> Option<(usize, usize)> {
        match self {
            ScriptError::Invalid { source, .. } => Some((source.line(), source.column())),
            ScriptError::Read { .. } => None,
        }
    }
}

impl ScriptedModel {
    /// Parses a script from text.
    ///
    /// # Errors
    ///
    /// [`ScriptError::Invalid`] with the line and column of the problem.
    pub fn parse(text: &str) -> Result<Self, ScriptError> {
        Self::parse_from(text, "text")
    }

    /// Reads and parses a script file.
    ///
    /// # Errors
    ///
    /// [`ScriptError::Read`] or [`ScriptError::Invalid`].
    pub fn from_file(path: &Path) -> Result<Self, ScriptError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse_from(&text, &path.display().to_string())
    }

    fn parse_from(text: &str, origin: &str) -> Result<Self, ScriptError> {
        let script: Script = serde_json::from_str(text).map_err(|source| ScriptError::Invalid {
            origin: origin.to_owned(),
            source,
        })?;
        Ok(Self {
            turns: script.turns,
            next: AtomicUsize::new(0),
            by_history: false,
        })
    }

    /// Answers with the turn whose index is the number of model replies
    /// (text answers and tool-call batches) the history it is asked with
    /// holds, rather than the next turn it has not given yet: a model
    /// rebuilt for a conversation replayed or resumed elsewhere (a durable
    /// host's session moving between processes) continues where the
    /// conversation is, and one model serves many sessions.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use tack_agent::{ChatModel, Message, Reply, ScriptedModel};
    /// let script = ScriptedModel::parse(r#"{"turns": [{"text": "one"}, {"text": "two"}]}"#)
    ///     .unwrap()
    ///     .positioned_by_history();
    /// let history = [Message::User("hi".into()), Message::Assistant("one".into())];
    /// assert!(matches!(script.complete(&history, &[]).await.unwrap(), Reply::Text(t) if t == "two"));
    /// assert!(matches!(script.complete(&history[..1], &[]).await.unwrap(), Reply::Text(t) if t == "one"));
    /// # }
    /// ```
    pub fn positioned_by_history(mut self) -> Self {
        self.by_history = true;
        self
    }

    /// How many turns the script has.
    pub fn len(&self) -> usize {
        self.turns.len()
    }

    /// Whether the script has no turns.
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }
}

#[async_trait]
impl ChatModel for ScriptedModel {
    fn name(&self) -> String {
        "script".to_owned()
    }

    async fn complete(&self, messages: &[Message], _: &[ToolSchema]) -> Result<Reply, ModelError> {
        let at = if self.by_history {
            messages
                .iter()
                .filter(|m| matches!(m, Message::Assistant(_) | Message::ToolCalls(_)))
                .count()
        } else {
            self.next.fetch_add(1, Ordering::Relaxed)
        };
        match self.turns.get(at) {
            None => Err(ModelError::ScriptExhausted {
                turns: self.turns.len(),
            }),
            Some(Turn::Text { text }) => Ok(Reply::Text(text.clone())),
            Some(Turn::ToolCalls { tool_calls }) => Ok(Reply::ToolCalls(
                tool_calls
                    .iter()
                    .map(|c| ToolCall::new(c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
                    .collect(),
            )),
        }
    }
}
