//! Step 1: resolve the called name in the caller's scope.

use std::sync::Arc;

use tack_core::host::NewFailure;
use tack_core::tool::{ErrorCode, Failure, ToolCall, ToolName};

use crate::ToolRegistry;
use crate::registry::{RUN_CODE, RegisteredTool};

/// The `kind` of the failure of a native tool called directly in code mode.
pub(crate) const CODE_MODE_DIRECT_CALL: &str = "code_mode_direct_call";

/// A called name as messages quote it: at most 64 characters (more is
/// elided), backticks replaced, so a hostile name cannot bloat or break the
/// message.
pub(crate) fn quoted_name(name: &str) -> String {
    let mut shown: String = name
        .chars()
        .take(64)
        .map(|c| if c == '`' { '\'' } else { c })
        .collect();
    if name.chars().count() > 64 {
        shown.push('…');
    }
    shown
}

/// The failure for a name the caller cannot see. The same for a missing and a
/// hidden tool, so scope leaks nothing.
pub(crate) fn unknown(name: &str) -> Failure {
    Failure::new(
        ErrorCode::UnknownTool,
        format!(
            "unknown tool `{}`: call one of the tools you were given, by its exact name",
            quoted_name(name)
        ),
    )
}

impl ToolRegistry {
    /// Finds the tool the caller named, as the caller's agent sees it. In code
    /// presentation a model-direct call (no parent token) of a native tool is
    /// unknown, with a message naming the route.
    pub(crate) fn resolve_call(&self, call: &ToolCall) -> Result<Arc<RegisteredTool>, Failure> {
        if ToolName::check(&call.name).is_err() {
            return Err(unknown(&call.name));
        }
        let (tool, presentation) = self.resolve(&call.name, call.agent.as_ref());
        let tool = tool.ok_or_else(|| unknown(&call.name))?;
        if call.parent.is_none() && !presentation.allows_direct_calls() && call.name != RUN_CODE {
            let mut failure = Failure::new(
                ErrorCode::UnknownTool,
                format!(
                    "tool `{name}` cannot be called directly in code mode: call it from inside `{RUN_CODE}`, as `await tools.{name}({{...}})`",
                    name = call.name
                ),
            );
            failure.kind = Some(CODE_MODE_DIRECT_CALL.to_owned());
            return Err(failure);
        }
        Ok(tool)
    }
}
