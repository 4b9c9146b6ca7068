//! One call as a test makes it.

use serde_json::Value;
use tack_core::CancellationToken;
use tack_core::hook::AgentId;
use tack_core::tool::ToolCall;

/// A call of a tool: its name, its argument text, and optionally the agent it
/// is made for, its id and the caller's cancellation signal.
///
/// ```
/// use tack_core::CancellationToken;
/// use tack_core::serde_json::json;
/// use tack_test::Call;
///
/// let call = Call::new("bash", json!({"command": "ls"}))
///     .agent("reviewer")
///     .id("call-7")
///     .cancellation(CancellationToken::new());
/// assert_eq!(call.arguments_text(), r#"{"command":"ls"}"#);
/// // The exact text the model sent, invalid JSON included:
/// assert_eq!(Call::raw("bash", "{not json").arguments_text(), "{not json");
/// ```
#[derive(Clone, Debug)]
pub struct Call {
    pub(crate) name: String,
    pub(crate) arguments: String,
    pub(crate) agent: Option<AgentId>,
    pub(crate) id: Option<String>,
    pub(crate) cancel: Option<CancellationToken>,
}

impl Call {
    /// A call of `name` with `arguments` (sent as their compact JSON text).
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        Self::raw(name, arguments.to_string())
    }

    /// A call of `name` with the argument text exactly as given.
    pub fn raw(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            arguments: arguments.into(),
            agent: None,
            id: None,
            cancel: None,
        }
    }

    /// Made for `agent` (default: no agent, the global scope).
    pub fn agent(mut self, agent: impl Into<AgentId>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// With this call id (default: a fresh `call-<n>`).
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// With the caller's cancellation signal (default: one nobody cancels).
    pub fn cancellation(mut self, cancel: CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// The argument text the pipeline gets.
    pub fn arguments_text(&self) -> &str {
        &self.arguments
    }

    /// The call the pipeline gets, with id `id`.
    pub(crate) fn to_tool_call(&self, id: &str) -> ToolCall {
        let call = ToolCall::new(id, self.name.clone(), self.arguments.clone());
        match &self.agent {
            Some(agent) => call.with_agent(agent.clone()),
            None => call,
        }
    }
}
