//! The per-call pipeline (docs/pipeline.md): every call ends in exactly one outcome.
//!
//! A call moves through typed states, one stage (and one file) each:
//!
//! ```text
//! ToolCall ─resolve─► Resolved ─parse─► Parsed ─admit─► Admitted ─execute─► Executed ─finalize─► Finalized ─result─► Arc<Outcome>
//!    │                   │                 │                                    ▲
//!    │                   └─ bad arguments ─┴─ denied, cancelled ────────────────┘
//!    └─ unknown tool ─────────────────────────────────────────────────────────────────────────► result
//! ```
//!
//! * [`resolve`]: the name, in the caller's scope, to an immutable snapshot of
//!   the registered tool;
//! * [`parse`]: the argument text, parsed once and validated against the
//!   input schema (the scheduler plans from the same parse);
//! * [`admit`]: `tools/pre-execute`, [`approval`], [`guards`];
//! * [`execute`]: the `tools/execute` waterfall around the body, then the
//!   [`output`] checked and rendered;
//! * [`finalize`]: [`post_execute`], the late-cancellation note, the tool's
//!   `finalize_content`;
//! * [`result`]: the frozen outcome shown to the `tools/result` observers.

mod admit;
mod approval;
mod config;
mod dry_run;
mod execute;
mod fault;
mod finalize;
mod guards;
mod options;
mod output;
pub(crate) mod parse;
mod post_execute;
pub(crate) mod resolve;
mod result;
mod rewrite;
mod schema;
mod stage;

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Weak};

use futures::future::Either;
use tack_core::hook::AgentId;
use tack_core::hooks::ToolHooks;
use tack_core::host::{CapabilitySlots, NewOutcome, NewToolError};
use tack_core::tool::{CallId, ErrorCode, Outcome, ToolCall, ToolError};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

pub use admit::APPROVAL_STAGE;
pub use config::{MAX_DEPTH_LIMIT, PipelineConfig};
pub use dry_run::DryRun;
pub use execute::LATE_CANCELLATION_NOTE;
pub use rewrite::INVALID_REWRITE;
pub use stage::{Stage, StageRecorder};

pub(crate) use execute::Executed;
pub(crate) use fault::fault_description;
pub(crate) use options::{CallOptions, CancelCause};
pub(crate) use parse::Parsed;
pub(crate) use resolve::Prepared;

use crate::ToolRegistry;
use admit::{Admission, AskMode};
use fault::{HostFault, preparation_failure};
use finalize::Finalizing;

struct Inner {
    registry: ToolRegistry,
    hooks: ToolHooks,
    capabilities: CapabilitySlots,
    config: PipelineConfig,
}

/// The per-call pipeline over a [`ToolRegistry`]: the hook points and
/// capability slots calls run with, and the stages every call goes through.
///
/// The registry is the catalogue (which tools exist, for whom, how they are
/// shown); the pipeline runs calls against it: [`execute`](Self::execute),
/// [`execute_admitted`](Self::execute_admitted), [`dry_run`](Self::dry_run)
/// and [`execution_mode`](Self::execution_mode). A
/// [`TurnScheduler`](crate::TurnScheduler) runs a model's batch of calls
/// through one.
///
/// Build one over a registry with [`new`](Self::new) (fresh hook points and
/// capability slots, default limits) or [`with_parts`](Self::with_parts). The
/// pipeline provides itself as the `dispatcher` capability (for composite
/// tools that make nested calls) unless one is already set. Cheap to clone
/// (clones share everything).
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::{OutputSpec, ToolCall, ToolDefinition};
/// use tack_pipeline::{Pipeline, ToolRegistry};
/// use tokio_util::sync::CancellationToken;
///
/// # futures::executor::block_on(async {
/// let registry = ToolRegistry::new();
/// let _echo = registry.register(
///     ToolDefinition::builder("echo")
///         .description("Repeat the text.")
///         .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
///         .output(OutputSpec::new(json!({"type": "string"})))
///         .handler(|args, _cx| async move { Ok(args["text"].clone()) })
///         .build()
///         .unwrap(),
/// ).unwrap();
///
/// let pipeline = Pipeline::new(registry);
/// let outcome = pipeline.execute(ToolCall::new("c1", "echo", r#"{"text": "hi"}"#), CancellationToken::new()).await;
/// assert_eq!(outcome.content[0].as_text(), Some("hi"));
/// // Plugins install into the same parts:
/// // `PluginHost::new(pipeline.hooks(), pipeline.capabilities(), pipeline.registry())`.
/// # });
/// ```
#[derive(Clone)]
pub struct Pipeline {
    inner: Arc<Inner>,
}

