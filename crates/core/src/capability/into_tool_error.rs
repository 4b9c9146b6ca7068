//! A capability's error as the tool error a body returns with `?`.

use super::CapabilityError;
use crate::model::{ToolError, ToolErrorCode};

impl From<CapabilityError> for ToolError {
    fn from(err: CapabilityError) -> Self {
        let code = if matches!(err, CapabilityError::Cancelled) {
            ToolErrorCode::Cancelled
        } else {
            ToolErrorCode::ExecutionFailed
        };
        ToolError::with_code(code, err.to_string()).with_kind(err.kind_name())
    }
}
