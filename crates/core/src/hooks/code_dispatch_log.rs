//! `tools/code-dispatch-log` and `tools/code-dispatch`: the durable record of
//! the tool calls a `run_code` program makes.

use crate::hook::Provenance;
use crate::tool::{CallId, ContentBlock, ErrorCode};

/// The log record of one settled tool call made by a `run_code` program. The
/// `tools/code-dispatch-log` waterfall may rewrite its content or arguments
/// (e.g. bound their size, redact a secret); the program's value and the
/// model-visible `run_code` result are untouched. The hook's default is
/// identity.
///
/// ```
/// use tack_core::hooks::CodeDispatchLogEntry;
/// use tack_core::tool::{CallId, ContentBlock};
///
/// let entry = CodeDispatchLogEntry::new(
///     CallId::from("c1"),
///     CallId::from("c1:code:1"),
///     "read_file",
///     r#"{"path":"README.md"}"#,
///     None,
///     vec![ContentBlock::text("# tack")],
/// );
/// assert!(!entry.is_error());
/// let bounded = entry.with_content(vec![ContentBlock::text("(6 bytes, not logged)")]);
/// assert_eq!(bounded.content[0].as_text(), Some("(6 bytes, not logged)"));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CodeDispatchLogEntry {
    /// The `run_code` call.
    pub parent_call_id: CallId,
    /// The nested call (`<parent>:code:<n>`).
    pub call_id: CallId,
    /// The tool called.
    pub tool: String,
    /// The arguments as the program passed them (JSON text).
    pub arguments: String,
    /// The failure code, `None` for a success.
    pub error: Option<ErrorCode>,
    /// The content to log: the sub-call's complete final content.
    pub content: Vec<ContentBlock>,
    /// Who last rewrote the record (stamped by the hook point).
    pub provenance: Option<Provenance>,
}

impl CodeDispatchLogEntry {
    /// A record.
    pub fn new(
        parent_call_id: CallId,
        call_id: CallId,
        tool: impl Into<String>,
        arguments: impl Into<String>,
        error: Option<ErrorCode>,
        content: Vec<ContentBlock>,
    ) -> Self {
        Self {
            parent_call_id,
            call_id,
            tool: tool.into(),
            arguments: arguments.into(),
            error,
            content,
            provenance: None,
        }
    }

    /// Whether the sub-call failed.
    pub fn is_error(&self) -> bool {
        self.error.is_some()
    }

    /// Replaces the content, clearing the provenance so the hook point stamps
    /// the listener that did it.
    #[must_use]
    pub fn with_content(mut self, content: Vec<ContentBlock>) -> Self {
        self.content = content;
        self.provenance = None;
        self
    }

    /// Replaces the logged arguments (e.g. to redact a secret), clearing the
    /// provenance so the hook point stamps the listener that did it.
    #[must_use]
    pub fn with_arguments(mut self, arguments: impl Into<String>) -> Self {
        self.arguments = arguments.into();
        self.provenance = None;
        self
    }
}

/// What `tools/code-dispatch` observers see: for every sub-call a program
/// started, one [`Started`](Self::Started) and then exactly one
/// [`Settled`](Self::Settled) (after `tools/code-dispatch-log` rewrote it).
/// These are log records for hosts; they never become model messages. (Two
/// phases, complete: the enum is exhaustive so hosts can match it fully.)
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use tack_core::hooks::{CodeDispatchEvent, ToolHooks};
/// use tack_core::tool::CallId;
///
/// let hooks = ToolHooks::new();
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = Arc::clone(&seen);
/// let _log = hooks.code_dispatch().tap("session-log", move |event: &Arc<CodeDispatchEvent>| {
///     sink.lock().unwrap().push(event.call_id().to_string());
/// });
/// let start = CodeDispatchEvent::started(CallId::from("c1"), CallId::from("c1:code:1"), "ls", "{}");
/// hooks.code_dispatch().notify(None, &Arc::new(start));
/// assert_eq!(*seen.lock().unwrap(), ["c1:code:1"]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum CodeDispatchEvent {
    /// The sub-call was dispatched into the pipeline (a call the program
    /// queued but the run abandoned never starts). Built with
    /// [`started`](Self::started).
    #[non_exhaustive]
    Started {
        /// The `run_code` call.
        parent_call_id: CallId,
        /// The nested call (`<parent>:code:<n>`).
        call_id: CallId,
        /// The tool called.
        tool: String,
        /// The arguments as the program passed them (JSON text).
        arguments: String,
    },
    /// The sub-call settled; the record as `tools/code-dispatch-log` left it.
    Settled(CodeDispatchLogEntry),
}

impl CodeDispatchEvent {
    /// The event of a sub-call that started.
    pub fn started(
        parent_call_id: CallId,
        call_id: CallId,
        tool: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        CodeDispatchEvent::Started {
            parent_call_id,
            call_id,
            tool: tool.into(),
            arguments: arguments.into(),
        }
    }

    /// The sub-call's id.
    pub fn call_id(&self) -> &CallId {
        match self {
            CodeDispatchEvent::Started { call_id, .. } => call_id,
            CodeDispatchEvent::Settled(entry) => &entry.call_id,
        }
    }

    /// The `run_code` call's id.
    pub fn parent_call_id(&self) -> &CallId {
        match self {
            CodeDispatchEvent::Started { parent_call_id, .. } => parent_call_id,
            CodeDispatchEvent::Settled(entry) => &entry.parent_call_id,
        }
    }
}
