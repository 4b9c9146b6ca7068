//! One plugin installed over the real pipeline, with fake tools.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use tack_core::CancellationToken;
use tack_core::capability::{FileSystem, Shell};
use tack_core::hook::{AgentId, Disposer, Scope};
use tack_core::hooks::{ExecutionRecord, ToolHooks};
use tack_core::host::Disposables;
use tack_core::host::{CapabilitySlots, PluginHost};
use tack_core::plugin::{Plugin, PluginError};
use tack_core::policy::ApprovalService;
use tack_core::tool::{CallId, Outcome};
use tack_pipeline::Presentation;

use crate::driver::{Driver, stage_of_hook};
use crate::{Call, ExecutionMode, ExecutionModes, FakeTool, Report};

/// The name of the harness's own `tools/result` observer (the one that keeps
/// each call's record for its [`Report`]).
pub const RECORDER: &str = "tack-test/recorder";

/// Sets up a [`Harness`]: fake tools (global or for one agent),
/// capabilities and presentations first, then the plugin, installed the way
/// a host installs it.
#[must_use = "a builder does nothing until `install`"]
pub struct HarnessBuilder {
    pub(crate) driver: Arc<Driver>,
    pub(crate) presentations: Vec<(Option<AgentId>, Presentation)>,
    tools: Vec<(Scope, FakeTool)>,
    fs: Option<Arc<dyn FileSystem>>,
    shell: Option<Arc<dyn Shell>>,
    approval: Option<Arc<dyn ApprovalService>>,
}

impl fmt::Debug for HarnessBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HarnessBuilder")
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

impl Default for HarnessBuilder {
    fn default() -> Self {
        Self {
            driver: Driver::new(),
            presentations: Vec::new(),
            tools: Vec::new(),
            fs: None,
            shell: None,
            approval: None,
        }
    }
}

impl HarnessBuilder {
    /// Registers `tool` for every agent.
    pub fn tool(mut self, tool: FakeTool) -> Self {
        self.tools.push((Scope::Global, tool));
        self
    }

    /// Registers `tool` for `agent` only.
    pub fn agent_tool(mut self, agent: impl Into<AgentId>, tool: FakeTool) -> Self {
        self.tools.push((Scope::Agent(agent.into()), tool));
        self
    }

    /// Provides the filesystem capability before the plugin is installed.
    pub fn fs(mut self, fs: Arc<dyn FileSystem>) -> Self {
        self.fs = Some(fs);
        self
    }

    /// Provides the shell capability before the plugin is installed.
    pub fn shell(mut self, shell: Arc<dyn Shell>) -> Self {
        self.shell = Some(shell);
        self
    }

    /// Provides the approval service before the plugin is installed.
    pub fn approval(mut self, approval: Arc<dyn ApprovalService>) -> Self {
        self.approval = Some(approval);
        self
    }

    /// The execution modes of the pipeline being built: for a plugin that
    /// takes a classifier from its host (see [`ExecutionModes`]).
    pub fn execution_modes(&self) -> ExecutionModes {
        ExecutionModes::new(&self.driver)
    }

    /// Registers the tools, provides the capabilities, sets the
    /// presentations and installs `plugin`.
    ///
    /// # Errors
    ///
    /// The plugin's install error (nothing of it stays installed), or for a
    /// fake tool the definition's error or the registry's refusal
    /// ([`PluginError::DuplicateTool`], [`PluginError::ReservedTool`],
    /// [`PluginError::InvalidSchema`]).
    pub fn install<P: Plugin>(self, plugin: P) -> Result<Harness<P>, PluginError> {
        let mut harness = self.uninstalled(plugin)?;
        harness.install()?;
        Ok(harness)
    }

    /// Registers the tools, provides the capabilities and sets the
    /// presentations, but leaves `plugin` uninstalled: for a test that adds
    /// its own listeners first, then calls [`Harness::install`].
    ///
    /// # Errors
    ///
    /// For a fake tool, the definition's error or the registry's refusal
    /// ([`PluginError::DuplicateTool`], [`PluginError::ReservedTool`],
    /// [`PluginError::InvalidSchema`]).
    pub fn uninstalled<P: Plugin>(self, plugin: P) -> Result<Harness<P>, PluginError> {
        let harness = Harness::empty(plugin, self.driver);
        for (agent, presentation) in self.presentations {
            harness.set_presentation(agent.as_ref(), presentation);
        }
        for (scope, tool) in self.tools {
            harness.register_in(scope, &tool)?;
        }
        let caps = harness.driver.capabilities();
        if let Some(fs) = self.fs {
            caps.provide_fs(fs);
        }
        if let Some(shell) = self.shell {
            caps.provide_shell(shell);
        }
        if let Some(approval) = self.approval {
            caps.provide_approval(approval);
        }
        Ok(harness)
    }
}

