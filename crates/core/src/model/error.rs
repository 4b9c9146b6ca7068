//! Why a call failed: the one error type of a tool body and of an outcome.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ErrorCode;

/// Why a call failed: what a tool body returns when it fails, and what a
/// failed [`Outcome`](crate::tool::Outcome) carries
/// ([`failure_info`](crate::tool::Outcome::failure_info),
/// [`result`](crate::tool::Outcome::result)).
///
/// It has a wire [`code`](Self::code), a [`message`](Self::message) the
/// model can act on, and optionally a short machine-readable
/// [`kind`](Self::kind) (`ENOENT`, `not_unique`) and structured
/// [`data`](Self::data) for hosts and programs; the pipeline adds the JSON
/// [`pointer`](Self::pointer) of a failing argument and whether the body had
/// been [`dispatched`](Self::dispatched).
///
/// [`new`](Self::new) is an [`ErrorCode::ExecutionFailed`]; the other codes a
/// tool may produce have constructors of their own:
/// [`invalid_arguments`](Self::invalid_arguments),
/// [`cancelled`](Self::cancelled), [`timeout`](Self::timeout) and
/// [`code_run_failed`](Self::code_run_failed). The pipeline's own verdicts
/// about a call (`DENIED`, `UNKNOWN_TOOL`, `INTERNAL`, `OUTPUT_INVALID`)
/// have none: the code being judged cannot make them up (it can only pass
/// on one the pipeline made, read from an outcome). Hosts build those (and
/// set the pointer and `dispatched`) through the sealed
/// `tack_core::host::NewToolError`.
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
///
/// Serialized (in an outcome's `error`), the optional parts are left out
/// when absent, and `dispatched` reads back as `false` when missing:
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::{ErrorCode, ToolError};
/// let err = ToolError::new("boom").with_kind("ENOENT");
/// assert_eq!(
///     serde_json::to_value(&err).unwrap(),
///     json!({"code": "EXECUTION_FAILED", "message": "boom", "kind": "ENOENT", "dispatched": true}),
/// );
/// let read: ToolError = serde_json::from_value(json!({"code": "DENIED", "message": "no"})).unwrap();
/// assert_eq!((read.code(), read.pointer(), read.dispatched()), (ErrorCode::Denied, None, false));
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[error("{message}")]
pub struct ToolError {
    // The order of the fields is the order of the keys in written session
    // logs (an outcome's `error`); the skip rules and defaults are theirs too.
    pub(crate) code: ErrorCode,
    pub(crate) message: String,
    // Boxed like `data`: set on schema failures only, it costs a failure
    // that has none 16 bytes, not 24.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pointer: Option<Box<str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) data: Option<Box<Value>>,
    #[serde(default)]
    pub(crate) dispatched: bool,
}

impl ToolError {
    /// `EXECUTION_FAILED`: the work failed.
    pub fn new(message: impl Into<String>) -> Self {
        Self::with_wire_code(ErrorCode::ExecutionFailed, message)
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

    /// Any wire code: for tack-core's own errors (a typed tool's value that
    /// is not JSON, a renderer that failed) and, through
    /// `tack_core::host::NewToolError`, the host's. Dispatched, as an error a
    /// body returns is.
    pub(crate) fn with_wire_code(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            pointer: None,
            kind: None,
            data: None,
            dispatched: true,
        }
    }

    /// `CANCELLED`, not dispatched: the call was cancelled before its tool
    /// started.
    pub(crate) fn cancelled_before_start(tool: &str) -> Self {
        Self {
            dispatched: false,
            ..Self::cancelled(format!(
                "the call of tool `{tool}` was cancelled before the tool started; nothing was done"
            ))
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

    /// The wire code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// What was wrong and how to fix it, for the model.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The short machine-readable reason, if any: the tool's own
    /// (`ENOENT`), or the pipeline's (`render_failed`, `render_panicked`,
    /// `INVALID_REWRITE`).
    pub fn kind(&self) -> Option<&str> {
        self.kind.as_deref()
    }

    /// The structured details from the tool, if any.
    pub fn data(&self) -> Option<&Value> {
        self.data.as_deref()
    }

    /// For [`ErrorCode::InvalidArguments`] from the pipeline's schema
    /// check: the JSON pointer of the failing value (`""` for the arguments
    /// as a whole).
    pub fn pointer(&self) -> Option<&str> {
        self.pointer.as_deref()
    }

    /// Whether the tool body had been dispatched when the call failed (what
    /// a `CANCELLED` outcome needs to say). An error built with the
    /// constructors above is one a body (or a `tools/execute` wrapper)
    /// returns, so it says `true`; in an outcome, the pipeline has set it
    /// to what happened. Read back from a record that lacks it: `false`.
    pub fn dispatched(&self) -> bool {
        self.dispatched
    }
}
