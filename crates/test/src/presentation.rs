//! How the harness's tools are presented to each agent's model: natively,
//! through the `run_code` transport a code-mode plugin registers, or both.

use tack_core::hook::AgentId;
use tack_core::host::ToolSchema;
use tack_core::tool::ToolDefinition;

use crate::{Harness, HarnessBuilder};

/// How tools are presented to an agent's model: the registry's own
/// [`Presentation`](tack_pipeline::Presentation).
pub use tack_pipeline::Presentation;

impl HarnessBuilder {
    /// Presents the tools this way to every agent without its own setting
    /// (the registry's default; without it, [`Presentation::Native`]).
    pub fn presentation(mut self, presentation: Presentation) -> Self {
        self.presentations.push((None, presentation));
        self
    }

    /// Presents the tools this way to `agent`.
    pub fn agent_presentation(
        mut self,
        agent: impl Into<AgentId>,
        presentation: Presentation,
    ) -> Self {
        self.presentations.push((Some(agent.into()), presentation));
        self
    }
}

/// The presentation, what it shows, and what a `run_code` program can call.
///
/// Under [`Presentation::Code`] an agent's model is shown only the `run_code`
/// transport (registered by a code-mode plugin with
/// `PluginContext::register_code_transport`), and a direct call of a native
/// tool is `UNKNOWN_TOOL`; its calls from inside a program are nested calls
/// through the same pipeline, reported in [`Report::nested`](crate::Report::nested).
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use tack_core::plugin::{Plugin, PluginContext, PluginError};
/// use tack_core::serde_json::json;
/// use tack_core::tool::ErrorCode;
/// use tack_test::{Call, FakeTool, Harness, Presentation};
///
/// struct Nothing;
/// impl Plugin for Nothing {
///     fn name(&self) -> &str { "nothing" }
///     fn install(&self, _: &mut PluginContext<'_>) -> Result<(), PluginError> { Ok(()) }
/// }
///
/// let h = Harness::builder()
///     .tool(FakeTool::new("echo"))
///     .agent_presentation("coder", Presentation::Code)
///     .install(Nothing)
///     .unwrap();
/// let coder = "coder".into();
/// assert_eq!(h.presentation(Some(&coder)), Presentation::Code);
/// // No transport registered: the coder is shown nothing, and cannot call directly ...
/// assert!(h.schemas(Some(&coder)).is_empty());
/// let direct = h.call(Call::new("echo", json!({})).agent("coder")).await;
/// assert_eq!(direct.error_code(), Some(ErrorCode::UnknownTool));
/// // ... but a program could still call `echo`:
/// let sdk: Vec<String> = h.native_tools(Some(&coder)).iter().map(|t| t.name().to_string()).collect();
/// assert_eq!(sdk, ["echo"]);
///
/// // Everyone else sees `echo` natively.
/// assert_eq!(h.schemas(None)[0].name, "echo");
/// h.set_presentation(None, Presentation::Both);
/// assert_eq!(h.presentation(None), Presentation::Both);
/// # });
/// ```
impl<P> Harness<P> {
    /// Sets how tools are presented, to `agent` or (with `None`) as the
    /// default.
    pub fn set_presentation(&self, agent: Option<&AgentId>, presentation: Presentation) {
        self.driver.registry().set_presentation(agent, presentation);
    }

    /// How tools are presented to `agent` (`None`: the default).
    pub fn presentation(&self, agent: Option<&AgentId>) -> Presentation {
        self.driver.registry().presentation(agent)
    }

    /// The schemas `agent`'s model is shown, sorted by name: the native tools,
    /// only `run_code`, or both, by its presentation.
    pub fn schemas(&self, agent: Option<&AgentId>) -> Vec<ToolSchema> {
        self.driver.registry().schemas(agent)
    }

    /// The native tools `agent` can call from inside a `run_code` program
    /// (whatever its presentation), sorted by name: what a code-mode SDK
    /// describes.
    pub fn native_tools(&self, agent: Option<&AgentId>) -> Vec<ToolDefinition> {
        self.driver
            .registry()
            .native_tools(agent)
            .iter()
            .map(|tool| tool.definition().clone())
            .collect()
    }
}
