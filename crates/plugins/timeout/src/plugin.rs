//! The plugin: installs the wrapper and keeps its disposer.

use tack_core::hook::Scope;
use tack_core::plugin::{Plugin, PluginContext, PluginError, PluginFactory};

use crate::Timeout;
use crate::wrapper::{LISTENER_NAME, TimeoutWrapper};

/// The plugin's name.
pub const PLUGIN_NAME: &str = "timeout";

impl Plugin for Timeout {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        // Named `LISTENER_NAME`, in the policy's scope, placed by its order.
        let execute = cx.hooks().execute();
        let wrapper = match &self.scope {
            Scope::Global => execute.clone(),
            Scope::Agent(agent) => execute.for_agent(agent),
        };
        wrapper.register_with(
            LISTENER_NAME,
            self.order.clone(),
            TimeoutWrapper::new(self.clone()),
        )?;
        Ok(())
    }
}

inventory::submit! {
    PluginFactory::new(
        PLUGIN_NAME,
        "Per-tool deadlines from declared timeouts, with a 2 s grace period.",
        || Box::new(Timeout::default()),
    )
}