impl fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pipeline")
            .field("registry", &self.inner.registry)
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// A [`Pipeline`] held weakly.
pub(crate) struct WeakPipeline(Weak<Inner>);

impl WeakPipeline {
    /// The pipeline, while something else keeps it alive.
    pub(crate) fn upgrade(&self) -> Option<Pipeline> {
        self.0.upgrade().map(|inner| Pipeline { inner })
    }
}

impl Pipeline {
    /// A pipeline over `registry` with fresh hook points and capability
    /// slots and the default [`PipelineConfig`].
    pub fn new(registry: ToolRegistry) -> Self {
        Self::with_parts(
            registry,
            ToolHooks::new(),
            CapabilitySlots::new(),
            PipelineConfig::default(),
        )
    }

    /// The pipeline over these parts, without providing a nested
    /// dispatcher ([`with_parts`](Self::with_parts) provides the pipeline's
    /// own: it lives beside the scheduler whose rules its batches follow).
    pub(crate) fn assemble(
        registry: ToolRegistry,
        hooks: ToolHooks,
        capabilities: CapabilitySlots,
        config: PipelineConfig,
    ) -> Self {
        let inner = Arc::new(Inner {
            registry,
            hooks,
            capabilities,
            config,
        });
        Self { inner }
    }

    /// A handle that does not keep the pipeline alive: for what the
    /// pipeline holds itself (its nested dispatcher, in its capability slots).
    pub(crate) fn downgrade(&self) -> WeakPipeline {
        WeakPipeline(Arc::downgrade(&self.inner))
    }

    /// The catalogue calls resolve in.
    pub fn registry(&self) -> &ToolRegistry {
        &self.inner.registry
    }

    /// The tool hook points calls dispatch through.
    pub fn hooks(&self) -> &ToolHooks {
        &self.inner.hooks
    }

    /// The capability slots tool bodies get their capabilities from.
    pub fn capabilities(&self) -> &CapabilitySlots {
        &self.inner.capabilities
    }

