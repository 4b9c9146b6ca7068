//! Errors a tool body returns, and conversions from the capability errors.

use serde_json::Value;

use super::ErrorCode;
use crate::capability::{CapabilityError, FsError, ShellError};

/// What a tool body returns when it fails: a message the model can act on.
///
/// The pipeline turns it into an [`ErrorCode::ExecutionFailed`] outcome unless
/// another code is set. An optional `kind` carries a short machine-readable
/// reason (`ENOENT`, `not_unique`) for hosts and programs.
///
/// ```
/// use tack_core::tool::{ErrorCode, ToolError};
/// let err = ToolError::new("no such file: README.md").with_kind("ENOENT");
/// assert_eq!(err.code(), ErrorCode::ExecutionFailed);
/// assert_eq!(err.kind(), Some("ENOENT"));
/// assert_eq!(err.to_string(), "no such file: README.md");
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    pub(crate) code: ErrorCode,
    pub(crate) message: String,
    pub(crate) kind: Option<String>,
    pub(crate) data: Option<Box<Value>>,
}

impl ToolError {
    /// An execution failure with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            code: ErrorCode::ExecutionFailed,
            message: message.into(),
            kind: None,
            data: None,
        }
    }

    /// A failure with another code (e.g. [`ErrorCode::CodeRunFailed`] from `run_code`,
    /// [`ErrorCode::InvalidArguments`] for a check the schema cannot express).
    pub fn with_code(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            ..Self::new(message)
        }
    }

    /// Attaches a short machine-readable reason.
    pub fn with_kind(mut self, kind: impl Into<String>) -> Self {
        self.kind = Some(kind.into());
        self
    }

    /// Attaches structured details.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(Box::new(data));
        self
    }

    /// The code the outcome will carry.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The machine-readable reason, if any.
    pub fn kind(&self) -> Option<&str> {
        self.kind.as_deref()
    }

    /// The structured details, if any.
    pub fn data(&self) -> Option<&Value> {
        self.data.as_deref()
    }
}

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
            ErrorCode::Cancelled
        } else {
            ErrorCode::ExecutionFailed
        };
        ToolError::with_code(code, err.to_string()).with_kind(kind)
    }
}

impl From<CapabilityError> for ToolError {
    fn from(err: CapabilityError) -> Self {
        ToolError::new(err.to_string()).with_kind("capability_missing")
    }
}
