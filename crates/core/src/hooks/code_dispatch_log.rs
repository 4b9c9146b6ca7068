//! `tools/code-dispatch-log` and `tools/code-dispatch`: the durable record of
//! the tool calls a `run_code` program makes.

use crate::hook::Provenance;
use crate::tool::{CallId, ContentBlock, ErrorCode};

/// One record of a tool call made by a `run_code` program: for every sub-call
/// the program started, one [`Started`](Self::Started) and then exactly one
/// [`Settled`](Self::Settled). These are log records for hosts; they never
/// become model messages.
///
/// Each record passes through the `tools/code-dispatch-log` waterfall first,
/// which may rewrite what is logged (bound the content's size, redact a
/// secret from the arguments — in both records of the sub-call, since both
/// pass through it); the program's value and the model-visible `run_code`
/// result are untouched. The hook's default is identity. Then
/// `tools/code-dispatch` observers see the record as the waterfall left it.
/// (Two phases, complete: the enum is exhaustive so hosts can match it
/// fully.)
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use tack_core::hooks::{CodeDispatchEvent, ToolHooks};
/// use tack_core::tool::{CallId, ContentBlock};
///
/// let hooks = ToolHooks::new();
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = Arc::clone(&seen);
/// let _log = hooks.code_dispatch().tap("session-log", move |event: &Arc<CodeDispatchEvent>| {
///     sink.lock().unwrap().push(format!("{} {}", event.call_id(), event.is_settled()));
/// });
/// let start = CodeDispatchEvent::started(CallId::from("c1"), CallId::from("c1:code:1"), "ls", "{}");
/// hooks.code_dispatch().notify(None, &Arc::new(start));
///
/// let settled = CodeDispatchEvent::settled(
///     CallId::from("c1"),
///     CallId::from("c1:code:1"),
///     "ls",
///     "{}",
///     None,
///     vec![ContentBlock::text("README.md")],
/// );
/// assert!(!settled.is_error());
/// let bounded = settled.with_content(vec![ContentBlock::text("(9 bytes, not logged)")]);
/// assert_eq!(bounded.content()[0].as_text(), Some("(9 bytes, not logged)"));
/// hooks.code_dispatch().notify(None, &Arc::new(bounded));
/// assert_eq!(*seen.lock().unwrap(), ["c1:code:1 false", "c1:code:1 true"]);
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
        /// The arguments as the program passed them (JSON text), as
        /// `tools/code-dispatch-log` left them.
        arguments: String,
        /// Who last rewrote the record (stamped by the hook point).
        provenance: Option<Provenance>,
    },
    /// The sub-call settled. Built with [`settled`](Self::settled).
    #[non_exhaustive]
    Settled {
        /// The `run_code` call.
        parent_call_id: CallId,
        /// The nested call (`<parent>:code:<n>`).
        call_id: CallId,
        /// The tool called.
        tool: String,
        /// The arguments as the program passed them (JSON text), as
        /// `tools/code-dispatch-log` left them.
        arguments: String,
        /// The failure code, `None` for a success.
        error: Option<ErrorCode>,
        /// The content to log: the sub-call's complete final content, as
        /// `tools/code-dispatch-log` left it.
        content: Vec<ContentBlock>,
        /// Who last rewrote the record (stamped by the hook point).
        provenance: Option<Provenance>,
    },
}