    /// The pipeline settings.
    pub fn config(&self) -> &PipelineConfig {
        &self.inner.config
    }

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
    /// use tack_pipeline::{Pipeline, ToolRegistry};
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
    /// let pipeline = Pipeline::new(registry);
    ///
    /// let ok = pipeline.execute(ToolCall::new("c1", "echo", r#"{"text": "hi"}"#), CancellationToken::new()).await;
    /// assert_eq!(ok.content[0].as_text(), Some("hi"));
    ///
    /// let bad = pipeline.execute(ToolCall::new("c2", "echo", r#"{"text": 1}"#), CancellationToken::new()).await;
    /// assert_eq!(bad.error_code(), Some(ErrorCode::InvalidArguments));
    /// assert_eq!(bad.failure_info().unwrap().pointer(), Some("/text"));
    /// # });
    /// ```
    pub fn execute(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
    ) -> impl Future<Output = Arc<Outcome>> + Send + '_ {
        self.execute_admitted(call, cancel, || {})
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
    /// and so does a composite tool's batch
    /// ([`ToolDispatcher::open_batch`](tack_core::capability::ToolDispatcher::open_batch)),
    /// which runs its sub-calls on the scheduler's own code.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use serde_json::json;
    /// use tack_core::tool::{OutputSpec, ToolCall, ToolDefinition, ToolExecution};
    /// use tack_pipeline::{Pipeline, ToolRegistry};
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
    /// let pipeline = Pipeline::new(registry);
    /// let policy = log.clone();
    /// let _policy = pipeline.hooks().pre_execute().tap("policy", move |exec: Arc<ToolExecution>, next| {
    ///     policy.lock().unwrap().push("pre-execute");
    ///     next.run(exec)
    /// });
    ///
    /// let admitted = log.clone();
    /// let outcome = pipeline
    ///     .execute_admitted(ToolCall::new("c1", "work", "{}"), CancellationToken::new(), move || {
    ///         admitted.lock().unwrap().push("admitted")
    ///     })
    ///     .await;
    /// assert!(outcome.is_success());
    /// assert_eq!(*log.lock().unwrap(), ["pre-execute", "admitted", "body"]);
    /// # });
    /// ```
    pub async fn execute_admitted<A: FnOnce() + Send>(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        admitted: A,
    ) -> Arc<Outcome> {
        // Nothing runs until the future is polled (the call is prepared
        // then), and a host fault while preparing it is its outcome. The
        // only host part the first stages call is the stage recorder:
        // without one there is nothing to contain (and nothing to copy).
        let prepared = if self.inner.config.recorder().is_none() {
            self.prepare(call)
        } else {
            let unrun = skeleton(&call);
            match self.try_prepare(call) {
                Ok(prepared) => prepared,
                Err(failure) => {
                    admitted();
                    return self.refuse_unrun_contained(unrun, failure);
                }
            }
        };
        self.run_prepared(prepared, cancel, CallOptions::new(admitted))
            .await
    }

    /// Resolves and parses `call`: the first two stages, which the scheduler
    /// runs before it decides how the call may run, and whose result it hands
    /// on to [`run_prepared`](Self::run_prepared) (so arguments are parsed once).
    pub(crate) fn prepare(&self, call: ToolCall) -> Prepared {
        match self.resolve(call) {
            Err(unresolved) => Prepared::Unresolved(unresolved),
            Ok(resolved) => match self.parse(resolved) {
                Ok(parsed) => Prepared::Parsed(parsed),
                Err(refused) => Prepared::Refused(refused),
            },
        }
    }

