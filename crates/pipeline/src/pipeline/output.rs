//! The output check, inside the execute stage (and again for a value a
//! `tools/post-execute` listener substitutes): validate a success value
//! against the output schema of the tool the call resolved to, then render
//! its content and presentation meta in one pass.

use serde_json::Value;
use tack_core::host::NewToolError;
use tack_core::tool::{Content, ErrorCode, ToolError};

use super::schema::check;
use crate::registry::RegisteredTool;

/// A value that passed the output schema, with its content and presentation meta.
pub(crate) struct Rendered {
    pub(crate) value: Value,
    pub(crate) content: Content,
    pub(crate) presentation: Option<Value>,
}

fn invalid(message: String) -> ToolError {
    ToolError::from_code(ErrorCode::OutputInvalid, message)
}

/// Validates `value` against `tool`'s output schema (the snapshot the call
/// resolved to: a tool unregistered meanwhile still vouches for the calls it
/// accepted), then renders content and presentation meta with the output's
/// projection: one pass, so a typed tool deserializes its output once.
pub(crate) fn render(
    tool: &RegisteredTool,
    arguments: &Value,
    value: Value,
) -> Result<Rendered, ToolError> {
    let definition = &tool.definition;
    if let Some(violations) = check(&tool.output, &value) {
        return Err(invalid(format!(
            "tool `{}` returned invalid output: {}",
            definition.name(),
            violations.message
        ))
        .with_pointer(violations.pointer));
    }
    let (content, presentation) = definition
        .output()
        .project_value(arguments, &value)
        .map_err(|e| {
            let failure = invalid(format!(
                "tool `{}` could not render its output or project its presentation meta: {e}",
                definition.name()
            ));
            // `render_failed` or `render_panicked`.
            match e.kind() {
                Some(kind) => failure.with_kind(kind),
                None => failure,
            }
        })?;
    Ok(Rendered {
        value,
        content,
        presentation,
    })
}
