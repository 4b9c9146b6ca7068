//! The per-call pipeline (docs/pipeline.md): every call ends in exactly one outcome.
//!
//! ```text
//! resolve ─► parse ─► validate ─► pre-execute ─► (approval) ─► guards ─► execute ─► output
//!    │         │          │            │               │           │          │          │
//!    │         └──────────┴────────────┴───────────────┴───────────┴──────────┴──────────┤
//!    │                                                                                   ▼
//!    │                                              post-execute ─► finalize ─► result observers
//!    └─ unknown tool ───────────────────────────────────────────────────────────► result observers
//! ```

mod admit;
pub(crate) mod arguments;
mod dry_run;
mod execute;
mod output;
mod post;
mod resolve;
mod rewrite;
mod stage;
mod validate;

use std::sync::{Arc, Weak};

use futures::future::BoxFuture;
use tack_core::capability::{OnAdmitted, ToolDispatcher};
use tack_core::hook::{AgentId, Provenance};
use tack_core::hooks::ExecutionRecord;
use tack_core::host::{NewExecutionRecord, NewFailure, NewOutcome, RunEffects};
use tack_core::tool::{CallId, Failure, Outcome, ToolCall, ToolExecution};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

pub use admit::APPROVAL_STAGE;
pub use dry_run::DryRun;
pub use execute::LATE_CANCELLATION_NOTE;
pub use rewrite::INVALID_REWRITE;
pub use stage::{Stage, StageRecorder};

use crate::ToolRegistry;
use crate::registry::{Inner, RegisteredTool};
use admit::{Admission, AskMode};

impl ToolRegistry {
    /// Runs one call through every step of the pipeline and returns its one
    /// outcome — the same frozen value the `tools/result` observers saw.
    ///
    /// Never fails: an unknown tool, bad arguments, a denial, a panic in a
    /// hook or in the tool, a timeout — each is an outcome with a code and a
    /// message the model can act on. `cancel` is the caller's signal.
    ///
    /// ```
    /// use serde_json::json;
    /// use tack_core::tool::{ErrorCode, OutputSpec, ToolCall, ToolDefinition};
    /// use tack_pipeline::ToolRegistry;
    /// use tokio_util::sync::CancellationToken;
    ///
    /// # futures::executor::block_on(async {
    /// let registry = ToolRegistry::new();
    /// let _echo = registry.register(
    ///     ToolDefinition::builder("echo")
    ///         .description("Repeat the text.")
    ///         .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
    ///         .output(OutputSpec::new(json!({"type": "string"})))
    ///         .handler(|args, _cx| async move { Ok(args["text"].clone()) })
    ///         .build()
    ///         .unwrap(),
    /// ).unwrap();
    ///
    /// let ok = registry.execute(ToolCall::new("c1", "echo", r#"{"text": "hi"}"#), CancellationToken::new()).await;
    /// assert_eq!(ok.content[0].as_text(), Some("hi"));
    ///
    /// let bad = registry.execute(ToolCall::new("c2", "echo", r#"{"text": 1}"#), CancellationToken::new()).await;
    /// assert_eq!(bad.error_code(), Some(ErrorCode::InvalidArguments));
    /// assert_eq!(bad.failure_info().unwrap().pointer.as_deref(), Some("/text"));
    /// # });
    /// ```
    pub async fn execute(&self, call: ToolCall, cancel: CancellationToken) -> Arc<Outcome> {
        self.execute_admitted(call, cancel, || {}).await
    }

