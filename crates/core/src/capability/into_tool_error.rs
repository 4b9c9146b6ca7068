//! A capability's error as the tool error a body returns with `?`.

use super::CapabilityError;
use crate::model::ToolError;

impl From<CapabilityError> for ToolError {
    fn from(err: CapabilityError) -> Self {
        let kind = err.kind_name();
        if matches!(err, CapabilityError::Cancelled) {
            ToolError::cancelled(err.to_string())
        } else {
            ToolError::new(err.to_string())
        }
        .with_kind(kind)
    }
}
