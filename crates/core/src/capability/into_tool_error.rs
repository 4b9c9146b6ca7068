//! A capability's errors as the tool error a body returns with `?`.

use super::{CapabilityError, FsError, ShellError};
use crate::model::{ToolError, ToolErrorCode};

impl From<FsError> for ToolError {
    fn from(err: FsError) -> Self {
        let kind = err.kind_name();
        ToolError::new(err.to_string()).with_kind(kind)
    }
}

impl From<ShellError> for ToolError {
    fn from(err: ShellError) -> Self {
        let kind = match &err {
            ShellError::Refused { .. } => "refused",
            ShellError::EmptyCommand => "empty_command",
            ShellError::Spawn { .. } => "spawn_failed",
            ShellError::Cancelled => "cancelled",
            _ => "io",
        };
        let code = if matches!(err, ShellError::Cancelled) {
            ToolErrorCode::Cancelled
        } else {
            ToolErrorCode::ExecutionFailed
        };
        ToolError::with_code(code, err.to_string()).with_kind(kind)
    }
}

impl From<CapabilityError> for ToolError {
    fn from(err: CapabilityError) -> Self {
        ToolError::new(err.to_string()).with_kind("capability_missing")
    }
}
