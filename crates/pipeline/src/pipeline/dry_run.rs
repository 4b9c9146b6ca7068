//! `dry_run`: steps 1 to 6 without executing, for UIs and policy tests.

use std::sync::Arc;

use tack_core::hook::Provenance;
use tack_core::tool::{Failure, ToolCall, ToolExecution};
use tokio_util::sync::CancellationToken;

use super::admit::{Admission, AskMode};
use crate::ToolRegistry;

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
        failure: Failure,
        /// Who decided.
        provenance: Option<Provenance>,
    },
}

impl ToolRegistry {
    /// Runs resolve, parse, validate, pre-execute and the guards for `call`
    /// and reports the decision, without asking for approval, without
    /// executing, and without notifying result observers.
    pub async fn dry_run(&self, call: ToolCall) -> DryRun {
        let tool = match self.resolve_call(&call) {
            Ok(tool) => tool,
            Err(failure) => {
                return DryRun::Refused {
                    failure,
                    provenance: None,
                };
            }
        };
        match self
            .admit(&call, &tool, &CancellationToken::new(), AskMode::Report)
            .await
        {
            Admission::Allowed(execution) => DryRun::Allowed { execution },
            Admission::WouldAsk {
                execution,
                reason,
                provenance,
            } => DryRun::WouldAsk {
                execution,
                reason,
                provenance,
            },
            Admission::Refused {
                failure,
                provenance,
                ..
            } => DryRun::Refused {
                failure,
                provenance,
            },
        }
    }
}
