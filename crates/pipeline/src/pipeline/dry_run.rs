//! `dry_run`: resolve, parse and admit without asking and without executing,
//! for UIs and policy tests.

use std::sync::Arc;

use tack_core::hook::Provenance;
use tack_core::host::NewToolError;
use tack_core::tool::{ErrorCode, ToolCall, ToolError, ToolExecution};
use tokio_util::sync::CancellationToken;

use super::admit::{Admission, AskMode};
use super::{Executed, Pipeline};

/// What a call would meet, without running it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum DryRun {
    /// Policy and guards let it through: it would run.
    Allowed {
        /// The execution it would have.
        execution: Arc<ToolExecution>,
    },
    /// It would ask for approval (and run if approved: the guards pass).
    WouldAsk {
        /// The execution it would have.
        execution: Arc<ToolExecution>,
        /// The reason the approver would see.
        reason: String,
        /// The listener that asked.
        provenance: Option<Provenance>,
    },
    /// It would end without running.
    Refused {
        /// Why.
        failure: ToolError,
        /// Who decided.
        provenance: Option<Provenance>,
    },
}

impl Pipeline {
    /// Runs resolve, parse, validate, pre-execute and the guards for `call`
    /// and reports the decision, without asking for approval, without
    /// executing, and without notifying result observers.
    pub async fn dry_run(&self, call: ToolCall) -> DryRun {
        let resolved = match self.resolve(call) {
            Ok(resolved) => resolved,
            Err(unresolved) => {
                return DryRun::Refused {
                    failure: unresolved.failure,
                    provenance: None,
                };
            }
        };
        let parsed = match self.parse(resolved) {
            Ok(parsed) => parsed,
            Err(refusal) => return refused(*refusal),
        };
        match self
            .admit(parsed, &CancellationToken::new(), AskMode::Report)
            .await
        {
            Admission::Allowed(admitted) => DryRun::Allowed {
                execution: admitted.execution,
            },
            Admission::WouldAsk {
                admitted,
                reason,
                provenance,
            } => DryRun::WouldAsk {
                execution: admitted.execution,
                reason,
                provenance,
            },
            Admission::Refused(refusal) => refused(*refusal),
        }
    }
}

/// A refusal, as a dry run reports it.
fn refused(refused: Executed) -> DryRun {
    let outcome = refused.outcome;
    let failure = outcome.failure_info().cloned().unwrap_or_else(|| {
        // A refusal is a failure; kept total all the same.
        ToolError::from_code(ErrorCode::Internal, "a refusal without a failure")
    });
    DryRun::Refused {
        failure,
        provenance: outcome.provenance.clone(),
    }
}
