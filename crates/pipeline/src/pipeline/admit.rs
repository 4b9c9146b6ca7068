//! Steps 2 to 7: parse, validate, pre-execute (and approval), cancellation
//! checks, guards. Everything that decides whether the body may run.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use tack_core::hook::{HookError, Provenance, panic_message};
use tack_core::host::{NewExecutionToken, NewFailure, NewToolExecution};
use tack_core::policy::{
    ApprovalOutcome, ApprovalRequest, GuardOutcome, PreVerdict, summarize_arguments,
};
use tack_core::tool::{ErrorCode, ExecutionToken, Failure, ToolCall, ToolExecution};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::Stage;
use super::arguments::materialize;
use super::validate::check;
use crate::ToolRegistry;
use crate::registry::RegisteredTool;

/// The stage name approval decisions report under.
pub const APPROVAL_STAGE: &str = "approval";

/// What steps 2 to 7 concluded.
pub(crate) enum Admission {
    /// The body may run.
    Allowed(Arc<ToolExecution>),
    /// Policy asks for approval (dry runs only: a real run asks).
    WouldAsk {
        execution: Arc<ToolExecution>,
        reason: String,
        provenance: Option<Provenance>,
    },
    /// The call ends here.
    Refused {
        failure: Failure,
        provenance: Option<Provenance>,
        execution: Option<Arc<ToolExecution>>,
    },
}

/// Whether an `ask` goes to the approval service or is only reported.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum AskMode {
    Approve,
    Report,
}

fn refused(
    failure: Failure,
    provenance: Option<Provenance>,
    execution: Option<&Arc<ToolExecution>>,
) -> Admission {
    Admission::Refused {
        failure,
        provenance,
        execution: execution.cloned(),
    }
}

/// A hook listener's panic, as the failure that ends the call (fail closed).
pub(crate) fn listener_failure(
    error: &HookError,
    consequence: &str,
) -> (Failure, Option<Provenance>) {
    let provenance = error
        .listener()
        .map(|name| Provenance::listener(error.hook(), name.to_owned()));
    let who = error.listener().map_or_else(
        || format!("the default of `{}`", error.hook()),
        |name| format!("the `{}` listener `{name}`", error.hook()),
    );
    (
        Failure::new(
            ErrorCode::Internal,
            format!(
                "{who} failed ({}); {consequence}. This is a fault in the host, not in the call",
                error.message()
            ),
        ),
        provenance,
    )
}

pub(crate) use tack_core::host::cancelled_before_start as cancelled_before_dispatch;

impl ToolRegistry {
    pub(crate) async fn admit(
        &self,
        call: &ToolCall,
        tool: &RegisteredTool,
        cancel: &CancellationToken,
        ask: AskMode,
    ) -> Admission {
        let definition = &tool.definition;
        let name = definition.name().as_str();
        let agent = call.agent.as_ref();

        self.record(&call.call_id, Stage::Parse);
        let arguments = match tracing::debug_span!("parse")
            .in_scope(|| materialize(&call.arguments, &self.inner.config))
        {
            Ok(arguments) => arguments,
            Err(failure) => return refused(failure, None, None),
        };

        self.record(&call.call_id, Stage::Validate);
        if let Some(violations) =
            tracing::debug_span!("validate").in_scope(|| check(&tool.input, arguments.value()))
        {
            let failure = Failure::new(
                ErrorCode::InvalidArguments,
                format!(
                    "invalid arguments for tool `{name}`: {}",
                    violations.message
                ),
            )
            .with_pointer(violations.pointer);
            return refused(failure, None, None);
        }

        let root = call
            .parent
            .as_ref()
            .map_or_else(|| call.call_id.clone(), |p| p.root_call_id().clone());
        let execution = Arc::new(
            ToolExecution::new(
                call.call_id.clone(),
                definition.name().clone(),
                arguments,
                definition.tier(),
                ExecutionToken::issue(root),
            )
            .with_agent(call.agent.clone())
            .with_parent(call.parent.clone()),
        );

        // Valid arguments are settled first: a pre-cancelled call still reports
        // malformed arguments as such (they are the caller's to fix).
        if cancel.is_cancelled() {
            return refused(cancelled_before_dispatch(name), None, Some(&execution));
        }

        self.record(&call.call_id, Stage::PreExecute);
        let pre = self.inner.hooks.pre_execute();
        let decision = if pre.has_listeners(agent) {
            match pre
                .dispatch(agent, execution.clone())
                .instrument(tracing::debug_span!("pre_execute"))
                .await
            {
                Ok(decision) => decision,
                Err(error) => {
                    let (failure, provenance) = listener_failure(&error, "the call was not run");
                    return refused(failure, provenance, Some(&execution));
                }
            }
        } else {
            tack_core::policy::PreDecision::allow()
        };
        let pre_provenance = decision.provenance().cloned();
        // Rewritten arguments are checked again; approval, guards and the
        // body see them (rewrite.rs).
        let execution = match super::rewrite::apply(tool, &self.inner.config, &execution, &decision)
        {
            Ok(execution) => execution,
            Err(refusal) => {
                return refused(
                    refusal.failure,
                    refusal.provenance,
                    Some(&refusal.execution),
                );
            }
        };
        match decision.verdict() {
            PreVerdict::Deny { reason } => {
                let reason = match &pre_provenance {
                    _ if !reason.trim().is_empty() => reason.clone(),
                    Some(by) => format!(
                        "{by} denied tool `{}` without giving a reason",
                        execution.name()
                    ),
                    None => format!("tool `{}` was denied without a reason", execution.name()),
                };
                let failure = Failure::new(ErrorCode::Denied, reason);
                return refused(failure, pre_provenance, Some(&execution));
            }
            PreVerdict::Ask { reason } if ask == AskMode::Report => {
                if let Err(admission) = self.run_guards(call, &execution, cancel).await {
                    return admission;
                }
                return Admission::WouldAsk {
                    execution,
                    reason: reason.clone(),
                    provenance: pre_provenance,
                };
            }
            PreVerdict::Ask { reason } => {
                self.record(&call.call_id, Stage::Approval);
                if let Err((failure, provenance)) =
                    self.ask_approval(&execution, reason, cancel).await
                {
                    return refused(failure, provenance, Some(&execution));
                }
            }
            PreVerdict::Allow => {}
        }
        if cancel.is_cancelled() {
            return refused(cancelled_before_dispatch(name), None, Some(&execution));
        }

        if let Err(admission) = self.run_guards(call, &execution, cancel).await {
            return admission;
        }
        Admission::Allowed(execution)
    }

