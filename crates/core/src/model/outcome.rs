//! Outcomes: the one normalized result every call ends in.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "host")]
use super::UnknownName;
use super::{ArgumentRewrite, CallId, Content, DeferredContext, ToolError};
use crate::hook::Provenance;

/// The wire codes of failed outcomes.
///
/// ```
/// use tack_core::tool::ErrorCode;
/// assert_eq!(ErrorCode::UnknownTool.as_str(), "UNKNOWN_TOOL");
/// assert_eq!(serde_json::to_string(&ErrorCode::InvalidArguments).unwrap(), "\"INVALID_ARGUMENTS\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum ErrorCode {
    /// No tool of that name is visible to the caller.
    UnknownTool,
    /// The arguments are not JSON, not an object, too large or too deep, or do
    /// not match the input schema.
    InvalidArguments,
    /// A policy, guard or approval outcome refused the call.
    Denied,
    /// The call was cancelled.
    Cancelled,
    /// The call ran out of time.
    Timeout,
    /// The tool body returned an error or panicked.
    ExecutionFailed,
    /// The tool's value does not match its output schema, or could not be rendered.
    OutputInvalid,
    /// A fault in the host or a hook listener.
    Internal,
    /// A `run_code` program failed (exception, limit, cancellation).
    CodeRunFailed,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [ErrorCode; 9] = [
        ErrorCode::UnknownTool,
        ErrorCode::InvalidArguments,
        ErrorCode::Denied,
        ErrorCode::Cancelled,
        ErrorCode::Timeout,
        ErrorCode::ExecutionFailed,
        ErrorCode::OutputInvalid,
        ErrorCode::Internal,
        ErrorCode::CodeRunFailed,
    ];

    /// The wire forms of [`ALL`](Self::ALL), in its order: the names
    /// [`from_str`](std::str::FromStr::from_str) accepts.
    #[cfg(feature = "host")]
    const WIRE_FORMS: [&'static str; 9] = {
        let mut forms = [""; 9];
        let mut i = 0;
        while i < forms.len() {
            forms[i] = Self::ALL[i].wire_form();
            i += 1;
        }
        forms
    };

    /// The wire form, e.g. `UNKNOWN_TOOL`.
    pub fn as_str(self) -> &'static str {
        self.wire_form()
    }

    const fn wire_form(self) -> &'static str {
        match self {
            ErrorCode::UnknownTool => "UNKNOWN_TOOL",
            ErrorCode::InvalidArguments => "INVALID_ARGUMENTS",
            ErrorCode::Denied => "DENIED",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::ExecutionFailed => "EXECUTION_FAILED",
            ErrorCode::OutputInvalid => "OUTPUT_INVALID",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::CodeRunFailed => "CODE_RUN_FAILED",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parsing a wire form (`TIMEOUT`), on the host's side: a plugin reads codes
/// as typed values (and serde reads them from a log without this).
#[cfg(feature = "host")]
impl std::str::FromStr for ErrorCode {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ErrorCode::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownName::new("error code", s, &Self::WIRE_FORMS))
    }
}

/// Success or failure of an outcome: flattened into it as
/// `"status": "ok", "value": …` or `"status": "error", "error": {…}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub(crate) enum Status {
    /// The tool produced a value that matches its output schema.
    Ok {
        /// The canonical value (validated, frozen), kept in the outcome's own
        /// allocation.
        value: Value,
    },
    /// The call failed.
    Error {
        /// Why.
        error: ToolError,
    },
}

/// The one normalized result of a tool call: what goes back into the model's
/// context, and what hosts log.
///
/// It is a success with a value ([`value`](Self::value)) or a failure
/// (a [`ToolError`]: [`failure_info`](Self::failure_info),
/// [`error_code`](Self::error_code)),
/// never both. The pipeline builds it (through `tack_core::host::NewOutcome`);
/// hooks and hosts read it:
///
/// ```
/// use tack_core::tool::{ErrorCode, Outcome};
///
/// fn was_denied(outcome: &Outcome) -> bool {
///     outcome.error_code() == Some(ErrorCode::Denied)
/// }
/// ```
///
/// Serialized (a session log, a transcript), the two cases are told apart by
/// `status`:
///
/// ```
/// use serde_json::json;
/// use tack_core::host::{NewOutcome, NewToolError};
/// use tack_core::tool::{CallId, ContentBlock, ErrorCode, Outcome, ToolError};
///
/// let ok = Outcome::success(CallId::from("c1"), "echo", json!("hi"), vec![ContentBlock::text("hi")]);
/// let ok = serde_json::to_value(&ok).unwrap();
/// assert_eq!((&ok["status"], &ok["value"]), (&json!("ok"), &json!("hi")));
///
/// let failed = Outcome::failure(CallId::from("c2"), "rm", ToolError::from_code(ErrorCode::Denied, "no"));
/// let failed = serde_json::to_value(&failed).unwrap();
/// assert_eq!((&failed["status"], &failed["error"]["code"]), (&json!("error"), &json!("DENIED")));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Outcome {
    /// The call's id.
    pub call_id: CallId,
    /// The tool name as called (possibly unknown).
    pub tool: String,
    /// Success with a value, or failure with a code.
    #[serde(flatten)]
    pub(crate) status: Status,
    /// What the model reads.
    pub content: Content,
    /// UI-only data (e.g. an edit's diff), never shown to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presentation: Option<Value>,
    /// Which hook listener, guard or approval decided a denial, block,
    /// replacement or timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// Context the loop appends after this call's result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deferred_context: Vec<DeferredContext>,
    /// Whether the tool concluded the turn (only on success).
    #[serde(default)]
    pub concluded_turn: bool,
    /// Facts the pipeline adds (e.g. "cancellation arrived after the tool completed").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// When a `tools/pre-execute` listener rewrote the arguments: the
    /// original, the rewrite and who made it (also when the rewrite was
    /// invalid and the call failed for it). Read through
    /// [`original_arguments`](Self::original_arguments),
    /// [`rewritten_arguments`](Self::rewritten_arguments) and
    /// [`rewritten_by`](Self::rewritten_by).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rewrite: Option<Arc<ArgumentRewrite>>,
    /// Whether a `tools/post-execute` listener replaced the content (e.g. to
    /// redact it): the model read the replacement, not what the tool
    /// rendered, so a durable record keeps the content and not the value
    /// (see [`as_logged`](Self::as_logged)).
    #[serde(default, skip_serializing_if = "is_false")]
    pub content_replaced: bool,
}