/// One plugin, installed (by value) into the real pipeline with fake tools;
/// calls go through every stage — pre-execute, approval, guards, execute,
/// post-execute, result — and each comes back as a [`Report`].
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use tack_core::plugin::{Plugin, PluginContext, PluginError};
/// use tack_core::serde_json::json;
/// use tack_test::{Call, FakeTool, Harness};
///
/// struct Nothing;
/// impl Plugin for Nothing {
///     fn name(&self) -> &str { "nothing" }
///     fn install(&self, _: &mut PluginContext<'_>) -> Result<(), PluginError> { Ok(()) }
/// }
///
/// let h = Harness::builder()
///     .tool(FakeTool::new("echo").body(|args, _cx| async move { Ok(args["text"].clone()) }))
///     .install(Nothing)
///     .unwrap();
/// let report = h.call(Call::new("echo", json!({"text": "hi"}))).await;
/// assert!(report.is_success());
/// assert_eq!(report.value(), Some(&json!("hi")));
/// assert!(report.body_ran());
/// # });
/// ```
pub struct Harness<P> {
    plugin: P,
    pub(crate) driver: Arc<Driver>,
    footprint: Option<Disposables>,
    records: Arc<Mutex<Vec<Arc<ExecutionRecord>>>>,
    started: Arc<Mutex<HashSet<CallId>>>,
    next_id: AtomicU64,
    _recorder: Disposer,
}

/// A harness owns its plugin's registrations and its own recorder: dropping
/// it removes them (the pipeline may be shared with another harness).
impl<P> Drop for Harness<P> {
    fn drop(&mut self) {
        if let Some(footprint) = self.footprint.take() {
            footprint.dispose();
        }
        self._recorder.dispose();
    }
}

impl<P> fmt::Debug for Harness<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Harness")
            .field("installed", &self.footprint.is_some())
            .finish_non_exhaustive()
    }
}

impl Harness<()> {
    /// A builder: tools and capabilities, then the plugin.
    pub fn builder() -> HarnessBuilder {
        HarnessBuilder::default()
    }
}

impl<P: Plugin> Harness<P> {
    /// `plugin` installed over a pipeline without tools.
    ///
    /// # Errors
    ///
    /// The plugin's install error.
    pub fn new(plugin: P) -> Result<Self, PluginError> {
        Harness::builder().install(plugin)
    }

    fn empty(plugin: P, driver: Arc<Driver>) -> Self {
        let records: Arc<Mutex<Vec<Arc<ExecutionRecord>>>> = Arc::default();
        let sink = records.clone();
        let recorder = driver
            .hooks()
            .result()
            .tap(RECORDER, move |record| sink.lock().push(record.clone()));
        Self {
            plugin,
            driver,
            footprint: None,
            records,
            started: Arc::default(),
            next_id: AtomicU64::new(1),
            _recorder: recorder,
        }
    }

    /// The plugin under test.
    pub fn plugin(&self) -> &P {
        &self.plugin
    }

    /// Whether the plugin is installed.
    pub fn is_installed(&self) -> bool {
        self.footprint.is_some()
    }

    /// Unloads the plugin: everything it registered goes away.
    pub fn uninstall(&mut self) {
        if let Some(footprint) = self.footprint.take() {
            footprint.dispose();
        }
    }

    /// Installs the plugin (again, after [`uninstall`](Self::uninstall)); a
    /// no-op when it is installed.
    ///
    /// # Errors
    ///
    /// The plugin's install error; nothing of the plugin stays installed.
    pub fn install(&mut self) -> Result<(), PluginError> {
        if self.footprint.is_none() {
            let mut host = PluginHost::new(
                self.driver.hooks(),
                self.driver.capabilities(),
                self.driver.registrar(),
            );
            host.install(&self.plugin)?;
            self.footprint = Some(host.into_disposables());
        }
        Ok(())
    }

