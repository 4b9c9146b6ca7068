//! A plugin from a closure: [`PluginFn`].

use std::fmt;

use super::{Plugin, PluginContext, PluginError};

/// A named plugin whose [`install`](Plugin::install) is a closure: the
/// shortest way to write a plugin that holds no state of its own beyond what
/// the closure captures.
///
/// The name follows the same rules as [`Plugin::name`] (checked by the host
/// when the plugin is loaded). Everything the closure registers through the
/// [`PluginContext`] is the plugin's footprint, exactly as for a hand-written
/// `impl Plugin`. Write the `impl` by hand when the plugin needs a
/// description of its own, several constructors, or a type other code names.
///
/// ```
/// use tack_core::prelude::*;
///
/// let gate = PluginFn::new("no-rm", |cx| {
///     cx.hooks().pre_execute().tap("no-rm", |exec, next| async move {
///         if exec.arg_str("command").is_some_and(|c| c.contains("rm -rf")) {
///             return PreDecision::deny("`rm -rf` is not allowed");
///         }
///         next.run(exec).await
///     });
///     Ok(())
/// });
/// assert_eq!(gate.name(), "no-rm");
/// ```
pub struct PluginFn<F> {
    name: String,
    install: F,
}

impl<F> PluginFn<F>
where
    F: Fn(&mut PluginContext<'_>) -> Result<(), PluginError> + Send + Sync + 'static,
{
    /// A plugin named `name` whose install is `install`.
    pub fn new(name: impl Into<String>, install: F) -> Self {
        Self {
            name: name.into(),
            install,
        }
    }
}

impl<F> fmt::Debug for PluginFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PluginFn")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<F> Plugin for PluginFn<F>
where
    F: Fn(&mut PluginContext<'_>) -> Result<(), PluginError> + Send + Sync + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        (self.install)(cx)
    }
}

#[cfg(test)]
mod tests {
    use crate::hook::{Disposer, Scope};
    use crate::hooks::ToolHooks;
    use crate::host::{CapabilitySlots, PluginHost};
    use crate::plugin::ToolRegistrar;
    use crate::plugin::{Plugin, PluginError, PluginFn};
    use crate::policy::PreDecision;
    use crate::tool::ToolDefinition;

    struct NoTools;
    impl ToolRegistrar for NoTools {
        fn register_tool(&self, _: Scope, d: ToolDefinition) -> Result<Disposer, PluginError> {
            Err(PluginError::ReservedTool {
                plugin: None,
                name: d.name().to_string(),
                reason: "no registry".into(),
            })
        }
    }

    #[test]
    fn the_closure_installs_into_the_plugins_footprint() {
        let plugin = PluginFn::new("deny-all", |cx| {
            cx.hooks()
                .pre_execute()
                .tap("deny-all", |_, _| async { PreDecision::deny("no") });
            Ok(())
        });
        assert_eq!(plugin.name(), "deny-all");
        let (hooks, caps) = (ToolHooks::new(), CapabilitySlots::new());
        let mut host = PluginHost::new(&hooks, &caps, &NoTools);
        host.install(&plugin).expect("installs");
        assert_eq!(host.installed_names(), ["deny-all"]);
        assert_eq!(hooks.pre_execute().listener_count(), 1);
        assert!(host.uninstall("deny-all"));
        assert_eq!(hooks.pre_execute().listener_count(), 0);
    }

    #[test]
    fn an_install_error_reaches_the_host_and_nothing_stays_installed() {
        let plugin = PluginFn::new("broken", |cx| {
            cx.hooks()
                .pre_execute()
                .tap("half", |_, _| async { PreDecision::allow() });
            Err(PluginError::install("broken", "the config file is missing"))
        });
        let (hooks, caps) = (ToolHooks::new(), CapabilitySlots::new());
        let mut host = PluginHost::new(&hooks, &caps, &NoTools);
        let error = host.install(&plugin).expect_err("the closure failed");
        assert!(
            error.to_string().contains("the config file is missing"),
            "{error}"
        );
        assert!(host.installed_names().is_empty());
        assert_eq!(hooks.pre_execute().listener_count(), 0);
    }

    #[test]
    fn a_bad_name_is_refused_by_the_host() {
        let plugin = PluginFn::new("not a name!", |_| Ok(()));
        let (hooks, caps) = (ToolHooks::new(), CapabilitySlots::new());
        let mut host = PluginHost::new(&hooks, &caps, &NoTools);
        assert!(host.install(&plugin).is_err());
    }
}