    /// [`execute`](Self::execute), calling `admitted` once the call's
    /// *admission* is over: resolve, parse, validate, `tools/pre-execute`,
    /// approval and guards — everything that decides whether the body may
    /// run.
    ///
    /// `admitted` is called exactly once when the returned future runs to
    /// its end, whatever admission decided (allowed, refused, unknown tool,
    /// cancelled), and always before the body starts; it runs on the task
    /// polling the future and must not block. If the future is dropped before
    /// admission ends, `admitted` is dropped uncalled.
    ///
    /// This is the ordering mechanism of the pipeline: start a call, wait for
    /// its `admitted`, then start the next. Policy (pre-execute listeners,
    /// approval prompts, guards) then sees one call at a time, in the order
    /// the calls were started, while the bodies still overlap. The
    /// [`TurnScheduler`](crate::TurnScheduler) runs a model's calls this way,
    /// and a composite tool reaches the same mechanism through
    /// [`ToolDispatcher::dispatch_admitted`] (code mode admits its sub-calls
    /// in submission order with it).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use serde_json::json;
    /// use tack_core::tool::{OutputSpec, ToolCall, ToolDefinition, ToolExecution};
    /// use tack_pipeline::ToolRegistry;
    /// use tokio_util::sync::CancellationToken;
    ///
    /// # futures::executor::block_on(async {
    /// let registry = ToolRegistry::new();
    /// let log = Arc::new(Mutex::new(Vec::new()));
    /// let body = log.clone();
    /// let _work = registry.register(
    ///     ToolDefinition::builder("work")
    ///         .description("Do the work.")
    ///         .input_schema(json!({"type": "object"}))
    ///         .output(OutputSpec::new(json!({})))
    ///         .handler(move |_args, _cx| {
    ///             let body = body.clone();
    ///             async move { body.lock().unwrap().push("body"); Ok(json!(null)) }
    ///         })
    ///         .build()
    ///         .unwrap(),
    /// ).unwrap();
    /// let policy = log.clone();
    /// let _policy = registry.hooks().pre_execute().tap("policy", move |exec: Arc<ToolExecution>, next| {
    ///     policy.lock().unwrap().push("pre-execute");
    ///     next.run(exec)
    /// });
    ///
    /// let admitted = log.clone();
    /// let outcome = registry
    ///     .execute_admitted(ToolCall::new("c1", "work", "{}"), CancellationToken::new(), move || {
    ///         admitted.lock().unwrap().push("admitted")
    ///     })
    ///     .await;
    /// assert!(outcome.is_success());
    /// assert_eq!(*log.lock().unwrap(), ["pre-execute", "admitted", "body"]);
    /// # });
    /// ```
    pub async fn execute_admitted(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        admitted: impl FnOnce() + Send,
    ) -> Arc<Outcome> {
        let span = tracing::info_span!(
            "tool_call",
            call_id = %call.call_id,
            tool = %call.name,
            agent = call.agent.as_ref().map(AgentId::as_str),
        );
        self.run_call(call, cancel, admitted).instrument(span).await
    }

    async fn run_call(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        admitted: impl FnOnce() + Send,
    ) -> Arc<Outcome> {
        self.record(&call.call_id, Stage::Resolve);
        let tool = match self.resolve_call(&call) {
            Ok(tool) => tool,
            Err(failure) => {
                admitted();
                // A caller that already cancelled hears that first, even for a
                // direct call refused by code presentation (CODE-003).
                let failure = if cancel.is_cancelled()
                    && failure.kind.as_deref() == Some(resolve::CODE_MODE_DIRECT_CALL)
                {
                    admit::cancelled_before_dispatch(&call.name)
                } else {
                    failure
                };
                let outcome = Outcome::failure(call.call_id.clone(), call.name.clone(), failure);
                return self.publish(call.agent, None, outcome);
            }
        };
        let agent = call.agent.as_ref();
        let effects = RunEffects::new();
        let admission = self.admit(&call, &tool, &cancel, AskMode::Approve).await;
        admitted();
        let (outcome, execution) = match admission {
            Admission::Allowed(execution) => {
                let outcome = self
                    .run_body(&call, &tool, &execution, &cancel, &effects)
                    .await;
                (outcome, Some(execution))
            }
            Admission::Refused {
                failure,
                provenance,
                execution,
            } => (self.refusal(&call, failure, provenance), execution),
            Admission::WouldAsk { execution, .. } => {
                // `Approve` asks instead of reporting; kept total all the same.
                let failure = Failure::new(
                    tack_core::tool::ErrorCode::Internal,
                    "the call needed approval but none was asked",
                );
                (self.refusal(&call, failure, None), Some(execution))
            }
        };
        let mut outcome = outcome;
        // Deferred context survives a failure of the same call.
        outcome.deferred_context = effects.take_deferred();
        let mut outcome = self
            .post_process(&tool, agent, execution.as_ref(), outcome)
            .await;
        if outcome.is_success()
            && cancel.is_cancelled()
            && !outcome.notes.iter().any(|n| n == LATE_CANCELLATION_NOTE)
        {
            outcome.notes.push(LATE_CANCELLATION_NOTE.to_owned());
        }
        outcome.concluded_turn = outcome.is_success() && effects.concluded();
        let outcome = self.finalize(&tool, outcome);
        self.publish(call.agent, execution, outcome)
    }

