//! The run context a tool body executes with.

use std::fmt;
use std::sync::{Arc, LazyLock};
use tokio_util::sync::CancellationToken;

use crate::approval::ApprovalService;
use crate::capability::{
    Capabilities, CapabilityError, CapabilityKind, ClientLogLevel, ClientRequest,
    ClientRequestKind, FileSystem, Shell, ToolDispatcher,
};
use crate::hook::AgentId;
use crate::model::{CallId, DeferredContext, ExecutionToken, ToolCall};

pub(crate) mod effects;
pub(crate) mod execution;

pub(crate) use effects::EffectsInner;
pub(crate) use effects::RunEffects;
pub(crate) use execution::ToolExecution;
pub(crate) use execution::{RunParts, RunSlot};

/// What every clone of a context a host made shares (one allocation).
pub(crate) struct Shared {
    pub(crate) execution: Arc<ToolExecution>,
    pub(crate) capabilities: Arc<Capabilities>,
    pub(crate) effects: Effects,
}

/// A context's effects: held inline (made with the context), or the host's.
pub(crate) enum Effects {
    Inline(EffectsInner),
    Host(RunEffects),
}

impl Shared {
    /// The effects this context writes to.
    pub(crate) fn effects(&self) -> &EffectsInner {
        match &self.effects {
            Effects::Inline(inner) => inner,
            Effects::Host(effects) => effects.inner(),
        }
    }
}

/// What a tool body runs with: its cancellation signal, its capabilities, and
/// the ways to ask the loop for things (deferred context, concluding the turn).
///
/// Cheap to clone. Only `tools/execute` wrappers may replace the cancellation
/// signal ([`with_cancellation`](Self::with_cancellation)); everything else is
/// fixed for the execution.
///
/// The pipeline builds it (a plugin cannot); a tool body gets it by
/// reference:
///
/// ```
/// use tack_core::context::ToolRunContext;
/// use tack_core::serde_json::{Value, json};
/// use tack_core::tool::ToolError;
///
/// async fn body(_args: Value, cx: ToolRunContext) -> Result<Value, ToolError> {
///     if cx.is_cancelled() {
///         return Err(ToolError::cancelled("stopped before reading anything"));
///     }
///     let fs = cx.fs()?; // the host's filesystem capability, or a MISSING error
///     let _ = fs;
///     cx.defer_context("note for after this call's result");
///     Ok(json!({"call": cx.call_id().as_str()}))
/// }
/// ```
#[derive(Clone)]
pub struct ToolRunContext {
    pub(crate) run: Run,
    /// The signal, unless it is the one kept in the execution's run slot
    /// (the first context of an execution moves its signal there).
    pub(crate) cancel: Option<CancellationToken>,
}

/// Where a context's execution, capabilities and effects live.
#[derive(Clone)]
pub(crate) enum Run {
    /// In the execution's own allocation (its run slot): the pipeline's
    /// context, which needs no allocation of its own.
    Execution(Arc<ToolExecution>),
    /// In an allocation of the context's own.
    Shared(Arc<Shared>),
}

/// The capabilities of a context whose run slot was never filled (not made
/// by this crate's constructors; kept total all the same).
static NO_CAPABILITIES: LazyLock<Capabilities> = LazyLock::new(Capabilities::default);

/// The signal of a context whose run slot was never filled (kept total, as
/// [`NO_CAPABILITIES`]): never cancelled.
static NO_CANCELLATION: LazyLock<CancellationToken> = LazyLock::new(CancellationToken::new);

impl ToolRunContext {
    /// The same context with another cancellation signal. Meant for
    /// `tools/execute` wrappers; build the new token as a child of
    /// [`cancellation`](Self::cancellation) so the caller's cancellation still
    /// reaches the body.
    pub fn with_cancellation(&self, cancel: CancellationToken) -> Self {
        Self {
            run: self.run.clone(),
            cancel: Some(cancel),
        }
    }

    /// The cancellation signal. A body that runs for long should watch it
    /// (`tokio::select!` on [`CancellationToken::cancelled`]).
    pub fn cancellation(&self) -> &CancellationToken {
        match (&self.cancel, &self.run) {
            (Some(cancel), _) => cancel,
            (None, Run::Execution(execution)) => {
                execution.run_cancel().unwrap_or(&*NO_CANCELLATION)
            }
            (None, Run::Shared(_)) => &NO_CANCELLATION,
        }
    }

