//! Plugins: installable bundles of listeners, guards, tools and capabilities.

mod context;
pub(crate) mod factory;
mod plugin_fn;
mod registrar;

pub use crate::error::PluginError;
pub use context::PluginContext;
pub use factory::PluginFactory;
pub use plugin_fn::PluginFn;
pub use registrar::ToolRegistrar;

/// A plugin: a named bundle that installs listeners, guards, tools and
/// capabilities into a host through a [`PluginContext`].
///
/// Everything it registers through its [`PluginContext`] becomes its
/// footprint and stays installed until the host unloads the plugin, whatever
/// the plugin does with the returned handles. A plugin depends on `tack-core`
/// only.
///
/// ```
/// use tack_core::plugin::{Plugin, PluginContext, PluginError};
/// use tack_core::policy::PreDecision;
///
/// struct DenyRmRf;
/// impl Plugin for DenyRmRf {
///     fn name(&self) -> &str { "deny-rm-rf" }
///     fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
///         // The gate belongs to the plugin's footprint: no need to keep the handle.
///         cx.hooks().pre_execute().tap("deny-rm-rf", |exec, next| async move {
///             if exec.name() == "bash" && exec.arg_str("command").is_some_and(|c| c.contains("rm -rf")) {
///                 return PreDecision::deny("`rm -rf` is not allowed in this workspace");
///             }
///             next.run(exec).await // delegate: the chain's default is allow
///         });
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
