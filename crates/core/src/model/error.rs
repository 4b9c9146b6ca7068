//! Errors a tool body returns, and conversions from the capability errors.

use serde_json::Value;

use super::ErrorCode;

/// What a tool body returns when it fails: a message the model can act on.
///
/// [`new`](Self::new) is an [`ErrorCode::ExecutionFailed`]; the other codes a
/// tool may produce have constructors of their own:
/// [`invalid_arguments`](Self::invalid_arguments),
/// [`cancelled`](Self::cancelled), [`timeout`](Self::timeout) and
/// [`code_run_failed`](Self::code_run_failed). The pipeline's own verdicts
/// about a call (`DENIED`, `UNKNOWN_TOOL`, `INTERNAL`, `OUTPUT_INVALID`)
/// have none: the code being judged cannot claim them. An optional `kind`
/// carries a short machine-readable reason (`ENOENT`, `not_unique`) for hosts
/// and programs.
///
/// ```
/// use tack_core::tool::{ErrorCode, ToolError};
/// let err = ToolError::new("no such file: README.md").with_kind("ENOENT");
/// assert_eq!(err.code(), ErrorCode::ExecutionFailed);
/// assert_eq!(err.kind(), Some("ENOENT"));
/// assert_eq!(err.to_string(), "no such file: README.md");
///
/// let err = ToolError::timeout("timed out after 5000 ms");
/// assert_eq!(err.code(), ErrorCode::Timeout);
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
    /// `EXECUTION_FAILED`: the work failed.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            code: ErrorCode::ExecutionFailed,
            message: message.into(),
            kind: None,
            data: None,
        }
    }

    /// `INVALID_ARGUMENTS`: a check on the arguments the input schema cannot
    /// express (a pattern that does not compile, two fields that exclude
    /// each other).
    ///
    /// ```
    /// use tack_core::tool::{ErrorCode, ToolError};
    /// let err = ToolError::invalid_arguments("`old` and `new` are the same text");
    /// assert_eq!(err.code(), ErrorCode::InvalidArguments);
    /// ```
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        Self::with_wire_code(ErrorCode::InvalidArguments, message)
    }

    /// `CANCELLED`: the body stopped because its cancellation signal fired.
    pub fn cancelled(message: impl Into<String>) -> Self {
        Self::with_wire_code(ErrorCode::Cancelled, message)
    }

    /// `TIMEOUT`: the call ran out of time (what a deadline wrapper of
    /// `tools/execute` returns).
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::with_wire_code(ErrorCode::Timeout, message)
    }

    /// `CODE_RUN_FAILED`: a `run_code` program failed (an exception, a
    /// limit).
    pub fn code_run_failed(message: impl Into<String>) -> Self {
        Self::with_wire_code(ErrorCode::CodeRunFailed, message)
    }

    /// Any wire code: for tack-core's own errors only (a typed tool's value
    /// that is not JSON, a renderer that failed).
    pub(crate) fn with_wire_code(code: ErrorCode, message: impl Into<String>) -> Self {
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
