//! The registry interface a plugin's tools are registered through.

use super::PluginError;
use crate::hook::{Disposer, Scope};
use crate::tool::ToolDefinition;

/// A tool registry: what a plugin's tools are registered into. Implemented
/// by the host's registry (tack-pipeline's `ToolRegistry`). A plugin's
/// install registers through its
/// [`PluginContext`](crate::plugin::PluginContext); a plugin whose tools
/// change later (an MCP server's tool list) is given one by its host and
/// keeps it.
pub trait ToolRegistrar: Send + Sync {
    /// Registers `definition` in `scope`; the disposer unregisters it.
    ///
    /// # Errors
    ///
    /// [`PluginError::DuplicateTool`], [`PluginError::ReservedTool`] or
    /// [`PluginError::InvalidSchema`], naming no plugin (the caller names it,
    /// see [`PluginError::in_plugin`]).
    fn register_tool(
        &self,
        scope: Scope,
        definition: ToolDefinition,
    ) -> Result<Disposer, PluginError>;

    /// Replaces tools of `scope` in one step: unregisters the tools named in
    /// `remove` and registers `add`, so that a call resolving a name removed
    /// and added again (a changed tool) finds the old or the new definition,
    /// never neither. All or nothing: on an error nothing changed. A name in
    /// `remove` that is not registered is ignored. The disposers returned
    /// unregister the added tools, in the order of `add`; the disposers of the
    /// removed tools become no-ops (they only remove the registration they
    /// made).
    ///
    /// The default refuses: a registry without atomic replacement (a caller
    /// may fall back to disposing and registering).
    ///
    /// # Errors
    ///
    /// As [`register_tool`](Self::register_tool) for the first definition of
    /// `add` the registry refuses (a name twice in `add` is a duplicate);
    /// [`PluginError::Unsupported`] from the default.
    fn replace_tools(
        &self,
        scope: Scope,
        remove: &[String],
        add: Vec<ToolDefinition>,
    ) -> Result<Vec<Disposer>, PluginError> {
        let _ = (scope, remove, add);
        Err(PluginError::Unsupported {
            plugin: None,
            operation: "atomic tool replacement".to_owned(),
        })
    }

    /// Registers the code-mode transport: the one tool allowed the reserved
    /// name [`ToolName::RUN_CODE`](crate::tool::ToolName::RUN_CODE), presented to agents whose presentation is code or both.
    /// The default refuses: a registry without code-mode support.
    ///
    /// # Errors
    ///
    /// [`PluginError::ReservedTool`] when the registry has no transport slot
    /// or the definition is not named `run_code`;
    /// [`PluginError::DuplicateTool`] when a transport is already registered.
    fn register_code_transport(&self, definition: ToolDefinition) -> Result<Disposer, PluginError> {
        Err(PluginError::ReservedTool {
            plugin: None,
            name: definition.name().to_string(),
            reason: "this registry has no code-mode transport".to_owned(),
        })
    }
}