impl CodeDispatchEvent {
    /// The record of a sub-call that started.
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
            provenance: None,
        }
    }

    /// The record of a sub-call that settled: its failure code (`None` for a
    /// success) and its final content.
    pub fn settled(
        parent_call_id: CallId,
        call_id: CallId,
        tool: impl Into<String>,
        arguments: impl Into<String>,
        error: Option<ErrorCode>,
        content: Vec<ContentBlock>,
    ) -> Self {
        CodeDispatchEvent::Settled {
            parent_call_id,
            call_id,
            tool: tool.into(),
            arguments: arguments.into(),
            error,
            content,
            provenance: None,
        }
    }

    /// The sub-call's id.
    pub fn call_id(&self) -> &CallId {
        match self {
            CodeDispatchEvent::Started { call_id, .. }
            | CodeDispatchEvent::Settled { call_id, .. } => call_id,
        }
    }

    /// The `run_code` call's id.
    pub fn parent_call_id(&self) -> &CallId {
        match self {
            CodeDispatchEvent::Started { parent_call_id, .. }
            | CodeDispatchEvent::Settled { parent_call_id, .. } => parent_call_id,
        }
    }

    /// The tool called.
    pub fn tool(&self) -> &str {
        match self {
            CodeDispatchEvent::Started { tool, .. } | CodeDispatchEvent::Settled { tool, .. } => {
                tool
            }
        }
    }

    /// The logged arguments (JSON text).
    pub fn arguments(&self) -> &str {
        match self {
            CodeDispatchEvent::Started { arguments, .. }
            | CodeDispatchEvent::Settled { arguments, .. } => arguments,
        }
    }

    /// Whether the sub-call has settled (this is its second record).
    pub fn is_settled(&self) -> bool {
        matches!(self, CodeDispatchEvent::Settled { .. })
    }

    /// The failure code of a settled sub-call; `None` for a success and for
    /// a start.
    pub fn error(&self) -> Option<ErrorCode> {
        match self {
            CodeDispatchEvent::Started { .. } => None,
            CodeDispatchEvent::Settled { error, .. } => *error,
        }
    }

    /// Whether the sub-call settled with a failure.
    pub fn is_error(&self) -> bool {
        self.error().is_some()
    }

    /// The logged content of a settled sub-call; empty for a start.
    pub fn content(&self) -> &[ContentBlock] {
        match self {
            CodeDispatchEvent::Started { .. } => &[],
            CodeDispatchEvent::Settled { content, .. } => content,
        }
    }

    /// Who last rewrote the record, if a `tools/code-dispatch-log` listener
    /// did.
    pub fn provenance(&self) -> Option<&Provenance> {
        self.provenance_ref().as_ref()
    }

    fn provenance_ref(&self) -> &Option<Provenance> {
        match self {
            CodeDispatchEvent::Started { provenance, .. }
            | CodeDispatchEvent::Settled { provenance, .. } => provenance,
        }
    }

    /// Where the hook point stamps who rewrote the record.
    pub(crate) fn provenance_slot(&mut self) -> Option<&mut Option<Provenance>> {
        match self {
            CodeDispatchEvent::Started { provenance, .. }
            | CodeDispatchEvent::Settled { provenance, .. } => Some(provenance),
        }
    }

    /// Replaces the logged content of a settled sub-call (a start has none
    /// and is returned unchanged), clearing the provenance so the hook point
    /// stamps the listener that did it.
    #[must_use]
    pub fn with_content(mut self, new_content: Vec<ContentBlock>) -> Self {
        if let CodeDispatchEvent::Settled {
            content,
            provenance,
            ..
        } = &mut self
        {
            *content = new_content;
            *provenance = None;
        }
        self
    }

    /// Replaces the logged arguments (e.g. to redact a secret), clearing the
    /// provenance so the hook point stamps the listener that did it.
    #[must_use]
    pub fn with_arguments(mut self, new_arguments: impl Into<String>) -> Self {
        match &mut self {
            CodeDispatchEvent::Started {
                arguments,
                provenance,
                ..
            }
            | CodeDispatchEvent::Settled {
                arguments,
                provenance,
                ..
            } => {
                *arguments = new_arguments.into();
                *provenance = None;
            }
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settled() -> CodeDispatchEvent {
        CodeDispatchEvent::settled(
            CallId::from("c1"),
            CallId::from("c1:code:1"),
            "read_file",
            r#"{"path":"a"}"#,
            Some(ErrorCode::ExecutionFailed),
            vec![ContentBlock::text("boom")],
        )
    }

    #[test]
    fn a_start_has_no_content_and_no_error() {
        let start =
            CodeDispatchEvent::started(CallId::from("c1"), CallId::from("c1:code:1"), "ls", "{}");
        assert!(!start.is_settled() && !start.is_error());
        assert!(start.content().is_empty());
        assert_eq!((start.tool(), start.arguments()), ("ls", "{}"));
        assert_eq!(start.parent_call_id().as_str(), "c1");
        // Content cannot be given to a start.
        assert_eq!(
            start.clone().with_content(vec![ContentBlock::text("x")]),
            start
        );
    }

    #[test]
    fn rewriting_a_record_clears_its_provenance_in_both_phases() {
        let stamp = Some(Provenance::listener("tools/code-dispatch-log", "redact"));
        for mut event in [
            CodeDispatchEvent::started(CallId::from("c1"), CallId::from("c1:code:1"), "ls", "{}"),
            settled(),
        ] {
            *event.provenance_slot().expect("a slot") = stamp.clone();
            assert_eq!(event.provenance(), stamp.as_ref());
            let redacted = event.with_arguments("{\"path\":\"[redacted]\"}");
            assert_eq!(redacted.arguments(), "{\"path\":\"[redacted]\"}");
            assert_eq!(redacted.provenance(), None);
        }
        let mut event = settled();
        *event.provenance_slot().expect("a slot") = stamp;
        let bounded = event.with_content(Vec::new());
        assert!(bounded.content().is_empty() && bounded.provenance().is_none());
        assert_eq!(bounded.error(), Some(ErrorCode::ExecutionFailed));
    }
}
