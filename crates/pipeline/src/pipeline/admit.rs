//! Stage 3, admit: `tools/pre-execute`, then [`approval`](super::approval)
//! when policy asks, then the [`guards`](super::guards), with the
//! cancellation checks between them: everything that decides whether the
//! body may run ([`Admitted`]).

use std::sync::Arc;

use tack_core::hook::{AgentId, Provenance};
use tack_core::host::cancelled_before_start;
use tack_core::host::{NewExecutionToken, NewToolError, NewToolExecution};
use tack_core::policy::{Action, PreDecision};
use tack_core::tool::{ErrorCode, ExecutionToken, ToolError, ToolExecution};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::fault::listener_failure;
use super::parse::Parsed;
use super::resolve::Resolved;
use super::{Executed, Pipeline, Stage};

/// The stage name approval decisions report under.
pub const APPROVAL_STAGE: &str = "approval";

/// A call whose body may run: its frozen execution, as policy saw it.
pub(crate) struct Admitted {
    pub(crate) resolved: Resolved,
    pub(crate) execution: Arc<ToolExecution>,
}

impl Admitted {
    /// This call, refused after all (the refusal is its outcome).
    pub(crate) fn refuse(
        self,
        failure: ToolError,
        provenance: Option<Provenance>,
    ) -> Box<Executed> {
        Executed::refused(self.resolved, failure, provenance, Some(self.execution))
    }
}

/// What admission concluded.
pub(crate) enum Admission {
    /// The body may run.
    Allowed(Admitted),
    /// Policy asks for approval (dry runs only: a real run asks).
    WouldAsk {
        admitted: Admitted,
        reason: String,
        provenance: Option<Provenance>,
    },
    /// The call ends here.
    Refused(Box<Executed>),
}

/// Whether an `ask` goes to the approval service or is only reported.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum AskMode {
    Approve,
    Report,
}

impl Pipeline {
    /// Whether any policy (a `tools/pre-execute` listener or a guard) may
    /// reach calls of `agent`. With `tools/pre-execute` listeners registered
    /// at all, admission runs the policy stages and reads the listener list
    /// once there (for an agent none of them reaches, it finds none and
    /// allows: the same outcome), instead of reading it here too.
    pub(crate) fn has_policy(&self, agent: Option<&AgentId>) -> bool {
        let hooks = self.hooks();
        hooks.pre_execute().listener_count() != 0 || hooks.guards().has_listeners(agent)
    }

    /// Admission when no policy reaches the call ([`has_policy`](Self::has_policy)
    /// is false): the same stages and cancellation checks as [`admit`](Self::admit),
    /// decided without a future.
    pub(crate) fn admit_without_policy(
        &self,
        parsed: Parsed,
        cancel: &CancellationToken,
    ) -> Admission {
        let admitted = freeze(parsed);
        if let Some(recorder) = self.config().recorder() {
            // A recorder runs code between the stages: the checks are made
            // as `admit` makes them. Without one, nothing on this task runs
            // before the body's start, which looks for a cancellation (with
            // the same outcome: cancelled before the tool started), so
            // admission need not look first.
            if cancel.is_cancelled() {
                return admitted.cancelled();
            }
            let call_id = &admitted.resolved.call.call_id;
            recorder.record(call_id, Stage::PreExecute);
            recorder.record(call_id, Stage::Guard);
            if cancel.is_cancelled() {
                return admitted.cancelled();
            }
        }
        Admission::Allowed(admitted)
    }

