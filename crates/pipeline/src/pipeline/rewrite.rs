//! Rewritten arguments: a `tools/pre-execute` decision may replace the
//! call's arguments. The rewrite goes through the same checks as the
//! model's arguments (parse limits, exact numbers, the tool's input schema)
//! before approval, guards or the body see it; an invalid rewrite fails the
//! call with `INTERNAL`, naming the listener that made it, and never runs the
//! tool.

use std::sync::Arc;

use tack_core::hook::Provenance;
use tack_core::host::{NewToolError, NewToolExecution};
use tack_core::policy::PreDecision;
use tack_core::tool::{ErrorCode, ToolError, ToolExecution};

use super::parse::materialize;
use super::schema::check;
use crate::PipelineConfig;
use crate::registry::RegisteredTool;

/// The `kind` of the failure an invalid rewrite ends in.
pub const INVALID_REWRITE: &str = "INVALID_REWRITE";

/// A rewrite that failed its checks: the failure, who rewrote, and the
/// original execution carrying the refused rewrite's record.
pub(crate) struct RefusedRewrite {
    pub(crate) failure: ToolError,
    pub(crate) provenance: Option<Provenance>,
    pub(crate) execution: Arc<ToolExecution>,
}

/// The execution the rest of admission works with: `execution` itself when
/// `decision` carries no rewrite (or one equal to the arguments); on a deny,
/// `execution` with the rewrite's record only; else a new execution (same
/// call id and token) with the revalidated arguments and the record of the
/// rewrite (`NewToolExecution::with_rewrite`).
pub(crate) fn apply(
    tool: &RegisteredTool,
    config: &PipelineConfig,
    execution: &Arc<ToolExecution>,
    decision: &PreDecision,
) -> Result<Arc<ToolExecution>, Box<RefusedRewrite>> {
    let Some(rewritten) = decision.rewritten_arguments() else {
        return Ok(execution.clone());
    };
    if **rewritten == **execution.arguments() {
        return Ok(execution.clone());
    }
    let by = decision.rewritten_by().cloned();
    // The execution with the model's arguments and the rewrite's record.
    let recorded = || {
        Arc::new(execution.as_ref().clone().with_rewrite(
            execution.arguments().clone(),
            rewritten.clone(),
            by.clone(),
        ))
    };
    if decision.is_deny() {
        // Nothing runs: the rewrite is recorded (what the deny judged), not
        // checked or applied.
        return Ok(recorded());
    }
    let name = execution.name();
    let refuse = |problem: String, pointer: Option<Box<str>>| {
        let who = by.as_ref().map_or_else(
            || "a `tools/pre-execute` listener".to_owned(),
            |p| p.to_string(),
        );
        let mut failure = ToolError::from_code(
            ErrorCode::Internal,
            format!(
                "{who} rewrote the arguments of tool `{name}` into invalid ones ({problem}); \
                 the call was not run. This is a fault in that listener, not in the call"
            ),
        );
        failure = failure.with_kind(INVALID_REWRITE);
        if let Some(pointer) = pointer {
            failure = failure.with_pointer(pointer);
        }
        Box::new(RefusedRewrite {
            failure,
            provenance: by.clone(),
            execution: recorded(),
        })
    };
    // The same checks as the model's text: serialize, then parse within limits.
    let mut text = serde_json::to_string(&**rewritten)
        .map_err(|e| refuse(format!("not serializable: {e}"), None))?;
    let arguments = materialize(&mut text, config)
        .map_err(|f| refuse(f.message().to_owned(), f.pointer().map(Box::from)))?;
    if let Some(violations) = check(&tool.input, arguments.value()) {
        return Err(refuse(violations.message, Some(violations.pointer.into())));
    }
    Ok(Arc::new(
        ToolExecution::new(
            execution.call_id().clone(),
            execution.tool().clone(),
            arguments,
            execution.tier(),
            execution.token().clone(),
        )
        .with_agent(execution.agent().cloned())
        .with_parent(execution.parent().cloned())
        .with_rewrite(execution.arguments().clone(), rewritten.clone(), by),
    ))
}
