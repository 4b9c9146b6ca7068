//! `tools/post-execute`, the first step of the finalize stage: over every
//! outcome of a known tool, body run or not.

use std::sync::Arc;

use tack_core::hooks::PostDecision;
use tack_core::host::HookError;
use tack_core::host::{NewOutcome, NewToolError};
use tack_core::tool::{Content, ErrorCode, Outcome, ToolError, ToolExecution};

use super::Pipeline;
use super::fault::listener_failure;
use crate::registry::RegisteredTool;

impl Pipeline {
    /// The outcome after the `tools/post-execute` listeners decided over
    /// `frozen` (the outcome they saw): `frozen` itself when they accepted it.
    pub(crate) fn post_processed(
        &self,
        tool: &RegisteredTool,
        execution: Option<&Arc<ToolExecution>>,
        frozen: Arc<Outcome>,
        decision: Result<PostDecision, HookError>,
    ) -> Arc<Outcome> {
        if matches!(&decision, Ok(decision) if decision.is_accept()) {
            return frozen;
        }
        let outcome = Arc::unwrap_or_clone(frozen);
        Arc::new(match decision {
            Ok(decision) if decision.is_accept() => outcome,
            Ok(decision) => apply_post_decision(tool, execution, outcome, decision),
            Err(error) => {
                // Fail closed: a redaction or audit hook that broke must not let
                // the unprocessed result through.
                let (failure, provenance) =
                    listener_failure(&error, "the tool's result was withheld");
                let failure =
                    failure.with_dispatched(outcome.failure_info().is_none_or(|f| f.dispatched()));
                let mut failed = Outcome::failure(outcome.call_id, outcome.tool, failure)
                    .with_provenance(provenance);
                failed.deferred_context = outcome.deferred_context;
                failed
            }
        })
    }
}

fn apply_post_decision(
    tool: &RegisteredTool,
    execution: Option<&Arc<ToolExecution>>,
    mut outcome: Outcome,
    decision: PostDecision,
) -> Outcome {
    let provenance = decision.provenance().cloned();
    let by = provenance
        .as_ref()
        .map_or_else(|| "a post-execute listener".to_owned(), ToString::to_string);
    if decision.blocked().is_some() && outcome.is_success() {
        // A block withholds the result: the tool's own deferred context may
        // hold what it hid, so only the listeners' context stays.
        outcome.deferred_context = decision.context().to_vec();
    } else {
        outcome
            .deferred_context
            .extend(decision.context().iter().cloned());
    }
    if outcome.is_success() {
        if decision.value().is_some() && decision.content().is_some() {
            let failure = ToolError::from_code(
                    ErrorCode::Internal,
                    format!("{by} replaced both the value and the content of the result; a listener replaces one of them"),
                )
                .with_dispatched(true);
            let mut failed = Outcome::failure(outcome.call_id, outcome.tool, failure)
                .with_provenance(provenance);
            failed.deferred_context = outcome.deferred_context;
            return failed;
        }
        if let Some(feedback) = decision.blocked() {
            // An empty block still tells the model who withheld what.
            let feedback = if feedback.trim().is_empty() {
                format!(
                    "{by} blocked the result of tool `{}` without giving a reason; \
                         the call ran, but its result is withheld",
                    outcome.tool
                )
            } else {
                feedback.to_owned()
            };
            let failure =
                ToolError::from_code(ErrorCode::Denied, feedback.clone()).with_dispatched(true);
            let mut blocked = Outcome::failure(outcome.call_id, outcome.tool, failure)
                .with_provenance(provenance);
            blocked.content = Content::text(feedback);
            blocked.deferred_context = outcome.deferred_context;
            return blocked;
        }
        if let Some(value) = decision.value() {
            let arguments = execution.map(|e| e.arguments().clone()).unwrap_or_default();
            match super::output::render(tool, &arguments, value.clone()) {
                Ok(rendered) => {
                    outcome.replace_value(rendered.value);
                    outcome.content = rendered.content;
                    outcome.presentation = rendered.presentation;
                }
                Err(failure) => {
                    let mut failed = Outcome::failure(
                        outcome.call_id,
                        outcome.tool,
                        failure.with_dispatched(true),
                    )
                    .with_provenance(provenance);
                    failed.deferred_context = outcome.deferred_context;
                    return failed;
                }
            }
        }
        if let Some(content) = decision.content() {
            outcome.content = Content::from(content);
            outcome.content_replaced = true;
        }
    } else {
        if let Some(content) = decision.content() {
            outcome.content = Content::from(content);
            outcome.content_replaced = true;
        }
        if decision.value().is_some() || decision.blocked().is_some() {
            outcome.notes.push(format!(
                    "{by} asked to replace the value of (or block) a failed call; a failure cannot become a success, so that part was ignored"
                ));
        }
        // A failure keeps who decided it (the denying listener, guard or
        // approval outcome, docs/design.md #2): an audit or redaction listener that
        // adds context or rewrites content did not decide the failure.
        return outcome;
    }
    // Only a replacement changes who decided; added context does not.
    if decision.value().is_some() || decision.content().is_some() {
        outcome.provenance = provenance.or(outcome.provenance);
    }
    outcome
}
