//! Execution modes: whether a call may share the pool with its neighbours.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::Value;
use tack_core::tool::ToolCall;

use super::config::SchedulerConfig;
use super::resources::ResourceClaim;
use crate::Pipeline;
use crate::pipeline::parse::materialize;
use crate::registry::RegisteredTool;

/// How the scheduler runs one call of a turn.
///
/// Only an explicit `true` from the visible definition's concurrency
/// classifier, for parsed and valid arguments, makes a call [`Parallel`].
/// Everything else — an unknown or hidden tool, arguments that do not parse or
/// validate, no classifier, `false`, a panicking classifier — is
/// [`Exclusive`]: concurrency has to be proven, not assumed.
///
/// [`Parallel`]: ExecutionMode::Parallel
/// [`Exclusive`]: ExecutionMode::Exclusive
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::{OutputSpec, ToolCall, ToolDefinition};
/// use tack_pipeline::{ExecutionMode, Pipeline, ToolRegistry};
///
/// let registry = ToolRegistry::new();
/// let read = ToolDefinition::builder("read")
///     .description("Read a file.")
///     .input_schema(json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}))
///     .output(OutputSpec::new(json!({"type": "string"})))
///     .concurrency_safe(|_| true)
///     .handler(|_args, _cx| async move { Ok(json!("…")) })
///     .build()
///     .unwrap();
/// let _kept = registry.register(read).unwrap();
/// let pipeline = Pipeline::new(registry);
///
/// let ok = ToolCall::new("c1", "read", r#"{"path": "a.txt"}"#);
/// assert_eq!(pipeline.execution_mode(&ok), ExecutionMode::Parallel);
/// // Invalid arguments, or a tool the caller cannot see: exclusive.
/// let invalid = ToolCall::new("c2", "read", r#"{"path": 1}"#);
/// assert_eq!(pipeline.execution_mode(&invalid), ExecutionMode::Exclusive);
/// let unknown = ToolCall::new("c3", "nope", "{}");
/// assert_eq!(pipeline.execution_mode(&unknown), ExecutionMode::Exclusive);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExecutionMode {
    /// May run beside other parallel calls, within the pool bound.
    Parallel,
    /// Waits for everything before it, runs alone, and nothing after it
    /// starts before it ends.
    Exclusive,
}

impl ExecutionMode {
    /// `parallel` or `exclusive`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutionMode::Parallel => "parallel",
            ExecutionMode::Exclusive => "exclusive",
        }
    }
}

impl std::fmt::Display for ExecutionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a pending call would be started: its mode and, when parallel, the
/// resources it claims (empty unless a resource classifier is configured).
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub(crate) mode: ExecutionMode,
    pub(crate) claims: Vec<ResourceClaim>,
}

impl Plan {
    pub(crate) const EXCLUSIVE: Plan = Plan {
        mode: ExecutionMode::Exclusive,
        claims: Vec::new(),
    };
}

impl Pipeline {
    /// How the scheduler would run `call` now: [`ExecutionMode::Parallel`]
    /// only when the tool is visible to the call's agent, the arguments parse
    /// and validate against its input schema, and its classifier returns
    /// exactly `true` for them. See [`ExecutionMode`].
    pub fn execution_mode(&self, call: &ToolCall) -> ExecutionMode {
        let Ok(tool) = self.lookup(call) else {
            return ExecutionMode::Exclusive;
        };
        // Exactly the pipeline's own parse rule (limits, `""` is `{}`, an object).
        let Ok(arguments) = materialize(&mut call.arguments.clone(), self.config()) else {
            return ExecutionMode::Exclusive;
        };
        if !tool.input.is_valid(arguments.value()) {
            return ExecutionMode::Exclusive;
        }
        plan_for(&tool, arguments.value(), None).mode
    }
}

/// The plan for a call of `tool` whose arguments parsed and validated to
/// `arguments`: mode, then (with a scheduler configuration) its resource claims.
pub(crate) fn plan_for(
    tool: &RegisteredTool,
    arguments: &Value,
    scheduler: Option<&SchedulerConfig>,
) -> Plan {
    let definition = tool.definition();
    if !definition.is_concurrency_safe(arguments) {
        return Plan::EXCLUSIVE;
    }
    let classifier = scheduler.and_then(|s| s.resource_classifier(definition.name().as_str()));
    let claims = match classifier {
        None => Vec::new(),
        Some(classify) => match catch_unwind(AssertUnwindSafe(|| classify(arguments))) {
            Ok(claims) => claims,
            Err(_) => {
                tracing::warn!(
                    tool = definition.name().as_str(),
                    "a resource classifier panicked; the call runs exclusively"
                );
                return Plan::EXCLUSIVE;
            }
        },
    };
    Plan {
        mode: ExecutionMode::Parallel,
        claims,
    }
}
