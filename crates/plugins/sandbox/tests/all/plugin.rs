//! The sandbox as a plugin.

use tack_core::hook::{Disposer, Scope};
use tack_core::hooks::ToolHooks;
use tack_core::host::{CapabilitySlots, PluginHost, ToolRegistrar, plugin_factories};
use tack_core::plugin::RegistrationError;
use tack_core::tool::ToolDefinition;
use tack_sandbox::PLUGIN_NAME;

use crate::fixture::Fixture;

struct NoTools;

impl ToolRegistrar for NoTools {
    fn register_tool(&self, _: Scope, d: ToolDefinition) -> Result<Disposer, RegistrationError> {
        Err(RegistrationError::Reserved {
            name: d.name().to_string(),
            reason: "the sandbox registers no tools".into(),
        })
    }
}

#[test]
fn installing_provides_fs_and_shell_and_unloading_removes_them() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    let (hooks, slots) = (ToolHooks::new(), CapabilitySlots::new());
    let mut host = PluginHost::new(&hooks, &slots, &NoTools);
    host.install(&sandbox).unwrap();
    assert_eq!(host.installed_names(), [PLUGIN_NAME]);
    let caps = slots.snapshot();
    assert_eq!(caps.fs.as_ref().unwrap().workspace_root(), fx.ws());
    assert!(caps.shell.is_some());
    drop(host.into_disposables());
    assert!(slots.snapshot().fs.is_none() && slots.snapshot().shell.is_none());
}

#[test]
fn capabilities_hold_fs_and_shell() {
    let fx = Fixture::new();
    let caps = fx.workspace_write().capabilities();
    assert!(caps.fs.is_some() && caps.shell.is_some());
}

#[test]
fn the_inventory_plugin_confines_the_current_directory() {
    let factory = plugin_factories()
        .unwrap()
        .into_iter()
        .find(|f| f.name() == PLUGIN_NAME)
        .expect("the sandbox plugin is submitted");
    let (hooks, slots) = (ToolHooks::new(), CapabilitySlots::new());
    let mut host = PluginHost::new(&hooks, &slots, &NoTools);
    host.install(&*factory.create()).unwrap();
    let root = slots
        .snapshot()
        .fs
        .as_ref()
        .unwrap()
        .workspace_root()
        .to_path_buf();
    assert_eq!(
        root,
        std::env::current_dir().unwrap().canonicalize().unwrap()
    );
}
