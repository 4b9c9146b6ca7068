//! What a plugin sees while it installs.

use std::fmt;
use std::sync::Arc;

use super::{PluginError, ToolRegistrar};
use crate::capability::set::CapabilitySlots;
use crate::capability::{FileSystem, Shell, ToolDispatcher};
use crate::hook::{Disposables, Disposer, Scope};
use crate::hooks::ToolHooks;
use crate::policy::ApprovalService;
use crate::tool::{Tool, ToolDefinition};

/// The host as a plugin sees it during [`Plugin::install`](super::Plugin::install):
/// the hook points, the tool registry and the capability slots.
///
/// The context owns what the plugin registers. Everything registered through
/// it — listeners and guards on [`hooks`](Self::hooks), tools through the
/// `register_*` methods, capabilities through the `provide_*` methods — goes
/// into the plugin's footprint at once and stays installed until the plugin
/// is unloaded, **whatever happens to the [`Disposer`] returned**: binding it
/// to `_` or dropping it keeps the registration; calling
/// [`dispose`](Disposer::dispose) on it removes that one registration early.
///
/// ```
/// use tack_core::plugin::{Plugin, PluginContext, PluginError};
/// use tack_core::policy::PreDecision;
///
/// struct DenyAll;
/// impl Plugin for DenyAll {
///     fn name(&self) -> &str { "deny-all" }
///     fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
///         // Dropping the handle is harmless: the plugin's footprint holds it.
///         let _ = cx.hooks().pre_execute().tap("deny-all", |_, _| async {
///             PreDecision::deny("nothing runs here")
///         });
///         Ok(())
///     }
/// }
/// ```
pub struct PluginContext<'a> {
    plugin: &'a str,
    /// The host's hook points, owned by `footprint`.
    hooks: ToolHooks,
    capabilities: &'a CapabilitySlots,
    tools: &'a dyn ToolRegistrar,
    footprint: Arc<Disposables>,
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
        let footprint = Arc::new(Disposables::new());
        Self {
            plugin,
            hooks: hooks.owned_by(&footprint),
            capabilities,
            tools,
            footprint,
        }
    }

    /// The plugin's footprint: what undoes everything it registered. Shared
    /// with the hook points the context handed out (a plugin may keep a
    /// clone of them, as code mode does to dispatch nested calls).
    pub(crate) fn into_footprint(self) -> Arc<Disposables> {
        self.footprint
    }

    /// The name of the plugin being installed.
    pub fn plugin_name(&self) -> &str {
        self.plugin
    }

    /// The host's tool hook points, owned by this plugin: every listener
    /// tapped or registered and every guard added through them belongs to the
    /// plugin until it is unloaded; the [`Disposer`] each returns can remove
    /// that one early. A clone keeps the ownership (registrations made
    /// through it later join the footprint too).
    pub fn hooks(&self) -> &ToolHooks {
        &self.hooks
    }

    /// Keeps a disposer obtained elsewhere in this plugin's footprint (undone
    /// when the plugin is unloaded). Registrations made through the context
    /// are kept already.
    pub fn keep(&mut self, disposer: Disposer) {
        self.footprint.add(disposer);
    }

    /// Registers a global tool.
    ///
    /// # Errors
    ///
    /// The registry's refusal ([`PluginError::DuplicateTool`],
    /// [`PluginError::ReservedTool`], [`PluginError::InvalidSchema`]), naming
    /// this plugin.
    pub fn register_tool(&mut self, definition: ToolDefinition) -> Result<(), PluginError> {
        self.register_tool_in(Scope::Global, definition)
    }

    /// Registers a tool in `scope`.
    ///
    /// # Errors
    ///
    /// As [`register_tool`](Self::register_tool).
    pub fn register_tool_in(
        &mut self,
        scope: Scope,
        definition: ToolDefinition,
    ) -> Result<(), PluginError> {
        let disposer = self
            .tools
            .register_tool(scope, definition)
            .map_err(|error| error.in_plugin(self.plugin))?;
        self.keep(disposer);
        Ok(())
    }

    /// Registers the code-mode transport (`run_code`).
    ///
    /// # Errors
    ///
    /// The registry's refusal ([`PluginError::ReservedTool`],
    /// [`PluginError::DuplicateTool`]), naming this plugin.
    pub fn register_code_transport(
        &mut self,
        definition: ToolDefinition,
    ) -> Result<(), PluginError> {
        let disposer = self
            .tools
            .register_code_transport(definition)
            .map_err(|error| error.in_plugin(self.plugin))?;
        self.keep(disposer);
        Ok(())
    }

    /// Erases a typed tool and registers it globally.
    ///
    /// # Errors
    ///
    /// The definition's error for an invalid tool
    /// ([`ToolDefinition::from_tool`]), or the registry's refusal as for
    /// [`register_tool`](Self::register_tool); either names this plugin.
    pub fn register_typed<T: Tool>(&mut self, tool: T) -> Result<(), PluginError> {
        let definition =
            ToolDefinition::from_tool(tool).map_err(|error| error.in_plugin(self.plugin))?;
        self.register_tool(definition)
    }

    /// Provides the filesystem capability for the plugin's lifetime (the
    /// returned handle can withdraw it early; dropping it does not).
    pub fn provide_fs(&mut self, fs: Arc<dyn FileSystem>) -> Disposer {
        self.footprint.hold(self.capabilities.provide_fs(fs))
    }

    /// Provides the shell capability for the plugin's lifetime.
    pub fn provide_shell(&mut self, shell: Arc<dyn Shell>) -> Disposer {
        self.footprint.hold(self.capabilities.provide_shell(shell))
    }

    /// Provides the approval service for the plugin's lifetime.
    pub fn provide_approval(&mut self, approval: Arc<dyn ApprovalService>) -> Disposer {
        self.footprint
            .hold(self.capabilities.provide_approval(approval))
    }

    /// Provides the nested tool dispatcher for the plugin's lifetime.
    pub fn provide_dispatcher(&mut self, dispatcher: Arc<dyn ToolDispatcher>) -> Disposer {
        self.footprint
            .hold(self.capabilities.provide_dispatcher(dispatcher))
    }
}
