//! The `New*` constructors implemented for tack-core's own types: the only
//! code that builds executions, tokens, run contexts, outcomes and hook
//! inputs from their parts.

use std::sync::Arc;

use serde_json::Value;

use super::build::{
    NewExecuteRequest, NewExecutionRecord, NewExecutionToken, NewOutcome, NewRunContext,
    NewToolError, NewToolExecution,
};
use crate::CancellationToken;
use crate::capability::Capabilities;
use crate::context::{
    Effects, EffectsInner, Run, RunEffects, RunParts, RunSlot, Shared, ToolExecution,
    ToolRunContext,
};
use crate::hook::{AgentId, Provenance};

use crate::hooks::{ExecuteOutput, ExecuteRequest, ExecutionRecord};
use crate::model::{
    ArgumentRewrite, Arguments, CallId, Content, ErrorCode, ExecutionToken, Outcome, Status, Tier,
    ToolError, ToolName, next_serial,
};
use crate::tool::{BodyFuture, ToolDefinition};

impl super::build::sealed::Sealed for ExecutionToken {}

impl NewExecutionToken for ExecutionToken {
    fn issue(root: CallId) -> Self {
        Self {
            serial: next_serial(),
            root,
        }
    }
}

impl super::build::sealed::Sealed for ToolError {}

impl NewToolError for ToolError {
    fn from_code(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::with_wire_code(code, message).with_dispatched(false)
    }

    fn with_pointer(mut self, pointer: impl Into<Box<str>>) -> Self {
        self.set_pointer(pointer.into());
        self
    }

    fn with_code(mut self, code: ErrorCode) -> Self {
        self.code = code;
        self
    }

    fn with_dispatched(mut self, dispatched: bool) -> Self {
        self.dispatched = dispatched;
        self
    }
}

impl super::build::sealed::Sealed for Outcome {}

impl NewOutcome for Outcome {
    fn success(
        call_id: CallId,
        tool: impl Into<String>,
        value: Value,
        content: impl Into<Content>,
    ) -> Self {
        Self::with_status(call_id, tool.into(), Status::Ok { value }, content.into())
    }

    fn failure(call_id: CallId, tool: impl Into<String>, error: ToolError) -> Self {
        let content = Content::text(format!("{}: {}", error.code, error.message));
        Self::with_status(call_id, tool.into(), Status::Error { error }, content)
    }

    fn with_provenance(mut self, provenance: Option<Provenance>) -> Self {
        self.provenance = provenance;
        self
    }

    fn replace_value(&mut self, value: Value) -> Option<Value> {
        match &mut self.status {
            Status::Ok { value: old } => Some(std::mem::replace(old, value)),
            Status::Error { .. } => None,
        }
    }

    fn record_rewrite(&mut self, execution: &ToolExecution) {
        if let Some(rewrite) = &execution.rewrite {
            self.rewrite = Some(Arc::clone(rewrite));
        }
    }
}

impl super::build::sealed::Sealed for ToolExecution {}

impl NewToolExecution for ToolExecution {
    #[inline]
    fn new(
        call_id: CallId,
        tool: ToolName,
        arguments: impl Into<Arguments>,
        tier: Tier,
        token: ExecutionToken,
    ) -> Self {
        Self {
            call_id,
            tool,
            arguments: arguments.into(),
            tier,
            token,
            agent: None,
            parent: None,
            rewrite: None,
            run: RunSlot::default(),
        }
    }

    #[inline]
    fn with_rewrite(
        mut self,
        original: Arc<Value>,
        rewritten: Arc<Value>,
        by: Option<Provenance>,
    ) -> Self {
        self.rewrite = Some(Arc::new(ArgumentRewrite {
            original,
            rewritten,
            by,
        }));
        self
    }

    #[inline]
    fn with_agent(mut self, agent: Option<AgentId>) -> Self {
        self.agent = agent;
        self
    }

    #[inline]
    fn with_parent(mut self, parent: Option<ExecutionToken>) -> Self {
        self.parent = parent;
        self
    }

    #[inline]
    fn run_cancellation(&self) -> Option<&CancellationToken> {
        self.run_cancel()
    }
}

impl super::build::sealed::Sealed for ToolRunContext {}

impl NewRunContext for ToolRunContext {
    fn new(
        execution: Arc<ToolExecution>,
        capabilities: Arc<Capabilities>,
        cancel: CancellationToken,
        effects: RunEffects,
    ) -> Self {
        Self {
            run: Run::Shared(Arc::new(Shared {
                execution,
                capabilities,
                effects: Effects::Host(effects),
            })),
            cancel: Some(cancel),
        }
    }

    fn with_fresh_effects(
        execution: Arc<ToolExecution>,
        capabilities: Arc<Capabilities>,
        cancel: CancellationToken,
    ) -> (Self, RunEffects) {
        // The first context of an execution lives in the execution's run
        // slot (no allocation, the signal moved there); any later one gets
        // its own.
        let parts = RunParts {
            capabilities,
            cancel,
        };
        let RunParts {
            capabilities,
            cancel,
        } = match execution.run().parts.set(parts) {
            Ok(()) => {
                let effects = RunEffects::in_execution(execution.clone());
                let run = Run::Execution(execution);
                return (Self { run, cancel: None }, effects);
            }
            Err(parts) => parts,
        };
        let shared = Arc::new(Shared {
            execution,
            capabilities,
            effects: Effects::Inline(EffectsInner::default()),
        });
        let effects = RunEffects::in_context(shared.clone());
        let run = Run::Shared(shared);
        let cancel = Some(cancel);
        (Self { run, cancel }, effects)
    }
}

impl super::build::sealed::Sealed for ExecuteRequest {}

impl NewExecuteRequest for ExecuteRequest {
    fn new(context: ToolRunContext, definition: &ToolDefinition) -> Self {
        Self {
            context,
            handler: definition.handler().clone(),
            timeout: definition.timeout(),
        }
    }

    fn start_body(self) -> Result<BodyFuture, ExecuteOutput> {
        self.start()
    }
}

impl super::build::sealed::Sealed for ExecutionRecord {}

impl NewExecutionRecord for ExecutionRecord {
    fn new(
        agent: Option<AgentId>,
        execution: Option<Arc<ToolExecution>>,
        outcome: Arc<Outcome>,
    ) -> Self {
        Self {
            agent,
            execution,
            outcome,
        }
    }
}

impl super::build::sealed::Sealed for ToolDefinition {}

impl super::build::ThreadCopy for ToolDefinition {
    fn thread_copy(&self) -> Self {
        self.copy_for_thread()
    }
}
