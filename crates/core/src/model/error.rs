//! Errors a tool body returns, and conversions from the capability errors.

use serde_json::Value;

use super::ErrorCode;

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

    /// A failure with another of the codes a tool may produce (e.g.
    /// [`ToolErrorCode::CodeRunFailed`] from `run_code`,
    /// [`ToolErrorCode::InvalidArguments`] for a check the schema cannot
    /// express). The pipeline's own codes (`DENIED`, `UNKNOWN_TOOL`,
    /// `INTERNAL`, ...) are not [`ToolErrorCode`]s, so a tool cannot claim them.
    pub fn with_code(code: ToolErrorCode, message: impl Into<String>) -> Self {
        Self::with_wire_code(code.into(), message)
    }

    /// Any wire code: for tack-core's own erasure of typed tools only.
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

/// The codes a tool body (or a `tools/execute` wrapper) may give a
/// [`ToolError`]: a subset of [`ErrorCode`]. The others — `UNKNOWN_TOOL`,
/// `DENIED`, `INTERNAL`, `OUTPUT_INVALID` — are the pipeline's verdicts about
/// a call and cannot be produced by the code being judged.
///
/// ```
/// use tack_core::tool::{ErrorCode, ToolError, ToolErrorCode};
/// let err = ToolError::with_code(ToolErrorCode::Timeout, "took too long");
/// assert_eq!(err.code(), ErrorCode::Timeout);
/// assert_eq!(ToolErrorCode::try_from(ErrorCode::Denied), Err(ErrorCode::Denied));
/// assert_eq!(ToolErrorCode::try_from(ErrorCode::Cancelled), Ok(ToolErrorCode::Cancelled));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolErrorCode {
    /// `EXECUTION_FAILED`: the work failed (the default of [`ToolError::new`]).
    ExecutionFailed,
    /// `INVALID_ARGUMENTS`: a check on the arguments the schema cannot express.
    InvalidArguments,
    /// `CANCELLED`: the body stopped because its cancellation signal fired.
    Cancelled,
    /// `TIMEOUT`: the call ran out of time (a deadline wrapper).
    Timeout,
    /// `CODE_RUN_FAILED`: a `run_code` program failed.
    CodeRunFailed,
}

impl From<ToolErrorCode> for ErrorCode {
    fn from(code: ToolErrorCode) -> Self {
        match code {
            ToolErrorCode::ExecutionFailed => ErrorCode::ExecutionFailed,
            ToolErrorCode::InvalidArguments => ErrorCode::InvalidArguments,
            ToolErrorCode::Cancelled => ErrorCode::Cancelled,
            ToolErrorCode::Timeout => ErrorCode::Timeout,
            ToolErrorCode::CodeRunFailed => ErrorCode::CodeRunFailed,
        }
    }
}

impl TryFrom<ErrorCode> for ToolErrorCode {
    /// The code, when it is one only the pipeline may produce.
    type Error = ErrorCode;

    fn try_from(code: ErrorCode) -> Result<Self, ErrorCode> {
        match code {
            ErrorCode::ExecutionFailed => Ok(ToolErrorCode::ExecutionFailed),
            ErrorCode::InvalidArguments => Ok(ToolErrorCode::InvalidArguments),
            ErrorCode::Cancelled => Ok(ToolErrorCode::Cancelled),
            ErrorCode::Timeout => Ok(ToolErrorCode::Timeout),
            ErrorCode::CodeRunFailed => Ok(ToolErrorCode::CodeRunFailed),
            other => Err(other),
        }
    }
}