    /// Whether cancellation has been requested.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation().is_cancelled()
    }

    /// The execution this context belongs to.
    pub fn execution(&self) -> &Arc<ToolExecution> {
        match &self.run {
            Run::Execution(execution) => execution,
            Run::Shared(shared) => &shared.execution,
        }
    }

    /// The capabilities the body runs with.
    fn capabilities(&self) -> &Capabilities {
        match &self.run {
            Run::Execution(execution) => execution
                .run()
                .parts
                .get()
                .map_or(&*NO_CAPABILITIES, |parts| &parts.capabilities),
            Run::Shared(shared) => &shared.capabilities,
        }
    }

    /// The call's id.
    pub fn call_id(&self) -> &CallId {
        self.execution().call_id()
    }

    /// The agent the call was made for.
    pub fn agent(&self) -> Option<&AgentId> {
        self.execution().agent()
    }

    /// This execution's token: the parent token of the calls a composite tool makes.
    pub fn token(&self) -> &ExecutionToken {
        self.execution().token()
    }

    /// The filesystem capability.
    ///
    /// # Errors
    ///
    /// [`CapabilityError::Missing`] when the host installed none.
    pub fn fs(&self) -> Result<&dyn FileSystem, CapabilityError> {
        self.capabilities()
            .fs
            .as_deref()
            .ok_or(CapabilityError::missing(CapabilityKind::Fs))
    }

    /// The shell capability.
    ///
    /// # Errors
    ///
    /// [`CapabilityError::Missing`] when the host installed none.
    pub fn shell(&self) -> Result<&dyn Shell, CapabilityError> {
        self.capabilities()
            .shell
            .as_deref()
            .ok_or(CapabilityError::missing(CapabilityKind::Shell))
    }

    /// The approval service.
    ///
    /// # Errors
    ///
    /// [`CapabilityError::Missing`] when the host installed none.
    pub fn approval(&self) -> Result<&dyn ApprovalService, CapabilityError> {
        self.capabilities()
            .approval
            .as_deref()
            .ok_or(CapabilityError::missing(CapabilityKind::Approval))
    }

    /// The nested dispatcher, for composite tools.
    ///
    /// # Errors
    ///
    /// [`CapabilityError::Missing`] when the host installed none.
    pub fn dispatcher(&self) -> Result<&dyn ToolDispatcher, CapabilityError> {
        self.capabilities()
            .dispatcher
            .as_deref()
            .ok_or(CapabilityError::missing(CapabilityKind::Dispatcher))
    }

    /// Reports how far the call has got to the client it came from (an MCP
    /// client that sent a `progressToken` gets `notifications/progress`):
    /// `progress`, the work done so far, out of `total`, the whole work when
    /// known, with an optional `message` saying what is being done. Progress
    /// only grows within a call. Without a client, or when the client did
    /// not ask for progress, it does nothing.
    ///
    /// ```
    /// use tack_core::capability::ClientLogLevel;
    /// use tack_core::context::ToolRunContext;
    /// use tack_core::serde_json::{Value, json};
    /// use tack_core::tool::ToolError;
    ///
    /// async fn body(_args: Value, cx: ToolRunContext) -> Result<Value, ToolError> {
    ///     for step in 0..3 {
    ///         let message = format!("step {} of 3", step + 1);
    ///         cx.report_progress(f64::from(step), Some(3.0), Some(message)).await;
    ///     }
    ///     cx.log_to_client(ClientLogLevel::Info, json!("all three steps done")).await;
    ///     Ok(json!("done"))
    /// }
    /// ```
    pub async fn report_progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) {
        if let Some(client) = &self.capabilities().client {
            client
                .progress(self.call_id(), progress, total, message)
                .await;
        }
    }

    /// Sends a log message to the client the call came from, if it asked for
    /// messages of `level` (MCP: `notifications/message`). Without a client
    /// it does nothing.
    pub async fn log_to_client(&self, level: ClientLogLevel, data: serde_json::Value) {
        if let Some(client) = &self.capabilities().client {
            client.log(self.call_id(), level, data).await;
        }
    }

    /// Whether the client the call came from can be asked for `kind` (it
    /// declared the capability). False without a client.
    pub fn client_can_ask(&self, kind: ClientRequestKind) -> bool {
        self.capabilities()
            .client
            .as_ref()
            .is_some_and(|client| client.can_ask(self.call_id(), kind))
    }

    /// Asks the client the call came from every one of `requests` (sampling,
    /// elicitation, roots); the answers in the same order.
    ///
    /// A client of MCP 2026-07-28 answers by sending the call again: this
    /// returns [`CapabilityError::InputRequired`], which the body returns
    /// at once (`?`), and the body runs again from the start with the answers
    /// at hand. So ask before doing anything that must not happen twice, and
    /// keep each request's key the same from one run to the next.
    ///
    /// # Errors
    ///
    /// [`CapabilityError::NoClient`] when the call did not come from a
    /// client (a model's call in `tack run`), `Unsupported` when the client
    /// did not declare the capability, `InputRequired` as above,
    /// `ClientFailed` when it answered with an error.
    pub async fn ask_client(
        &self,
        requests: Vec<ClientRequest>,
    ) -> Result<Vec<serde_json::Value>, CapabilityError> {
        match &self.capabilities().client {
            Some(client) => client.ask(self.call_id(), requests).await,
            None => Err(CapabilityError::NoClient),
        }
    }

    /// A nested call of `name` with `arguments`, marked as made by this
    /// execution (same agent, this execution's token as parent).
    pub fn nested_call(
        &self,
        call_id: impl Into<CallId>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> ToolCall {
        let mut call = ToolCall::new(call_id, name, arguments).with_parent(self.token().clone());
        call.agent = self.agent().cloned();
        call
    }

    /// Queues a context that the loop appends after this call's result (never
    /// mid-call): text, or a [`DeferredContext`] of content blocks (images
    /// included). It survives a later failure of the same call.
    pub fn defer_context(&self, message: impl Into<DeferredContext>) {
        self.effects().defer_context(message.into());
    }

    /// Asks the loop to end the turn after this call. It rides on this
    /// execution's own success: a failed call concludes nothing.
    pub fn conclude_turn(&self) {
        self.effects().conclude_turn();
    }

    /// The effects this execution has asked for so far: the pipeline's, never
    /// handed to a tool body.
    pub(crate) fn effects(&self) -> &EffectsInner {
        match &self.run {
            Run::Execution(execution) => &execution.run().effects,
            Run::Shared(shared) => shared.effects(),
        }
    }
}

impl fmt::Debug for ToolRunContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRunContext")
            .field("call_id", self.call_id())
            .field("tool", &self.execution().name())
            .field("cancelled", &self.is_cancelled())
            .field("capabilities", self.capabilities())
            .finish()
    }
}
