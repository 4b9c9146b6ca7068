//! Step 8: validate a success value against the output schema and render it.

use std::sync::Arc;

use serde_json::Value;
use tack_core::host::NewFailure;
use tack_core::tool::{ContentBlock, ErrorCode, Failure};

use super::resolve::unknown;
use super::validate::check;
use crate::ToolRegistry;
use crate::registry::RegisteredTool;

/// A value that passed the output schema, with its content and presentation meta.
pub(crate) struct Rendered {
    pub(crate) value: Arc<Value>,
    pub(crate) content: Vec<ContentBlock>,
    pub(crate) presentation: Option<Value>,
}

fn invalid(message: String) -> Failure {
    Failure::new(ErrorCode::OutputInvalid, message)
}

impl ToolRegistry {
    /// Validates `value` against the tool's output schema (the registration
    /// must still be the visible one: a tool unregistered mid-call cannot vouch
    /// for its output), then renders content and presentation meta.
    pub(crate) fn normalize_output(
        &self,
        tool: &RegisteredTool,
        arguments: &Value,
        value: Value,
    ) -> Result<Rendered, Failure> {
        let definition = &tool.definition;
        let name = definition.name().as_str();
        if !self.still_registered(tool) {
            let mut failure = unknown(name);
            failure.message = format!(
                "tool `{name}` was unregistered while the call ran, so its result cannot be checked against its output schema"
            );
            return Err(failure);
        }
        if let Some(violations) = check(&tool.output, &value) {
            return Err(invalid(format!(
                "tool `{name}` returned invalid output: {}",
                violations.message
            ))
            .with_pointer(violations.pointer));
        }
        let content = definition
            .output()
            .render_value(arguments, &value)
            .map_err(|e| invalid(format!("tool `{name}` could not render its output: {e}")))?;
        let presentation = definition
            .output()
            .presentation_value(arguments, &value)
            .map_err(|e| {
                invalid(format!(
                    "tool `{name}` could not project its presentation meta: {e}"
                ))
            })?;
        Ok(Rendered {
            value: Arc::new(value),
            content,
            presentation,
        })
    }
}
