//! Plugins: installable bundles of listeners, guards, tools and capabilities.

mod context;
mod error;
mod factory;
mod host;
mod registrar;

pub use context::PluginContext;
pub use error::PluginError;
pub use factory::{PluginFactory, find_plugin, plugin_factories, sorted_factories};
pub use host::PluginHost;
pub use registrar::{RegistrationError, ToolRegistrar};

/// A plugin: a named bundle that installs listeners, guards, tools and
/// capabilities into a host through a [`PluginContext`].
///
/// Everything it registers becomes its footprint; the host disposes the
/// footprint on unload. A plugin depends on `tack-core` only.
///
/// ```
/// use tack_core::hook::Scope;
/// use tack_core::plugin::{Plugin, PluginContext, PluginError};
/// use tack_core::policy::PreDecision;
///
/// struct DenyRmRf;
/// impl Plugin for DenyRmRf {
///     fn name(&self) -> &str { "deny-rm-rf" }
///     fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
///         let gate = cx.hooks().pre_execute().tap((Scope::Global, "deny-rm-rf"), |exec, next| async move {
///             if exec.name() == "bash" && exec.arg_str("command").is_some_and(|c| c.contains("rm -rf")) {
///                 return PreDecision::deny("`rm -rf` is not allowed in this workspace");
///             }
///             next.run(exec).await // delegate: the chain's default is allow
///         });
///         cx.keep(gate);
///         Ok(())
///     }
/// }
/// ```
pub trait Plugin: Send + Sync + 'static {
    /// A unique name (`A-Z a-z 0-9 _ - . /`, at most 64 characters).
    fn name(&self) -> &str;

    /// Registers the plugin's listeners, guards, tools and capabilities.
    ///
    /// # Errors
    ///
    /// Any [`PluginError`]; the host then removes whatever was registered.
    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError>;
}