    pub(crate) async fn admit(
        &self,
        parsed: Parsed,
        cancel: &CancellationToken,
        ask: AskMode,
    ) -> Admission {
        let mut admitted = freeze(parsed);

        // Valid arguments are settled first: a pre-cancelled call still reports
        // malformed arguments as such (they are the caller's to fix).
        if cancel.is_cancelled() {
            return admitted.cancelled();
        }

        let call = &admitted.resolved.call;
        let agent = call.agent.as_ref();
        self.record(&call.call_id, Stage::PreExecute);
        let decision = match self
            .hooks()
            .pre_execute()
            .try_dispatch(agent, admitted.execution.clone())
        {
            Ok(dispatch) => match dispatch
                .instrument(tracing::debug_span!("pre_execute"))
                .await
            {
                Ok(decision) => decision,
                Err(error) => {
                    let (failure, provenance) = listener_failure(&error, "the call was not run");
                    return Admission::Refused(admitted.refuse(failure, provenance));
                }
            },
            Err(_) => PreDecision::allow(),
        };
        let pre_provenance = decision.provenance().cloned();
        // Rewritten arguments are checked again; approval, guards and the
        // body see them (rewrite.rs).
        match super::rewrite::apply(
            &admitted.resolved.tool,
            self.config(),
            &admitted.execution,
            &decision,
        ) {
            Ok(execution) => admitted.execution = execution,
            Err(refusal) => {
                return Admission::Refused(Executed::refused(
                    admitted.resolved,
                    refusal.failure,
                    refusal.provenance,
                    Some(refusal.execution),
                ));
            }
        };
        let call = &admitted.resolved.call;
        // An ask or a deny always carries a reason (`PreDecision::reason`).
        let reason = decision.reason().unwrap_or_default();
        match decision.action() {
            Action::Deny => {
                let name = admitted.execution.name();
                let reason = match &pre_provenance {
                    _ if !reason.trim().is_empty() => reason.to_owned(),
                    Some(by) => format!("{by} denied tool `{name}` without giving a reason"),
                    None => format!("tool `{name}` was denied without a reason"),
                };
                let failure = ToolError::from_code(ErrorCode::Denied, reason);
                return Admission::Refused(admitted.refuse(failure, pre_provenance));
            }
            Action::Ask if ask == AskMode::Report => {
                if let Err((failure, provenance)) = self.run_guards(&admitted, cancel).await {
                    return Admission::Refused(admitted.refuse(failure, provenance));
                }
                return Admission::WouldAsk {
                    admitted,
                    reason: reason.to_owned(),
                    provenance: pre_provenance,
                };
            }
            Action::Ask => {
                self.record(&call.call_id, Stage::Approval);
                // Boxed: a rare path, kept out of every call's future.
                let asked = Box::pin(self.ask_approval(&admitted.execution, reason, cancel));
                match asked.await {
                    Err((failure, provenance)) => {
                        return Admission::Refused(admitted.refuse(failure, provenance));
                    }
                    Ok(Some((arguments, by))) => {
                        let rewritten = Box::pin(self.approved_rewrite(admitted, arguments, by));
                        admitted = match rewritten.await {
                            Ok(admitted) => admitted,
                            Err(refused) => return refused,
                        };
                    }
                    Ok(None) => {}
                }
            }
            Action::Allow => {}
        }
        if cancel.is_cancelled() {
            return admitted.cancelled();
        }
        match self.run_guards(&admitted, cancel).await {
            Ok(()) => Admission::Allowed(admitted),
            Err((failure, provenance)) => Admission::Refused(admitted.refuse(failure, provenance)),
        }
    }
}

impl Pipeline {
    /// Applies arguments an approver rewrote: checked like a
    /// `tools/pre-execute` rewrite and recorded, then `tools/pre-execute`
    /// runs again on them; a deny (or a failing listener, or an invalid
    /// rewrite of its own) refuses the call. Its ask is the approver's
    /// answer already given; its own rewrite is applied and checked too.
    async fn approved_rewrite(
        &self,
        mut admitted: Admitted,
        arguments: serde_json::Value,
        by: String,
    ) -> Result<Admitted, Admission> {
        let provenance = Provenance::listener(APPROVAL_STAGE, by);
        let approved = PreDecision::allow()
            .with_arguments(arguments)
            .with_rewritten_by(provenance.clone());
        let refused = |admitted: Admitted, refusal: Box<super::rewrite::RefusedRewrite>| {
            Admission::Refused(Executed::refused(
                admitted.resolved,
                refusal.failure,
                refusal.provenance,
                Some(refusal.execution),
            ))
        };
        match super::rewrite::apply(
            &admitted.resolved.tool,
            self.config(),
            &admitted.execution,
            &approved,
        ) {
            Ok(execution) => admitted.execution = execution,
            Err(refusal) => return Err(refused(admitted, refusal)),
        }
        let agent = admitted.resolved.call.agent.clone();
        let decision = match self
            .hooks()
            .pre_execute()
            .try_dispatch(agent.as_ref(), admitted.execution.clone())
        {
            Ok(dispatch) => match dispatch.await {
                Ok(decision) => decision,
                Err(error) => {
                    let (failure, provenance) = listener_failure(&error, "the call was not run");
                    return Err(Admission::Refused(admitted.refuse(failure, provenance)));
                }
            },
            Err(_) => PreDecision::allow(),
        };
        if decision.is_deny() {
            let name = admitted.execution.name();
            let reason = match decision.reason() {
                Some(reason) if !reason.trim().is_empty() => reason.to_owned(),
                _ => format!("tool `{name}` was denied after {provenance} rewrote its arguments"),
            };
            let failure = ToolError::from_code(ErrorCode::Denied, reason);
            let by = decision.provenance().cloned();
            return Err(Admission::Refused(admitted.refuse(failure, by)));
        }
        match super::rewrite::apply(
            &admitted.resolved.tool,
            self.config(),
            &admitted.execution,
            &decision,
        ) {
            Ok(execution) => admitted.execution = execution,
            Err(refusal) => return Err(refused(admitted, refusal)),
        }
        Ok(admitted)
    }
}

/// The call's frozen execution, built from its parse: what policy, the tool
/// and the observers all see.
fn freeze(parsed: Parsed) -> Admitted {
    let Parsed {
        resolved,
        arguments,
    } = parsed;
    let call = &resolved.call;
    let definition = &resolved.tool.definition;
    let root = call
        .parent
        .as_ref()
        .map_or_else(|| call.call_id.clone(), |p| p.root_call_id().clone());
    let execution = Arc::new(ToolExecution::of_call(
        call,
        definition.name().clone(),
        arguments,
        definition.tier(),
        ExecutionToken::issue(root),
    ));
    Admitted {
        resolved,
        execution,
    }
}

impl Admitted {
    /// Refused because the caller cancelled before the body started.
    pub(crate) fn cancelled(self) -> Admission {
        let failure = cancelled_before_start(self.execution.name());
        Admission::Refused(self.refuse(failure, None))
    }
}
