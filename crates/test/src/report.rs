//! What happened to one call.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use tack_core::hook::Provenance;
use tack_core::hooks::ExecutionRecord;
use tack_core::tool::{ContentBlock, ErrorCode, Outcome, ToolError, ToolExecution};

/// A stage of the pipeline, in the order a call can enter them: the
/// pipeline's own [`Stage`](tack_pipeline::Stage).
pub use tack_pipeline::Stage;

/// The failure `kind` of a call whose arguments a `tools/pre-execute`
/// rewrite broke (the pipeline fails it, naming the listener, and never runs
/// it): the pipeline's own [`INVALID_REWRITE`](tack_pipeline::INVALID_REWRITE).
pub use tack_pipeline::INVALID_REWRITE;

/// What happened to one call: its outcome, the stages it went through, who
/// decided (a denial, a block, a replacement, a timeout), whether the tool's
/// body ran, and the record the `tools/result` observers saw.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use tack_core::plugin::{Plugin, PluginContext, PluginError};
/// use tack_core::policy::PreDecision;
/// use tack_core::serde_json::json;
/// use tack_core::tool::ErrorCode;
/// use tack_test::{Call, FakeTool, Harness, Stage};
///
/// struct NoBash;
/// impl Plugin for NoBash {
///     fn name(&self) -> &str { "no-bash" }
///     fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
///         cx.hooks().pre_execute().tap("no-bash", |exec, next| async move {
///             if exec.name() == "bash" { return PreDecision::deny("no shell here"); }
///             next.run(exec).await
///         });
///         Ok(())
///     }
/// }
///
/// let bash = FakeTool::new("bash");
/// let h = Harness::builder().tool(bash.clone()).install(NoBash).unwrap();
/// let report = h.call(Call::new("bash", json!({"command": "ls"}))).await;
/// assert_eq!(report.error_code(), Some(ErrorCode::Denied));
/// assert_eq!(report.decided_at(), Some(Stage::PreExecute));
/// assert_eq!(report.decided_by_listener(), Some("no-bash"));
/// assert_eq!(report.text(), "DENIED: no shell here");
/// assert!(!report.body_ran());
/// assert_eq!(bash.runs(), 0);
/// assert!(report.observed()); // the result observers saw this very outcome
/// # });
/// ```
#[derive(Clone)]
pub struct Report {
    pub(crate) outcome: Arc<Outcome>,
    pub(crate) stages: Vec<Stage>,
    pub(crate) decided_at: Option<Stage>,
    pub(crate) record: Option<Arc<ExecutionRecord>>,
    pub(crate) body_ran: bool,
    pub(crate) nested: Vec<Report>,
}

impl fmt::Debug for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Report")
            .field("stages", &self.stages)
            .field("decided_at", &self.decided_at)
            .field("body_ran", &self.body_ran)
            .field("outcome", &self.outcome)
            .field("nested", &self.nested)
            .finish_non_exhaustive()
    }
}

impl Report {
    /// The call's id.
    pub fn call_id(&self) -> &str {
        self.outcome.call_id.as_str()
    }

    /// The name of the tool called.
    pub fn tool(&self) -> &str {
        &self.outcome.tool
    }

    /// The call's one outcome, as the caller got it.
    pub fn outcome(&self) -> &Arc<Outcome> {
        &self.outcome
    }

    /// Whether the call succeeded.
    pub fn is_success(&self) -> bool {
        self.outcome.is_success()
    }

    /// The value of a success.
    pub fn value(&self) -> Option<&Value> {
        self.outcome.value()
    }

    /// The failure of a failed call.
    pub fn failure(&self) -> Option<&ToolError> {
        self.outcome.failure_info()
    }