    /// Runs a prepared call through the rest of the pipeline, in a
    /// `tool_call` span when tracing wants one (the future is not wrapped
    /// otherwise: a call's future is large, and every wrapper moves it).
    pub(crate) fn run_prepared<'a, A: FnOnce() + Send + 'a>(
        &'a self,
        prepared: Prepared,
        cancel: CancellationToken,
        options: CallOptions<'a, A>,
    ) -> impl Future<Output = Arc<Outcome>> + Send + 'a {
        let call = prepared.call();
        let span = tracing::info_span!(
            "tool_call",
            call_id = %call.call_id,
            tool = %call.name,
            agent = call.agent.as_ref().map(AgentId::as_str),
        );
        let run = self.run(prepared, cancel, options);
        if span.is_disabled() {
            Either::Left(run)
        } else {
            Either::Right(run.instrument(span))
        }
    }

    async fn run<A: FnOnce() + Send>(
        &self,
        prepared: Prepared,
        cancel: CancellationToken,
        options: CallOptions<'_, A>,
    ) -> Arc<Outcome> {
        let CallOptions { admitted, cause } = options;
        // The caller's signal, while the pipeline holds it: a body's run
        // takes it into the execution (`execute_body`).
        let (executed, kept) = match prepared {
            Prepared::Unresolved(unresolved) => {
                admitted();
                return self.publish_unresolved(*unresolved, &cancel);
            }
            Prepared::Refused(refused) => {
                admitted();
                (*refused, Some(cancel))
            }
            Prepared::Parsed(parsed) => {
                // Without policy, admission builds no future (a call's
                // future is large, and every future built inside it is
                // moved).
                let admission = if self.has_policy(parsed.resolved.call.agent.as_ref()) {
                    self.admit(parsed, &cancel, AskMode::Approve).await
                } else {
                    self.admit_without_policy(parsed, &cancel)
                };
                admitted();
                match admission {
                    Admission::Allowed(admitted) => self.execute_body(admitted, cancel).await,
                    Admission::Refused(refused) => (*refused, Some(cancel)),
                    Admission::WouldAsk { admitted, .. } => {
                        // `Approve` asks instead of reporting; kept total all the same.
                        let failure = ToolError::from_code(
                            ErrorCode::Internal,
                            "the call needed approval but none was asked",
                        );
                        (*admitted.refuse(failure, None), Some(cancel))
                    }
                }
            }
        };
        let finalized = match self.finalize(executed, cause) {
            Finalizing::Done(finalized) => finalized,
            Finalizing::Pending(mut pending) => {
                let decision = (&mut pending.dispatch)
                    .instrument(tracing::debug_span!("post_execute"))
                    .await;
                self.resume_finalize(pending, decision, kept.as_ref())
            }
        };
        self.publish(finalized)
    }

    /// The outcome of a call whose id the call at `first` (0-based, in model
    /// order) of the same batch already uses: `INVALID_ARGUMENTS`, never run,
    /// but finalized and shown to the `tools/result` observers like any other
    /// outcome, so a log sees every call of the batch.
    pub(crate) fn refuse_duplicate_id(&self, call: ToolCall, first: usize) -> Arc<Outcome> {
        let failure = ToolError::from_code(
            ErrorCode::InvalidArguments,
            format!(
                "call id `{}` is already used by call #{} in this batch; every call in a batch \
                 needs its own id",
                call.call_id,
                first + 1
            ),
        );
        self.refuse_unrun(call, failure)
    }

    /// Tells the host's stage recorder, if any. A recorder that panics
    /// unwinds with a [`HostFault`] naming it, for the caller that contains
    /// the panic to say what failed.
    #[inline]
    pub(crate) fn record(&self, call_id: &CallId, stage: Stage) {
        if let Some(recorder) = self.inner.config.recorder()
            && let Err(payload) = catch_unwind(AssertUnwindSafe(|| recorder.record(call_id, stage)))
        {
            HostFault::raise(
                format!("the host's stage recorder (at stage `{stage}`)"),
                &*payload,
            );
        }
    }

    /// [`prepare`](Self::prepare), with a panic in it (a host part the
    /// first stages call, e.g. the stage recorder) contained: `Err` holds
    /// the failure that names what failed. The call is gone then (it moved
    /// into the stage that panicked).
    pub(crate) fn try_prepare(&self, call: ToolCall) -> Result<Prepared, ToolError> {
        catch_unwind(AssertUnwindSafe(|| self.prepare(call))).map_err(|payload| {
            let what = fault_description(&*payload, "resolving and parsing the call");
            tracing::error!(%what, "a host fault while preparing a call");
            preparation_failure(&what)
        })
    }

    /// `call`'s outcome, ended by `failure` without running: finalized and
    /// shown to the `tools/result` observers like any other — unless that
    /// faults too (the host part that failed may fail again), when the
    /// outcome is returned unpublished. `call` needs no arguments.
    pub(crate) fn refuse_unrun_contained(
        &self,
        call: ToolCall,
        failure: ToolError,
    ) -> Arc<Outcome> {
        let call_id = call.call_id.clone();
        let tool = call.name.clone();
        let fallback = failure.clone();
        catch_unwind(AssertUnwindSafe(|| self.refuse_unrun(call, failure))).unwrap_or_else(
            |payload| {
                let what = fault_description(&*payload, "finalizing the call");
                tracing::error!(%call_id, %what, "a host fault while ending a call that was not run");
                Arc::new(Outcome::failure(call_id, tool, fallback))
            },
        )
    }
}

/// `call` without its arguments: what ends it if the call itself is lost to
/// a host fault while it is prepared.
pub(crate) fn skeleton(call: &ToolCall) -> ToolCall {
    let mut skeleton = ToolCall::new(call.call_id.clone(), call.name.clone(), String::new());
    skeleton.agent.clone_from(&call.agent);
    skeleton.parent.clone_from(&call.parent);
    skeleton
}
