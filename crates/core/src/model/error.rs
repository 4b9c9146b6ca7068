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
/// have none: the code being judged cannot make them up. A body that hands
/// on one the pipeline made for another call (read from that call's
/// outcome) fails with `EXECUTION_FAILED` and the same message: `DENIED`,
/// `UNKNOWN_TOOL` and `INTERNAL` are only ever this pipeline's verdict about
/// this call. Hosts build those (and
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
#[serde(into = "Wire", from = "Wire")]
#[error("{message}")]
pub struct ToolError {
    pub(crate) code: ErrorCode,
    pub(crate) message: String,
    pub(crate) kind: Option<String>,
    pub(crate) dispatched: bool,
    /// The parts few failures have, in one box: a failure without them
    /// (most) costs 8 bytes for them, and a body's `Result` stays small.
    extra: Option<Box<Extra>>,
}

/// The JSON pointer and the structured details of a failure.
#[derive(Clone, Debug, Default, PartialEq)]
struct Extra {
    pointer: Option<Box<str>>,
    data: Option<Value>,
}

/// A [`ToolError`] as written in session logs (an outcome's `error`): the
/// order of the fields is the order of the keys, and the skip rules and
/// defaults are the logs' too.
#[derive(Serialize, Deserialize)]
struct Wire {
    code: ErrorCode,
    message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pointer: Option<Box<str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
    #[serde(default)]
    dispatched: bool,
}

impl From<ToolError> for Wire {
    fn from(err: ToolError) -> Self {
        let Extra { pointer, data } = err.extra.map(|extra| *extra).unwrap_or_default();
        Wire {
            code: err.code,
            message: err.message,
            pointer,
            kind: err.kind,
            data,
            dispatched: err.dispatched,
        }
    }
}

impl From<Wire> for ToolError {
    fn from(wire: Wire) -> Self {
        let extra = (wire.pointer.is_some() || wire.data.is_some()).then(|| {
            Box::new(Extra {
                pointer: wire.pointer,
                data: wire.data,
            })
        });
        ToolError {
            code: wire.code,
            message: wire.message,
            kind: wire.kind,
            dispatched: wire.dispatched,
            extra,
        }
    }
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
            kind: None,
            dispatched: true,
            extra: None,
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
        self.extra.get_or_insert_default().data = Some(data);
        self
    }

    /// Sets the JSON pointer (for the host's schema failures).
    pub(crate) fn set_pointer(&mut self, pointer: Box<str>) {
        self.extra.get_or_insert_default().pointer = Some(pointer);
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
        self.extra.as_ref()?.data.as_ref()
    }

    /// For [`ErrorCode::InvalidArguments`] from the pipeline's schema
    /// check: the JSON pointer of the failing value (`""` for the arguments
    /// as a whole).
    pub fn pointer(&self) -> Option<&str> {
        self.extra.as_ref()?.pointer.as_deref()
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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::ToolError;

    #[test]
    fn a_body_result_stays_as_small_as_its_value_and_a_failure() {
        // Every call's body returns this `Result` through the pipeline's
        // hot path; the rare parts of a failure live behind one pointer.
        assert!(std::mem::size_of::<ToolError>() <= 64);
        assert!(std::mem::size_of::<Result<Value, ToolError>>() <= 64);
    }

    #[test]
    fn the_boxed_parts_read_back_and_are_written_in_the_logs_key_order() {
        let mut err = ToolError::new("bad").with_data(json!({"n": 1}));
        err.set_pointer("/n".into());
        assert_eq!(err.pointer(), Some("/n"));
        assert_eq!(err.data(), Some(&json!({"n": 1})));
        let text = serde_json::to_string(&err).unwrap();
        assert_eq!(
            text,
            r#"{"code":"EXECUTION_FAILED","message":"bad","pointer":"/n","data":{"n":1},"dispatched":true}"#
        );
        assert_eq!(serde_json::from_str::<ToolError>(&text).unwrap(), err);
        let plain = ToolError::new("plain");
        assert_eq!((plain.pointer(), plain.data()), (None, None));
        let back: ToolError =
            serde_json::from_str(&serde_json::to_string(&plain).unwrap()).unwrap();
        assert_eq!(
            back, plain,
            "no box appears for a failure without the rare parts"
        );
    }
}
