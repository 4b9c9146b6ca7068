//! The sandbox as a plugin.

use std::path::PathBuf;

use tack_core::hook::{Disposer, Scope};
use tack_core::hooks::ToolHooks;
use tack_core::host::{CapabilitySlots, PluginHost, plugin_factories};
use tack_core::plugin::Plugin;
use tack_core::plugin::PluginError;
use tack_core::plugin::ToolRegistrar;
use tack_core::serde_json::json;
use tack_core::tool::ToolDefinition;
use tack_sandbox::PLUGIN_NAME;
use tack_test::{Call, FakeTool, Harness};

use crate::fixture::{Fixture, SECRET};

struct NoTools;

impl ToolRegistrar for NoTools {
    fn register_tool(&self, _: Scope, d: ToolDefinition) -> Result<Disposer, PluginError> {
        Err(PluginError::ReservedTool {
            plugin: None,
            name: d.name().to_string(),
            reason: "the sandbox registers no tools".into(),
        })
    }
}

#[test]
fn installing_provides_fs_and_shell_and_unloading_removes_them() {
    let fx = Fixture::new();
    let mut h = Harness::new(fx.workspace_write()).unwrap();
    assert_eq!(h.plugin().name(), PLUGIN_NAME);
    let caps = h.capabilities().snapshot();
    assert_eq!(caps.fs.as_ref().unwrap().workspace_root(), fx.ws());
    assert!(caps.shell.is_some());
    h.uninstall();
    let caps = h.capabilities().snapshot();
    assert!(caps.fs.is_none() && caps.shell.is_none());
}

/// A tool that reads the file named by its `path` argument through the
/// run context's filesystem.
fn reader() -> FakeTool {
    FakeTool::new("read").body(|args, cx| async move {
        let path = PathBuf::from(args["path"].as_str().unwrap_or_default());
        let file = cx.fs()?.read(&path, None).await?;
        Ok(json!(String::from_utf8_lossy(&file.bytes)))
    })
}

// Through the pipeline: a tool body's reads go through the sandbox, which
// serves the workspace and refuses what lies outside it.
#[tokio::test]
async fn a_tool_body_reads_through_the_sandbox() {
    let fx = Fixture::new();
    std::fs::write(fx.ws().join("inside.txt"), "in").unwrap();
    let before = fx.outside_snapshot();
    let h = Harness::builder()
        .tool(reader())
        .install(fx.workspace_write())
        .unwrap();

    let inside = fx.ws().join("inside.txt");
    let r = h.call(Call::new("read", json!({"path": inside}))).await;
    assert_eq!(r.value(), Some(&json!("in")), "{r:?}");

    let secret = fx.outside().join("secret.txt");
    let r = h.call(Call::new("read", json!({"path": secret}))).await;
    assert!(!r.is_success(), "{r:?}");
    assert!(r.body_ran(), "the body ran; the sandbox refused its read");
    assert!(!r.text().contains(SECRET), "{}", r.text());
    assert_eq!(fx.outside_snapshot(), before, "nothing outside changed");
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
