//! Executions as the pipeline hands them to hooks and guards, for testing a
//! listener, a guard or a rule on its own.

use std::sync::Arc;

use serde_json::Value;
use tack_core::hook::AgentId;
use tack_core::host::{NewExecutionToken, NewToolExecution};
use tack_core::tool::{CallId, ExecutionToken, Tier, ToolExecution, ToolName};

/// An execution of `tool` (call id `c`, no agent) with `arguments`, as the
/// pipeline would hand it to `tools/pre-execute` listeners and guards.
///
/// # Panics
///
/// When `tool` is not a valid tool name (a mistake in the test).
///
/// ```
/// use tack_core::serde_json::json;
/// use tack_core::tool::Tier;
/// use tack_test::execution;
///
/// let exec = execution("bash", Tier::Executes, json!({"command": "ls"}));
/// assert_eq!(exec.arg_str("command"), Some("ls"));
/// assert_eq!(exec.agent(), None);
/// ```
pub fn execution(tool: &str, tier: Tier, arguments: Value) -> ToolExecution {
    let name = ToolName::new(tool).unwrap_or_else(|e| panic!("{e}"));
    ToolExecution::new(
        CallId::from("c"),
        name,
        Arc::new(arguments),
        tier,
        ExecutionToken::issue(CallId::from("c")),
    )
}

/// [`execution`] made for `agent`.
///
/// # Panics
///
/// When `tool` is not a valid tool name.
///
/// ```
/// use tack_core::serde_json::json;
/// use tack_core::tool::Tier;
/// use tack_test::execution_for;
///
/// let exec = execution_for("reviewer", "read_file", Tier::ReadOnly, json!({"path": "a"}));
/// assert_eq!(exec.agent().map(|a| a.as_str()), Some("reviewer"));
/// ```
pub fn execution_for(
    agent: impl Into<AgentId>,
    tool: &str,
    tier: Tier,
    arguments: Value,
) -> ToolExecution {
    execution(tool, tier, arguments).with_agent(Some(agent.into()))
}
