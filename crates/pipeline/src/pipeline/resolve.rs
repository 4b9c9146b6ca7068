//! Stage 1, resolve: the called name, in the caller's scope, to an immutable
//! snapshot of the registered tool ([`Resolved`]).

use std::sync::Arc;

use tack_core::host::NewToolError;
use tack_core::tool::{ErrorCode, ToolCall, ToolError};
use tokio_util::sync::CancellationToken;

use super::{Executed, Parsed, Pipeline, Stage};
use crate::registry::{RUN_CODE, RegisteredTool};

/// The `kind` of the failure of a native tool called directly in code mode.
pub(crate) const CODE_MODE_DIRECT_CALL: &str = "code_mode_direct_call";

/// A call and the registered tool it resolved to. The tool is held, not
/// looked up again: unregistering it meanwhile does not change this call.
pub(crate) struct Resolved {
    pub(crate) call: ToolCall,
    pub(crate) tool: Arc<RegisteredTool>,
}

/// A call whose name the caller cannot see.
pub(crate) struct Unresolved {
    pub(crate) call: ToolCall,
    pub(crate) failure: ToolError,
}

/// A call after the first two stages, as the scheduler plans from it and the
/// pipeline continues it.
pub(crate) enum Prepared {
    /// Unknown or hidden: ends at once.
    Unresolved(Box<Unresolved>),
    /// Its arguments were refused: ends at once (finalized as its tool's).
    Refused(Box<Executed>),
    /// Ready for admission.
    Parsed(Parsed),
}

impl Prepared {
    /// The call.
    pub(crate) fn call(&self) -> &ToolCall {
        match self {
            Prepared::Unresolved(u) => &u.call,
            Prepared::Refused(e) => &e.call,
            Prepared::Parsed(p) => &p.resolved.call,
        }
    }

    /// The tool it resolved to, if any.
    pub(crate) fn tool(&self) -> Option<&Arc<RegisteredTool>> {
        match self {
            Prepared::Unresolved(_) => None,
            Prepared::Refused(e) => Some(&e.tool),
            Prepared::Parsed(p) => Some(&p.resolved.tool),
        }
    }

    /// Takes the call back (to prepare it again), with its argument text.
    pub(crate) fn into_call(self) -> ToolCall {
        match self {
            Prepared::Unresolved(u) => u.call,
            Prepared::Refused(e) => e.call,
            Prepared::Parsed(p) => {
                let mut call = p.resolved.call;
                call.arguments = p.arguments.into_text();
                call
            }
        }
    }
}

/// A called name as messages quote it: at most 64 characters (more is
/// elided), backticks replaced, so a hostile name cannot bloat or break the
/// message.
pub(crate) fn quoted_name(name: &str) -> String {
    let mut shown: String = name
        .chars()
        .take(64)
        .map(|c| if c == '`' { '\'' } else { c })
        .collect();
    if name.chars().count() > 64 {
        shown.push('…');
    }
    shown
}

/// The failure for a name the caller cannot see. The same for a missing and a
/// hidden tool, so scope leaks nothing.
pub(crate) fn unknown(name: &str) -> ToolError {
    ToolError::from_code(
        ErrorCode::UnknownTool,
        format!(
            "unknown tool `{}`: call one of the tools you were given, by its exact name",
            quoted_name(name)
        ),
    )
}

impl Pipeline {
    /// Finds the tool the caller named, as the caller's agent sees it. In code
    /// presentation a model-direct call (no parent token) of a native tool is
    /// unknown, with a message naming the route.
    pub(crate) fn resolve(&self, call: ToolCall) -> Result<Resolved, Box<Unresolved>> {
        self.record(&call.call_id, Stage::Resolve);
        match self.lookup(&call) {
            Ok(tool) => Ok(Resolved { call, tool }),
            Err(failure) => Err(Box::new(Unresolved { call, failure })),
        }
    }

    /// The lookup of [`resolve`](Self::resolve), without recording a stage.
    pub(crate) fn lookup(&self, call: &ToolCall) -> Result<Arc<RegisteredTool>, ToolError> {
        // No tool has a name that is not a valid `ToolName` (registration
        // checks), so such a name resolves to nothing like any unknown one:
        // no separate check of the called name.
        let resolution = self.registry().resolve(&call.name, call.agent.as_ref());
        let tool = resolution.tool.ok_or_else(|| unknown(&call.name))?;
        if call.parent.is_none()
            && !resolution.presentation.allows_direct_calls()
            && call.name != RUN_CODE
        {
            let failure = ToolError::from_code(
                ErrorCode::UnknownTool,
                format!(
                    "tool `{name}` cannot be called directly in code mode: call it from inside `{RUN_CODE}`, as `await tools.{name}({{...}})`",
                    name = call.name
                ),
            );
            return Err(failure.with_kind(CODE_MODE_DIRECT_CALL));
        }
        Ok(tool)
    }

    /// The failure of an unresolved call, as its outcome: a caller that
    /// already cancelled hears that first, even for a direct call refused by
    /// code presentation.
    pub(crate) fn unresolved_failure(
        &self,
        unresolved: Unresolved,
        cancel: &CancellationToken,
    ) -> (ToolCall, ToolError) {
        let Unresolved { call, failure } = unresolved;
        let failure = if cancel.is_cancelled() && failure.kind() == Some(CODE_MODE_DIRECT_CALL) {
            tack_core::host::cancelled_before_start(&call.name)
        } else {
            failure
        };
        (call, failure)
    }
}
