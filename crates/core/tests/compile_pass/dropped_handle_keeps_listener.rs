// Inside `install`, a registration made through the plugin context belongs to
// the plugin: binding the handle to `_gate`, or discarding it, compiles
// without a warning and leaves the listener installed until unload. A host's
// own registration is the same: `let _ =` keeps it until it is disposed.
#![deny(warnings)]

use std::sync::Arc;

use serde_json::json;
use tack_core::host::{CapabilitySlots, NewExecutionToken, NewToolExecution, PluginHost};
use tack_core::plugin::ToolRegistrar;
use tack_core::hook::{Disposer, Scope};
use tack_core::hooks::ToolHooks;
use tack_core::plugin::{Plugin, PluginContext, PluginError};
use tack_core::policy::PreDecision;
use tack_core::host::GuardOutcome;
use tack_core::tool::{CallId, ExecutionToken, Tier, ToolDefinition, ToolExecution, ToolName};

struct NoTools;
impl ToolRegistrar for NoTools {
    fn register_tool(&self, _: Scope, d: ToolDefinition) -> Result<Disposer, PluginError> {
        Err(PluginError::ReservedTool { plugin: None, name: d.name().to_string(), reason: "no registry".into() })
    }
}

struct Careless;
impl Plugin for Careless {
    fn name(&self) -> &str {
        "careless"
    }
    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        let _gate = cx.hooks().pre_execute().tap("gate", |_, _| async {
            PreDecision::deny("closed")
        });
        cx.hooks().guard("wall", |_| Err("walled".into()));
        drop(cx.hooks().result().tap("log", |_| {}));
        Ok(())
    }
}

fn main() {
    let (hooks, caps) = (ToolHooks::new(), CapabilitySlots::new());
    let mut host = PluginHost::new(&hooks, &caps, &NoTools);
    host.install(&Careless).unwrap();
    assert_eq!(hooks.pre_execute().listener_count(), 1);
    assert_eq!(hooks.result().listener_count(), 1);
    assert_eq!(hooks.guards().names(None).len(), 1);

    let exec = Arc::new(ToolExecution::new(
        CallId::from("c1"),
        ToolName::new("bash").unwrap(),
        Arc::new(json!({})),
        Tier::Executes,
        ExecutionToken::issue(CallId::from("c1")),
    ));
    futures::executor::block_on(async {
        let decision = hooks.pre_execute().dispatch(None, exec.clone()).await.unwrap();
        assert!(decision.is_deny(), "the gate still runs");
        let guarded = hooks.guards().run(None, &exec).await.unwrap();
        assert!(matches!(guarded, GuardOutcome::Denied { .. }));
    });

    let _ = hooks.execute().tap("host-wrapper", |req, next| next.run(req));
    assert_eq!(hooks.execute().listener_count(), 1, "a host's `let _ =` keeps it");

    host.into_disposables().dispose(); // unload
    assert_eq!(hooks.pre_execute().listener_count(), 0);
    assert_eq!(hooks.result().listener_count(), 0);
    assert!(hooks.guards().names(None).is_empty());
}
