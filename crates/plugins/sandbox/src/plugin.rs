//! The sandbox as a tack plugin.

use tack_core::plugin::{Plugin, PluginContext, PluginError, PluginFactory};

use crate::policy::SandboxPolicy;
use crate::sandbox::Sandbox;

/// The plugin's name.
pub const PLUGIN_NAME: &str = "sandbox";

impl Plugin for Sandbox {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    /// Provides the confined `fs` and `shell` capabilities; unloading the
    /// plugin removes them (unless another plugin replaced them since).
    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        cx.provide_fs(self.fs());
        cx.provide_shell(self.shell());
        Ok(())
    }
}

/// The plugin hosts install by name: workspace-write over the process's
/// current directory, every other option at its default. The sandbox is
/// built at install time, so a missing directory fails the install.
struct CurrentDirSandbox;

impl Plugin for CurrentDirSandbox {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        let cwd = std::env::current_dir().map_err(|e| {
            PluginError::install(
                PLUGIN_NAME,
                format!("no current directory to confine to: {e}"),
            )
        })?;
        let sandbox = Sandbox::new(SandboxPolicy::workspace_write(cwd))
            .map_err(|e| PluginError::install(PLUGIN_NAME, e.to_string()))?;
        tracing::info!(status = %sandbox.status(), "sandbox installed");
        sandbox.install(cx)
    }
}

inventory::submit! {
    PluginFactory::new(
        PLUGIN_NAME,
        "Confined fs and shell capabilities: workspace-write over the current directory; commands in bubblewrap when installed, always under Landlock, seccomp and no capabilities.",
        || Box::new(CurrentDirSandbox),
    )
}