    /// The outcome of a call whose id the call at `first` (0-based, in model
    /// order) of the same batch already uses: `INVALID_ARGUMENTS`, never run,
    /// but finalized and shown to the `tools/result` observers like any other
    /// outcome, so a log sees every call of the batch.
    pub(crate) fn refuse_duplicate_id(&self, call: ToolCall, first: usize) -> Arc<Outcome> {
        self.record(&call.call_id, Stage::Resolve);
        let failure = Failure::new(
            tack_core::tool::ErrorCode::InvalidArguments,
            format!(
                "call id `{}` is already used by call #{} in this batch; every call in a batch \
                 needs its own id",
                call.call_id,
                first + 1
            ),
        );
        let outcome = Outcome::failure(call.call_id.clone(), call.name.clone(), failure);
        let outcome = match self.resolve_call(&call) {
            Ok(tool) => self.finalize(&tool, outcome),
            Err(_) => outcome,
        };
        self.publish(call.agent, None, outcome)
    }

    fn refusal(
        &self,
        call: &ToolCall,
        failure: Failure,
        provenance: Option<Provenance>,
    ) -> Outcome {
        Outcome::failure(call.call_id.clone(), call.name.clone(), failure)
            .with_provenance(provenance)
    }

    /// Step 10: the tool's `finalize_content`, once, for every outcome of a
    /// known tool (total: a panicking finalizer keeps the content).
    fn finalize(&self, tool: &RegisteredTool, mut outcome: Outcome) -> Outcome {
        self.record(&outcome.call_id, Stage::Finalize);
        if let Some(content) = tool.definition.finalize_content(&outcome) {
            outcome.content = content;
        }
        outcome
    }

    /// Step 11: freeze the record and show it to the `tools/result` observers.
    fn publish(
        &self,
        agent: Option<AgentId>,
        execution: Option<Arc<ToolExecution>>,
        mut outcome: Outcome,
    ) -> Arc<Outcome> {
        self.record(&outcome.call_id, Stage::Result);
        // A rewrite of the arguments is part of the record (rewrite.rs).
        if let Some(rewrite) = execution.as_ref().and_then(|e| e.rewrite()) {
            outcome.rewrite = Some(rewrite.clone());
        }
        let outcome = Arc::new(outcome);
        let observers = self.inner.hooks.result();
        if observers.has_listeners(agent.as_ref()) {
            let record = Arc::new(ExecutionRecord::new(
                agent.clone(),
                execution,
                outcome.clone(),
            ));
            observers.notify(agent.as_ref(), &record);
        }
        match outcome.failure_info() {
            None => tracing::debug!(status = "ok", "tool call finished"),
            Some(f) => {
                tracing::debug!(status = "error", code = %f.code, message = %f.message, "tool call finished")
            }
        }
        outcome
    }

    #[inline]
    pub(crate) fn record(&self, call_id: &CallId, stage: Stage) {
        if let Some(recorder) = self.inner.config.recorder() {
            recorder.record(call_id, stage);
        }
    }
}

/// The registry as the nested dispatcher of composite tools. Holds the
/// registry weakly: the capability lives inside the registry's own slots.
pub(crate) struct NestedDispatcher(pub(crate) Weak<Inner>);

impl ToolDispatcher for NestedDispatcher {
    fn dispatch(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Arc<Outcome>> {
        self.dispatch_admitted(call, cancel, Box::new(|| {}))
    }

    fn dispatch_admitted(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        admitted: OnAdmitted,
    ) -> BoxFuture<'static, Arc<Outcome>> {
        let inner = self.0.upgrade();
        Box::pin(async move {
            match inner {
                Some(inner) => {
                    ToolRegistry { inner }
                        .execute_admitted(call, cancel, admitted)
                        .await
                }
                None => {
                    admitted();
                    Arc::new(Outcome::failure(
                        call.call_id,
                        call.name,
                        Failure::new(
                            tack_core::tool::ErrorCode::Internal,
                            "the tool registry was shut down before this nested call ran",
                        ),
                    ))
                }
            }
        })
    }
}

impl ToolDispatcher for ToolRegistry {
    fn dispatch(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Arc<Outcome>> {
        let registry = self.clone();
        Box::pin(async move { registry.execute(call, cancel).await })
    }

    fn dispatch_admitted(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        admitted: OnAdmitted,
    ) -> BoxFuture<'static, Arc<Outcome>> {
        let registry = self.clone();
        Box::pin(async move { registry.execute_admitted(call, cancel, admitted).await })
    }
}