    /// The hook points, for a test's own listeners next to the plugin's.
    pub fn hooks(&self) -> &ToolHooks {
        self.driver.hooks()
    }

    /// The capability slots (fs, shell, approval, dispatcher).
    pub fn capabilities(&self) -> &CapabilitySlots {
        self.driver.capabilities()
    }

    /// How the pipeline would schedule `call` now (see [`ExecutionModes`]).
    pub fn execution_mode(&self, call: &Call) -> ExecutionMode {
        self.driver
            .execution_mode(&call.to_tool_call(call.id.as_deref().unwrap_or("call-mode")))
    }

    /// The pipeline's execution modes, for a classifier (see
    /// [`ExecutionModes`]).
    pub fn execution_modes(&self) -> ExecutionModes {
        ExecutionModes::new(&self.driver)
    }

    /// Registers another fake tool for every agent; the disposer removes it.
    ///
    /// # Errors
    ///
    /// The registry's or the definition's error.
    pub fn register(&self, tool: &FakeTool) -> Result<Disposer, PluginError> {
        self.register_in(Scope::Global, tool)
    }

    /// Registers another fake tool in `scope`; the disposer removes it.
    ///
    /// # Errors
    ///
    /// The registry's or the definition's error.
    pub fn register_in(&self, scope: Scope, tool: &FakeTool) -> Result<Disposer, PluginError> {
        let plugin = format!("{RECORDER} (fake tool `{}`)", tool.name());
        let definition = tool
            .definition_recording(Some(self.started.clone()))
            .map_err(|error| error.in_plugin(&plugin))?;
        self.driver
            .register(scope, definition)
            .map_err(|error| error.in_plugin(&plugin))
    }

    /// Runs `call` through the pipeline and reports what happened, with a
    /// report of each nested call a composite tool made in it (see
    /// [`Report::nested`]).
    pub async fn call(&self, call: Call) -> Report {
        let id = call
            .id
            .clone()
            .unwrap_or_else(|| format!("call-{}", self.next_id.fetch_add(1, Ordering::Relaxed)));
        let tool_call = call.to_tool_call(&id);
        let cancel = call.cancel.unwrap_or_default();
        let outcome = self.driver.execute(tool_call, cancel).await;
        let call_id = CallId::from(id);
        let nested = self
            .driver
            .nested()
            .take(&call_id)
            .into_iter()
            .map(|outcome| {
                let id = outcome.call_id.clone();
                self.report(&id, outcome, Vec::new())
            })
            .collect();
        self.report(&call_id, outcome, nested)
    }

    /// The report of the call `call_id` that ended in `outcome`: takes its
    /// stages, its body's start and its record out of the harness's logs.
    fn report(&self, call_id: &CallId, outcome: Arc<Outcome>, nested: Vec<Report>) -> Report {
        let record = {
            let mut records = self.records.lock();
            records
                .iter()
                .position(|r| Arc::ptr_eq(&r.outcome, &outcome))
                .map(|i| records.remove(i))
        };
        let decided_at = outcome
            .provenance
            .as_ref()
            .and_then(|p| stage_of_hook(&p.hook));
        Report {
            stages: self.driver.take_stages(call_id),
            body_ran: self.started.lock().remove(call_id),
            decided_at,
            record,
            outcome,
            nested,
        }
    }

    /// [`call`](Self::call) with a fresh signal the caller cancels once
    /// `cancel_when` completes (a sleep, a notification).
    pub async fn call_cancelled_when(
        &self,
        call: Call,
        cancel_when: impl std::future::Future<Output = ()>,
    ) -> Report {
        let caller = CancellationToken::new();
        let trigger = caller.clone();
        let call = call.cancellation(caller);
        let run = self.call(call);
        let cancel = async move {
            cancel_when.await;
            trigger.cancel();
        };
        let mut run = std::pin::pin!(run);
        let mut cancel = std::pin::pin!(cancel);
        let mut cancelled = false;
        // Poll both until the call ends; the cancelling side runs once.
        std::future::poll_fn(|cx| {
            use std::task::Poll;
            if let Poll::Ready(report) = run.as_mut().poll(cx) {
                return Poll::Ready(report);
            }
            if !cancelled && cancel.as_mut().poll(cx).is_ready() {
                cancelled = true;
                // The signal fired: let the call see it.
                return run.as_mut().poll(cx);
            }
            Poll::Pending
        })
        .await
    }
}