fn is_false(flag: &bool) -> bool {
    !*flag
}

impl Outcome {
    pub(crate) fn with_status(
        call_id: CallId,
        tool: String,
        status: Status,
        content: Content,
    ) -> Self {
        Self {
            call_id,
            tool,
            status,
            content,
            presentation: None,
            provenance: None,
            deferred_context: Vec::new(),
            concluded_turn: false,
            notes: Vec::new(),
            rewrite: None,
            content_replaced: false,
        }
    }

    /// The outcome as a durable record (a session log, a transcript) keeps
    /// it: what the model saw (the content), the error, the meta — and the
    /// canonical value only when no `tools/post-execute` listener replaced
    /// the content ([`content_replaced`](Self::content_replaced)). Whatever
    /// a listener hid from the model is not persisted either: the value of
    /// such a success is `null` here. The outcome itself is returned (not
    /// copied) when there is nothing to leave out.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use serde_json::{Value, json};
    /// use tack_core::host::NewOutcome;
    /// use tack_core::tool::{CallId, ContentBlock, Outcome};
    ///
    /// let mut outcome = Outcome::success(CallId::from("c1"), "read", json!("SECRET=1"), vec![ContentBlock::text("SECRET=1")]);
    /// outcome.content = vec![ContentBlock::text("[redacted]")].into();
    /// outcome.content_replaced = true;
    /// let logged = Arc::new(outcome).as_logged();
    /// assert_eq!(logged.value(), Some(&Value::Null));
    /// assert!(!serde_json::to_string(&*logged).unwrap().contains("SECRET"));
    /// ```
    pub fn as_logged(self: &Arc<Self>) -> Arc<Self> {
        if !self.content_replaced || !self.is_success() {
            return Arc::clone(self);
        }
        let mut logged = Self::clone(self);
        logged.status = Status::Ok { value: Value::Null };
        Arc::new(logged)
    }

    /// Whether the call succeeded.
    pub fn is_success(&self) -> bool {
        matches!(self.status, Status::Ok { .. })
    }

    /// The value of a success: the canonical value (validated against the
    /// tool's output schema, frozen). It is kept in the outcome's own
    /// allocation: share the outcome (it is handed around as an
    /// `Arc<Outcome>`) rather than the value.
    pub fn value(&self) -> Option<&Value> {
        match &self.status {
            Status::Ok { value } => Some(value),
            Status::Error { .. } => None,
        }
    }

    /// The value of a success or the failure, for a reader that handles
    /// both.
    ///
    /// ```
    /// use tack_core::tool::Outcome;
    ///
    /// fn describe(outcome: &Outcome) -> String {
    ///     match outcome.result() {
    ///         Ok(value) => format!("{} returned {value}", outcome.tool),
    ///         Err(error) => format!("{} failed: {}", outcome.tool, error.code()),
    ///     }
    /// }
    /// ```
    ///
    /// # Errors
    ///
    /// The [`ToolError`] of a failed call.
    pub fn result(&self) -> Result<&Value, &ToolError> {
        match &self.status {
            Status::Ok { value } => Ok(value),
            Status::Error { error } => Err(error),
        }
    }

    /// Why the call failed, if it did.
    pub fn failure_info(&self) -> Option<&ToolError> {
        match &self.status {
            Status::Ok { .. } => None,
            Status::Error { error } => Some(error),
        }
    }

    /// The error code, if the call failed.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.failure_info().map(ToolError::code)
    }

    /// The arguments the model sent, when a `tools/pre-execute` listener (or
    /// the approval) rewrote them; `None` when the call ran with the
    /// model's own arguments. A session log keeps it (`rewrite.original`).
    ///
    /// ```
    /// use tack_core::tool::Outcome;
    ///
    /// fn describe_rewrite(outcome: &Outcome) -> Option<String> {
    ///     let by = outcome.rewritten_by().map_or("a listener".to_owned(), ToString::to_string);
    ///     Some(format!(
    ///         "{by} rewrote {} into {}",
    ///         outcome.original_arguments()?,
    ///         outcome.rewritten_arguments()?,
    ///     ))
    /// }
    /// ```
    pub fn original_arguments(&self) -> Option<&Arc<Value>> {
        self.rewrite.as_ref().map(|r| &r.original)
    }

    /// The arguments a listener put in place of the model's (also when the
    /// rewrite was invalid and the call failed for it, or when the decision
    /// that rewrote them denied the call); `None` without a rewrite.
    pub fn rewritten_arguments(&self) -> Option<&Arc<Value>> {
        self.rewrite.as_ref().map(|r| &r.rewritten)
    }

    /// Who rewrote the arguments (`tools/pre-execute › listener <name>`), when
    /// a rewrite is recorded and its maker known.
    pub fn rewritten_by(&self) -> Option<&Provenance> {
        self.rewrite.as_ref().and_then(|r| r.by.as_ref())
    }
}
