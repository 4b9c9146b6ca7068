//! What a plugin sees while it installs.

use std::fmt;
use std::sync::Arc;

use super::ToolRegistrar;
use super::{PluginError, PluginHooks, Registration};
use crate::capability::set::CapabilitySlots;
use crate::capability::{Capabilities, FileSystem, Shell, ToolDispatcher};
use crate::hook::{Disposables, Disposer, Scope};
use crate::hooks::ToolHooks;
use crate::policy::ApprovalService;
use crate::tool::{Tool, ToolDefinition};

/// The host as a plugin sees it during [`Plugin::install`](super::Plugin::install):
/// the hook points, the tool registry and the capability slots.
///
/// Everything registered through the context — listeners and guards through
/// [`hooks`](Self::hooks), capabilities through
/// [`capabilities`](Self::capabilities) or the `provide_*` methods, tools
/// through the `register_*` methods — goes into the plugin's footprint at
/// once and stays installed until the plugin is unloaded, whatever happens to
/// the handle returned (a [`Registration`], which does nothing on drop). Only a
/// [`Disposer`] obtained elsewhere (say, from a helper that takes the raw
/// [`ToolHooks`]) has to be handed to [`keep`](Self::keep).
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

    /// The host's tool hook points; every registration made through them
    /// belongs to this plugin until it is unloaded (see [`PluginHooks`]).
    pub fn hooks(&self) -> PluginHooks<'_> {
        PluginHooks::new(self.plugin, self.hooks, &self.footprint)
    }

    /// The host's capability slots; every capability provided through them
    /// belongs to this plugin until it is unloaded.
    pub fn capabilities(&self) -> PluginCapabilities<'_> {
        PluginCapabilities {
            slots: self.capabilities,
            footprint: &self.footprint,
        }
    }

    /// Keeps a disposer in this plugin's footprint (undone when the plugin is
    /// unloaded). Registrations made through [`hooks`](Self::hooks) and
    /// [`capabilities`](Self::capabilities) are kept already; this is for
    /// disposers obtained elsewhere.
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
            .map_err(|error| PluginError::Registration {
                plugin: self.plugin.to_owned(),
                error,
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
            .map_err(|error| PluginError::Registration {
                plugin: self.plugin.to_owned(),
                error,
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
            ToolDefinition::from_tool(tool).map_err(|error| PluginError::Definition {
                plugin: self.plugin.to_owned(),
                error,
            })?;
        self.register_tool(definition)
    }

    /// Provides the filesystem capability for the plugin's lifetime.
    pub fn provide_fs(&mut self, fs: Arc<dyn FileSystem>) {
        self.capabilities().provide_fs(fs);
    }

    /// Provides the shell capability for the plugin's lifetime.
    pub fn provide_shell(&mut self, shell: Arc<dyn Shell>) {
        self.capabilities().provide_shell(shell);
    }

    /// Provides the approval service for the plugin's lifetime.
    pub fn provide_approval(&mut self, approval: Arc<dyn ApprovalService>) {
        self.capabilities().provide_approval(approval);
    }
}

/// The capability slots as a plugin sees them while it installs: whatever it
/// provides belongs to its footprint until it is unloaded, and the returned
/// [`Registration`] does nothing on drop.
#[derive(Clone, Copy)]
pub struct PluginCapabilities<'a> {
    slots: &'a CapabilitySlots,
    footprint: &'a Disposables,
}

impl fmt::Debug for PluginCapabilities<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PluginCapabilities")
            .field(self.slots)
            .finish()
    }
}

impl PluginCapabilities<'_> {
    /// The capabilities as they are now.
    pub fn snapshot(&self) -> Arc<Capabilities> {
        self.slots.snapshot()
    }

    /// Provides the filesystem.
    pub fn provide_fs(&self, fs: Arc<dyn FileSystem>) -> Registration {
        Registration::keep_in(self.footprint, self.slots.provide_fs(fs))
    }

    /// Provides the shell.
    pub fn provide_shell(&self, shell: Arc<dyn Shell>) -> Registration {
        Registration::keep_in(self.footprint, self.slots.provide_shell(shell))
    }

    /// Provides the approval service.
    pub fn provide_approval(&self, approval: Arc<dyn ApprovalService>) -> Registration {
        Registration::keep_in(self.footprint, self.slots.provide_approval(approval))
    }

    /// Provides the nested tool dispatcher.
    pub fn provide_dispatcher(&self, dispatcher: Arc<dyn ToolDispatcher>) -> Registration {
        Registration::keep_in(self.footprint, self.slots.provide_dispatcher(dispatcher))
    }
}
