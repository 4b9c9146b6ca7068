//! Installing plugins into a host.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use super::{CapabilitySlots, find_plugin};
use crate::hook::{Disposables, Disposer, panic_message};
use crate::hooks::ToolHooks;
use crate::plugin::ToolRegistrar;
use crate::plugin::factory::check_plugin_name;
use crate::plugin::{Plugin, PluginContext, PluginError};

/// Installs plugins into a host's hook points, tool registry and capability
/// slots, and keeps each plugin's footprint so it can be unloaded.
///
/// * Plugin names are unique: installing a second plugin with the same name
///   is [`PluginError::Duplicate`].
/// * Installation is all or nothing per plugin: if `install` fails or panics,
///   whatever it had registered is disposed before the error is returned.
///
/// ```
/// use tack_core::host::{CapabilitySlots, PluginHost};
/// use tack_core::hook::{Disposer, Scope};
/// use tack_core::hooks::ToolHooks;
/// use tack_core::plugin::{Plugin, PluginContext, PluginError, ToolRegistrar};
/// use tack_core::policy::PreDecision;
/// use tack_core::tool::ToolDefinition;
///
/// struct NoTools; // a host without a tool registry
/// impl ToolRegistrar for NoTools {
///     fn register_tool(&self, _: Scope, d: ToolDefinition) -> Result<Disposer, PluginError> {
///         Err(PluginError::ReservedTool { plugin: None, name: d.name().to_string(), reason: "no registry".into() })
///     }
/// }
///
/// struct DenyAll;
/// impl Plugin for DenyAll {
///     fn name(&self) -> &str { "deny-all" }
///     fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
///         cx.hooks().pre_execute().tap("deny-all", |_, _| async { PreDecision::deny("nothing runs here") });
///         Ok(())
///     }
/// }
///
/// let (hooks, caps) = (ToolHooks::new(), CapabilitySlots::new());
/// let mut host = PluginHost::new(&hooks, &caps, &NoTools);
/// host.install(&DenyAll).unwrap();
/// assert!(host.install(&DenyAll).is_err()); // duplicate name
/// assert_eq!(hooks.pre_execute().listener_count(), 1);
/// let footprint = host.into_disposables();
/// footprint.dispose(); // unload every plugin
/// assert_eq!(hooks.pre_execute().listener_count(), 0);
/// ```
pub struct PluginHost<'a> {
    hooks: &'a ToolHooks,
    capabilities: &'a CapabilitySlots,
    tools: &'a dyn ToolRegistrar,
    installed: Vec<(String, Arc<Disposables>)>,
}

impl fmt::Debug for PluginHost<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PluginHost")
            .field("installed", &self.installed_names())
            .finish_non_exhaustive()
    }
}

impl<'a> PluginHost<'a> {
    /// A host over these hook points, capability slots and tool registry.
    pub fn new(
        hooks: &'a ToolHooks,
        capabilities: &'a CapabilitySlots,
        tools: &'a dyn ToolRegistrar,
    ) -> Self {
        Self {
            hooks,
            capabilities,
            tools,
            installed: Vec::new(),
        }
    }

    /// Installs one plugin.
    ///
    /// # Errors
    ///
    /// [`PluginError::InvalidName`], [`PluginError::Duplicate`], whatever the
    /// plugin returned, or [`PluginError::Panicked`]; in every case the
    /// plugin's partial footprint has been removed.
    pub fn install(&mut self, plugin: &dyn Plugin) -> Result<(), PluginError> {
        let name = plugin.name().to_owned();
        check_plugin_name(&name)?;
        if self.installed.iter().any(|(n, _)| *n == name) {
            return Err(PluginError::Duplicate { name });
        }
        let mut cx = PluginContext::new(&name, self.hooks, self.capabilities, self.tools);
        let result = catch_unwind(AssertUnwindSafe(|| plugin.install(&mut cx)));
        let footprint = cx.into_footprint();
        match result {
            Ok(Ok(())) => {
                tracing::debug!(plugin = %name, registrations = footprint.len(), "plugin installed");
                self.installed.push((name, footprint));
                Ok(())
            }
            Ok(Err(err)) => {
                footprint.dispose();
                Err(err.in_plugin(&name))
            }
            Err(payload) => {
                footprint.dispose();
                Err(PluginError::Panicked {
                    plugin: name,
                    message: panic_message(&*payload),
                })
            }
        }
    }

    /// Installs the plugin submitted through `inventory` under `name`.
    ///
    /// # Errors
    ///
    /// [`PluginError::Unknown`], and those of [`install`](Self::install).
    pub fn install_named(&mut self, name: &str) -> Result<(), PluginError> {
        let plugin = find_plugin(name)?.create();
        self.install(&*plugin)
    }

    /// Unloads one installed plugin. Returns whether it was installed.
    pub fn uninstall(&mut self, name: &str) -> bool {
        match self.installed.iter().position(|(n, _)| n == name) {
            Some(at) => {
                let (_, footprint) = self.installed.remove(at);
                footprint.dispose();
                true
            }
            None => false,
        }
    }

    /// The names of the installed plugins, in installation order.
    pub fn installed_names(&self) -> Vec<&str> {
        self.installed.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// Every plugin's footprint in one bag; disposing it unloads the plugins,
    /// the last installed first (dropping it unloads nothing).
    pub fn into_disposables(self) -> Disposables {
        let all = Disposables::new();
        for (_, footprint) in self.installed {
            all.add(Disposer::new(move || footprint.dispose()));
        }
        all
    }
}
