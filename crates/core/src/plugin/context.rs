//! What a plugin sees while it installs.

use std::fmt;
use std::sync::Arc;

use super::{PluginError, ToolRegistrar};
use crate::capability::{CapabilitySlots, FileSystem, Shell};
use crate::hook::{Disposables, Disposer, Scope};
use crate::hooks::ToolHooks;
use crate::policy::ApprovalService;
use crate::tool::{Tool, ToolDefinition};

/// The host as a plugin sees it during [`Plugin::install`](super::Plugin::install):
/// the hook points, the tool registry and the capability slots. Everything
/// registered through the `register_*` and `provide_*` methods is kept in the
/// plugin's footprint automatically; a disposer from a hook point is kept with
/// [`keep`](Self::keep).
pub struct PluginContext<'a> {
    plugin: &'a str,
    hooks: &'a ToolHooks,
    capabilities: &'a CapabilitySlots,
    tools: &'a dyn ToolRegistrar,
    footprint: Disposables,
}

impl fmt::Debug for PluginContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PluginContext")
            .field("plugin", &self.plugin)
            .field("footprint", &self.footprint.len())
            .finish_non_exhaustive()
    }
}

impl<'a> PluginContext<'a> {
    pub(crate) fn new(
        plugin: &'a str,
        hooks: &'a ToolHooks,
        capabilities: &'a CapabilitySlots,
        tools: &'a dyn ToolRegistrar,
    ) -> Self {
        Self {
            plugin,
            hooks,
            capabilities,
            tools,
            footprint: Disposables::new(),
        }
    }

    pub(crate) fn into_footprint(self) -> Disposables {
        self.footprint
    }

    /// The name of the plugin being installed.
    pub fn plugin_name(&self) -> &str {
        self.plugin
    }

    /// The host's tool hook points.
    pub fn hooks(&self) -> &ToolHooks {
        self.hooks
    }

    /// The host's capability slots.
    pub fn capabilities(&self) -> &CapabilitySlots {
        self.capabilities
    }

    /// Keeps a disposer in this plugin's footprint (undone when the plugin is unloaded).
    pub fn keep(&mut self, disposer: Disposer) {
        self.footprint.add(disposer);
    }

    /// Registers a global tool.
    ///
    /// # Errors
    ///
    /// [`PluginError::Registration`] when the registry refuses it.
    pub fn register_tool(&mut self, definition: ToolDefinition) -> Result<(), PluginError> {
        self.register_tool_in(Scope::Global, definition)
    }

    /// Registers a tool in `scope`.
    ///
    /// # Errors
    ///
    /// [`PluginError::Registration`] when the registry refuses it.
    pub fn register_tool_in(
        &mut self,
        scope: Scope,
        definition: ToolDefinition,
    ) -> Result<(), PluginError> {
        let disposer = self
            .tools
            .register_tool(scope, definition)
            .map_err(|source| PluginError::Registration {
                plugin: self.plugin.to_owned(),
                source,
            })?;
        self.keep(disposer);
        Ok(())
    }

    /// Registers the code-mode transport (`run_code`).
    ///
    /// # Errors
    ///
    /// [`PluginError::Registration`] when the registry refuses it.
    pub fn register_code_transport(
        &mut self,
        definition: ToolDefinition,
    ) -> Result<(), PluginError> {
        let disposer = self
            .tools
            .register_code_transport(definition)
            .map_err(|source| PluginError::Registration {
                plugin: self.plugin.to_owned(),
                source,
            })?;
        self.keep(disposer);
        Ok(())
    }

    /// Erases a typed tool and registers it globally.
    ///
    /// # Errors
    ///
    /// [`PluginError::Definition`] for an invalid tool, [`PluginError::Registration`]
    /// when the registry refuses it.
    pub fn register_typed<T: Tool>(&mut self, tool: T) -> Result<(), PluginError> {
        let definition =
            ToolDefinition::from_tool(tool).map_err(|source| PluginError::Definition {
                plugin: self.plugin.to_owned(),
                source,
            })?;
        self.register_tool(definition)
    }

    /// Provides the filesystem capability.
    pub fn provide_fs(&mut self, fs: Arc<dyn FileSystem>) {
        let disposer = self.capabilities.provide_fs(fs);
        self.keep(disposer);
    }

    /// Provides the shell capability.
    pub fn provide_shell(&mut self, shell: Arc<dyn Shell>) {
        let disposer = self.capabilities.provide_shell(shell);
        self.keep(disposer);
    }

    /// Provides the approval service.
    pub fn provide_approval(&mut self, approval: Arc<dyn ApprovalService>) {
        let disposer = self.capabilities.provide_approval(approval);
        self.keep(disposer);
    }
}