    async fn run_guards(
        &self,
        call: &ToolCall,
        execution: &Arc<ToolExecution>,
        cancel: &CancellationToken,
    ) -> Result<(), Admission> {
        self.record(&call.call_id, Stage::Guard);
        match self
            .inner
            .hooks
            .guards()
            .run(call.agent.as_ref(), execution)
            .await
        {
            Ok(GuardOutcome::Passed) => {}
            Ok(GuardOutcome::Denied { reason, provenance }) => {
                let reason = if reason.trim().is_empty() {
                    format!(
                        "{provenance} denied tool `{}` without giving a reason",
                        execution.name()
                    )
                } else {
                    reason
                };
                return Err(refused(
                    Failure::new(ErrorCode::Denied, reason),
                    Some(provenance),
                    Some(execution),
                ));
            }
            Err(error) => {
                let (failure, provenance) = listener_failure(&error, "the call was not run");
                return Err(refused(failure, provenance, Some(execution)));
            }
        }
        if cancel.is_cancelled() {
            return Err(refused(
                cancelled_before_dispatch(execution.name()),
                None,
                Some(execution),
            ));
        }
        Ok(())
    }

    /// Asks the approval service, showing it the frozen arguments and their
    /// summary. Only allowed-once and allowed-always let the call through; no
    /// service, any other outcome, a panic, or the caller's cancellation ends it.
    async fn ask_approval(
        &self,
        execution: &ToolExecution,
        reason: &str,
        cancel: &CancellationToken,
    ) -> Result<(), (Failure, Option<Provenance>)> {
        let name = execution.name();
        let denied = |outcome: &ApprovalOutcome, by: &str| {
            (
                Failure::new(ErrorCode::Denied, outcome.denial_message(name)),
                Some(Provenance::listener(APPROVAL_STAGE, by.to_owned())),
            )
        };
        let capabilities = self.inner.capabilities.snapshot();
        let Some(approver) = capabilities.approval.clone() else {
            let outcome = ApprovalOutcome::Unavailable {
                reason: Some("no approval service is installed".to_owned()),
            };
            return Err(denied(&outcome, "no approver"));
        };
        let mut request = ApprovalRequest::new(
            execution.call_id().clone(),
            name,
            execution.tier(),
            execution.agent().cloned(),
            execution.arguments().clone(),
            reason,
        );
        // The gist in the order the model wrote the arguments.
        request.summary = summarize_arguments(name, execution.parsed_arguments());
        // The call itself inside the future: a service that panics before
        // returning its future is contained like one that panics while polled.
        let asked = AssertUnwindSafe(async { approver.request(request, cancel.clone()).await })
            .catch_unwind();
        let answer = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            answer = asked => Some(answer),
        };
        match answer {
            None => Err((
                cancelled_before_dispatch(name),
                Some(Provenance::listener(APPROVAL_STAGE, "cancelled")),
            )),
            Some(Err(payload)) => {
                let message = panic_message(&*payload);
                tracing::error!(tool = name, %message, "the approval service panicked; denying");
                let outcome = ApprovalOutcome::Unavailable {
                    reason: Some(format!("the approval service failed: {message}")),
                };
                Err(denied(&outcome, "panicked"))
            }
            Some(Ok(outcome)) if outcome.is_allowed() => Ok(()),
            Some(Ok(_)) if cancel.is_cancelled() => Err((
                cancelled_before_dispatch(name),
                Some(Provenance::listener(APPROVAL_STAGE, "cancelled")),
            )),
            Some(Ok(outcome)) => {
                let by = outcome.as_str();
                Err(denied(&outcome, by))
            }
        }
    }
}