    /// The error code of a failed call.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.outcome.error_code()
    }

    /// The failure's message, for a failed call.
    pub fn message(&self) -> Option<&str> {
        self.failure().map(|f| f.message())
    }

    /// What the model reads.
    pub fn content(&self) -> &[ContentBlock] {
        &self.outcome.content
    }

    /// The text blocks of [`content`](Self::content), joined.
    pub fn text(&self) -> String {
        self.outcome.content.joined_text()
    }

    /// The stages the call entered, in order.
    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// Whether the call entered `stage`.
    pub fn reached(&self, stage: Stage) -> bool {
        self.stages.contains(&stage)
    }

    /// Whether the tool's body started.
    pub fn body_ran(&self) -> bool {
        self.body_ran
    }

    /// Who decided a denial, block, replacement or timeout: the hook point or
    /// stage, and the listener (or default) within it. `None` when nothing
    /// overruled the tool.
    pub fn provenance(&self) -> Option<&Provenance> {
        self.outcome.provenance.as_ref()
    }

    /// The stage that decided (see [`provenance`](Self::provenance)).
    pub fn decided_at(&self) -> Option<Stage> {
        self.decided_at
    }

    /// The listener or guard that decided, by name.
    pub fn decided_by_listener(&self) -> Option<&str> {
        self.provenance()?.listener.as_deref()
    }

    /// The execution hooks and guards saw (`None` when the call never got
    /// one: an unknown tool, arguments that do not parse or validate).
    pub fn execution(&self) -> Option<&Arc<ToolExecution>> {
        self.record.as_ref()?.execution.as_ref()
    }

    /// The record the `tools/result` observers saw.
    pub fn record(&self) -> Option<&Arc<ExecutionRecord>> {
        self.record.as_ref()
    }

    /// Whether the `tools/result` observers saw exactly this outcome (the
    /// same frozen value the caller got).
    pub fn observed(&self) -> bool {
        self.record
            .as_ref()
            .is_some_and(|r| Arc::ptr_eq(&r.outcome, &self.outcome))
    }

    /// The calls a composite tool dispatched inside this one (through its
    /// run context's dispatcher, made with `ToolRunContext::nested_call`),
    /// at any depth, each with its own report, in the order they ended. Only
    /// those that ended before this call did; empty for a plain tool.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use tack_core::plugin::{Plugin, PluginContext, PluginError};
    /// use tack_core::serde_json::json;
    /// use tack_core::tool::ErrorCode;
    /// use tack_test::{Call, FakeTool, Harness, Stage};
    ///
    /// struct Nothing;
    /// impl Plugin for Nothing {
    ///     fn name(&self) -> &str { "nothing" }
    ///     fn install(&self, _: &mut PluginContext<'_>) -> Result<(), PluginError> { Ok(()) }
    /// }
    ///
    /// // A composite tool: calls `echo` twice, then a tool that is not there.
    /// let twice = FakeTool::new("twice").body(|_args, cx| async move {
    ///     let dispatcher = cx.dispatcher().expect("the harness provides one");
    ///     for (n, tool) in ["echo", "echo", "nope"].into_iter().enumerate() {
    ///         let call = cx.nested_call(format!("{}:{n}", cx.call_id().as_str()), tool, "{}");
    ///         dispatcher.dispatch(call, cx.cancellation().clone()).await;
    ///     }
    ///     Ok(json!("done"))
    /// });
    /// let h = Harness::builder()
    ///     .tool(twice)
    ///     .tool(FakeTool::new("echo").returns(json!("hi")))
    ///     .install(Nothing)
    ///     .unwrap();
    /// let report = h.call(Call::new("twice", json!({})).id("outer")).await;
    /// assert_eq!(report.value(), Some(&json!("done")));
    /// let nested = report.nested();
    /// assert_eq!(nested.len(), 3);
    /// assert_eq!(nested[0].call_id(), "outer:0");
    /// assert_eq!(nested[0].value(), Some(&json!("hi")));
    /// assert!(nested[0].reached(Stage::PostExecute) && nested[0].body_ran());
    /// let parent = nested[1].execution().unwrap().parent().unwrap();
    /// assert_eq!(parent.root_call_id().as_str(), "outer");
    /// assert_eq!(nested[2].error_code(), Some(ErrorCode::UnknownTool));
    /// # });
    /// ```
    pub fn nested(&self) -> &[Report] {
        &self.nested
    }
}
