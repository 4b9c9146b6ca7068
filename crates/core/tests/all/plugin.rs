//! Plugins: install, footprint, rollback, duplicates, inventory.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::json;
use tack_core::hook::{Disposer, Scope};
use tack_core::hooks::ToolHooks;
use tack_core::host::{
    CapabilitySlots, NewExecutionToken, NewToolExecution, PluginHost, find_plugin,
    plugin_factories, sorted_factories,
};
use tack_core::plugin::{Plugin, PluginContext, PluginError, PluginFactory, ToolRegistrar};
use tack_core::policy::PreDecision;
use tack_core::tool::{OutputSpec, ToolDefinition};

/// A minimal registry for tests: one map of (scope, name).
#[derive(Default, Clone)]
struct MapRegistry(Arc<Mutex<BTreeMap<(String, String), ToolDefinition>>>);

impl ToolRegistrar for MapRegistry {
    fn register_tool(
        &self,
        scope: Scope,
        definition: ToolDefinition,
    ) -> Result<Disposer, PluginError> {
        let key = (scope.to_string(), definition.name().to_string());
        let mut map = self.0.lock();
        if map.contains_key(&key) {
            return Err(PluginError::DuplicateTool {
                plugin: None,
                name: key.1,
                scope: key.0,
            });
        }
        map.insert(key.clone(), definition);
        let map = self.0.clone();
        Ok(Disposer::new(move || {
            map.lock().remove(&key);
        }))
    }
}

fn tool(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("A test tool.")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({})))
        .handler(|_, _| async { Ok(json!(null)) })
        .build()
        .unwrap()
}

struct Kit {
    name: &'static str,
    tools: Vec<&'static str>,
    fail_after_registering: bool,
    panic_after_registering: bool,
}

impl Plugin for Kit {
    fn name(&self) -> &str {
        self.name
    }

    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        cx.hooks()
            .pre_execute()
            .tap(self.name, |exec, next| next.run(exec));
        for t in &self.tools {
            cx.register_tool(tool(t))?;
        }
        if self.fail_after_registering {
            return Err(PluginError::install(
                self.name,
                "configuration file missing",
            ));
        }
        if self.panic_after_registering {
            panic!("plugin bug");
        }
        Ok(())
    }
}

fn kit(name: &'static str, tools: Vec<&'static str>) -> Kit {
    Kit {
        name,
        tools,
        fail_after_registering: false,
        panic_after_registering: false,
    }
}

#[test]
fn install_registers_and_unload_removes_everything() {
    let (hooks, caps, registry) = (
        ToolHooks::new(),
        CapabilitySlots::new(),
        MapRegistry::default(),
    );
    let mut host = PluginHost::new(&hooks, &caps, &registry);
    host.install(&kit("one", vec!["t1", "t2"])).unwrap();
    host.install(&kit("two", vec!["t3"])).unwrap();
    assert_eq!(host.installed_names(), ["one", "two"]);
    assert_eq!(registry.0.lock().len(), 3);
    assert_eq!(hooks.pre_execute().listener_count(), 2);

    assert!(host.uninstall("one"));
    assert!(!host.uninstall("one"));
    assert_eq!(registry.0.lock().len(), 1);

    let footprint = host.into_disposables();
    assert_eq!(hooks.pre_execute().listener_count(), 1);
    footprint.dispose();
    assert_eq!(hooks.pre_execute().listener_count(), 0);
    assert!(registry.0.lock().is_empty());
}

#[test]
fn duplicate_plugin_names_are_refused() {
    let (hooks, caps, registry) = (
        ToolHooks::new(),
        CapabilitySlots::new(),
        MapRegistry::default(),
    );
    let mut host = PluginHost::new(&hooks, &caps, &registry);
    host.install(&kit("same", vec![])).unwrap();
    let err = host.install(&kit("same", vec![])).unwrap_err();
    assert_eq!(
        err,
        PluginError::Duplicate {
            name: "same".into()
        }
    );
    assert!(err.to_string().contains("must be unique"), "{err}");
}

#[test]
fn invalid_plugin_names_are_refused() {
    let (hooks, caps, registry) = (
        ToolHooks::new(),
        CapabilitySlots::new(),
        MapRegistry::default(),
    );
    let mut host = PluginHost::new(&hooks, &caps, &registry);
    for bad in ["", "has space", "ünïcode"] {
        let err = host.install(&kit(bad, vec![])).unwrap_err();
        assert!(
            matches!(err, PluginError::InvalidName { .. }),
            "{bad:?}: {err}"
        );
    }
}

#[test]
fn a_failing_install_leaves_nothing_behind() {
    let (hooks, caps, registry) = (
        ToolHooks::new(),
        CapabilitySlots::new(),
        MapRegistry::default(),
    );
    let mut host = PluginHost::new(&hooks, &caps, &registry);
    let failing = Kit {
        fail_after_registering: true,
        ..kit("failing", vec!["a", "b"])
    };
    let err = host.install(&failing).unwrap_err();
    assert!(
        err.to_string().contains("configuration file missing"),
        "{err}"
    );
    assert!(registry.0.lock().is_empty());
    assert_eq!(hooks.pre_execute().listener_count(), 0);

    let panicking = Kit {
        panic_after_registering: true,
        ..kit("panicking", vec!["a"])
    };
    let err = host.install(&panicking).unwrap_err();
    assert_eq!(
        err,
        PluginError::Panicked {
            plugin: "panicking".into(),
            message: "plugin bug".into()
        }
    );
    assert!(registry.0.lock().is_empty());
    assert!(host.installed_names().is_empty());
}

#[test]
fn a_duplicate_tool_fails_the_install_and_rolls_back() {
    let (hooks, caps, registry) = (
        ToolHooks::new(),
        CapabilitySlots::new(),
        MapRegistry::default(),
    );
    let mut host = PluginHost::new(&hooks, &caps, &registry);
    host.install(&kit("first", vec!["shared"])).unwrap();
    let err = host
        .install(&kit("second", vec!["own", "shared"]))
        .unwrap_err();
    assert!(
        matches!(&err, PluginError::DuplicateTool { plugin: Some(p), name, .. } if p == "second" && name == "shared"),
        "{err:?}"
    );
    assert!(err.to_string().contains("already registered"), "{err}");
    let names: Vec<String> = registry.0.lock().keys().map(|(_, n)| n.clone()).collect();
    assert_eq!(names, ["shared"], "`own` was rolled back");
}

struct Gate;
impl Plugin for Gate {
    fn name(&self) -> &str {
        "core-test/gate"
    }
    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        let _gate = cx
            .hooks()
            .pre_execute()
            .tap("gate", |_, _| async { PreDecision::deny("closed") });
        Ok(())
    }
}
struct Zeta;
impl Plugin for Zeta {
    fn name(&self) -> &str {
        "core-test/zeta"
    }
    fn install(&self, _cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        Ok(())
    }
}

inventory::submit! { PluginFactory::new("core-test/zeta", "Does nothing.", || Box::new(Zeta)) }
inventory::submit! { PluginFactory::new("core-test/gate", "Denies every call.", || Box::new(Gate)) }

#[test]
fn inventory_plugins_are_listed_sorted_and_installable_by_name() {
    let names: Vec<&str> = plugin_factories()
        .unwrap()
        .iter()
        .map(|f| f.name())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert!(names.contains(&"core-test/gate") && names.contains(&"core-test/zeta"));

    let (hooks, caps, registry) = (
        ToolHooks::new(),
        CapabilitySlots::new(),
        MapRegistry::default(),
    );
    let mut host = PluginHost::new(&hooks, &caps, &registry);
    host.install_named("core-test/gate").unwrap();
    assert_eq!(hooks.pre_execute().listener_count(), 1);

    let err = host.install_named("nope").unwrap_err();
    let PluginError::Unknown {
        known, provider, ..
    } = &err
    else {
        panic!("expected Unknown: {err}");
    };
    assert!(known.iter().any(|n| n == "core-test/gate"), "{known:?}");
    assert_eq!(*provider, None);
    assert!(
        err.to_string().contains("`core-test/gate`"),
        "lists the known names: {err}"
    );
    assert!(err.to_string().contains("use that_crate as _;"), "{err}");

    // tack's own plugin, not linked into this test binary: the error names
    // the crate and the line that links it.
    let err = host.install_named("builtin-tools").unwrap_err();
    assert!(
        matches!(
            &err,
            PluginError::Unknown {
                provider: Some("tack_tools"),
                ..
            }
        ),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("`tack-tools` crate") && text.contains("`use tack_tools as _;`"),
        "{text}"
    );
    assert_eq!(
        find_plugin("core-test/zeta").unwrap().description(),
        "Does nothing."
    );
}

#[test]
fn duplicate_factories_are_reported() {
    static A: PluginFactory = PluginFactory::new("dup", "a", || Box::new(Zeta));
    static B: PluginFactory = PluginFactory::new("dup", "b", || Box::new(Zeta));
    static C: PluginFactory = PluginFactory::new("c", "c", || Box::new(Zeta));
    let err = sorted_factories([&A, &C, &B]).unwrap_err();
    assert_eq!(err, PluginError::Duplicate { name: "dup".into() });
    let ok = sorted_factories([&C, &A]).unwrap();
    assert_eq!(
        ok.iter().map(|f| f.name()).collect::<Vec<_>>(),
        ["c", "dup"]
    );
}

/// Registers through the context and throws every handle away.
struct DropsHandles;
impl Plugin for DropsHandles {
    fn name(&self) -> &str {
        "drops-handles"
    }
    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        let _gate = cx
            .hooks()
            .pre_execute()
            .tap("gate", |_, _| async { PreDecision::deny("closed") });
        drop(cx.hooks().execute().tap("wrap", |req, next| next.run(req)));
        let _ = cx.hooks().post_execute().tap("post", |i, next| next.run(i));
        cx.hooks().code_dispatch().tap("seen", |_| {});
        Ok(())
    }
}

#[test]
fn a_dropped_handle_does_not_disable_a_plugins_listener() {
    let (hooks, caps, registry) = (
        ToolHooks::new(),
        CapabilitySlots::new(),
        MapRegistry::default(),
    );
    let mut host = PluginHost::new(&hooks, &caps, &registry);
    host.install(&DropsHandles).unwrap();
    assert_eq!(hooks.pre_execute().listener_count(), 1);
    assert_eq!(hooks.execute().listener_count(), 1);
    assert_eq!(hooks.post_execute().listener_count(), 1);
    assert_eq!(hooks.code_dispatch().listener_count(), 1);
    let exec = execution();
    let decision = futures::executor::block_on(hooks.pre_execute().dispatch(None, exec)).unwrap();
    assert!(decision.is_deny(), "the gate runs: {decision}");

    assert!(host.uninstall("drops-handles"));
    assert_eq!(hooks.pre_execute().listener_count(), 0);
    assert_eq!(hooks.execute().listener_count(), 0);
    assert_eq!(hooks.post_execute().listener_count(), 0);
    assert_eq!(hooks.code_dispatch().listener_count(), 0);
}

/// Removes its own listener early through the handle.
struct Early;
impl Plugin for Early {
    fn name(&self) -> &str {
        "early"
    }
    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        let kept = cx.hooks().pre_execute().tap("kept", |e, next| next.run(e));
        let gone = cx.hooks().pre_execute().tap("gone", |e, next| next.run(e));
        gone.dispose();
        assert!(gone.is_disposed() && !kept.is_disposed());
        Ok(())
    }
}

#[test]
fn a_registration_handle_can_remove_it_before_unload() {
    let (hooks, caps, registry) = (
        ToolHooks::new(),
        CapabilitySlots::new(),
        MapRegistry::default(),
    );
    let mut host = PluginHost::new(&hooks, &caps, &registry);
    host.install(&Early).unwrap();
    assert_eq!(
        hooks.pre_execute().listener_names(None),
        [Arc::<str>::from("kept")]
    );
    host.into_disposables().dispose();
    assert_eq!(hooks.pre_execute().listener_count(), 0);
}

#[test]
fn outside_a_plugin_dropping_the_disposer_keeps_the_listener_and_dispose_removes_it() {
    let hooks = ToolHooks::new();
    let disposer = hooks.pre_execute().tap("gate", |e, next| next.run(e));
    let second = hooks.pre_execute().tap("second", |e, next| next.run(e));
    assert_eq!(hooks.pre_execute().listener_count(), 2);
    drop(disposer);
    assert_eq!(hooks.pre_execute().listener_count(), 2);
    second.dispose();
    assert_eq!(hooks.pre_execute().listener_count(), 1);
}

// A wrapped error is part of the message, and not a `source()` as well: a
// report that walks sources prints it once.
#[test]
fn plugin_errors_print_their_cause_once() {
    use std::error::Error as _;
    let err = PluginError::ReservedTool {
        plugin: None,
        name: "run_code".into(),
        reason: "it is the code-mode transport".into(),
    }
    .in_plugin("p");
    assert_eq!(
        err.to_string(),
        "plugin `p`: the tool name `run_code` is reserved: it is the code-mode transport"
    );
    // An error that names its plugin keeps it.
    assert_eq!(err.clone().in_plugin("q"), err);
    assert!(err.source().is_none());
    let mut chain = vec![err.to_string()];
    let mut next = err.source();
    while let Some(cause) = next {
        chain.push(cause.to_string());
        next = cause.source();
    }
    assert_eq!(chain.join(": ").matches("is reserved").count(), 1);
}

/// Adds a guard and an approval service, drops both handles, and keeps a
/// clone of its hook points to register through after `install` returned.
struct KeepsHooks {
    later: Mutex<Option<ToolHooks>>,
}
impl Plugin for KeepsHooks {
    fn name(&self) -> &str {
        "keeps-hooks"
    }
    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        let _ = cx.hooks().guard("wall", |_| Err("walled".into()));
        let _ = cx.provide_approval(Arc::new(Approves));
        *self.later.lock() = Some(cx.hooks().clone());
        Ok(())
    }
}

struct Approves;
#[tack_core::async_trait]
impl tack_core::policy::ApprovalService for Approves {
    async fn request(
        &self,
        _: tack_core::policy::ApprovalRequest,
        _: tack_core::CancellationToken,
    ) -> tack_core::policy::ApprovalOutcome {
        tack_core::policy::ApprovalOutcome::AllowedOnce
    }
}

#[test]
fn guards_capabilities_and_a_kept_clone_of_the_hooks_belong_to_the_plugin() {
    let (hooks, caps, registry) = (
        ToolHooks::new(),
        CapabilitySlots::new(),
        MapRegistry::default(),
    );
    let plugin = KeepsHooks {
        later: Mutex::new(None),
    };
    let mut host = PluginHost::new(&hooks, &caps, &registry);
    host.install(&plugin).unwrap();
    assert!(
        caps.snapshot().approval.is_some(),
        "dropping the handle kept it"
    );
    // Registered through the clone after install: still the plugin's.
    let later = plugin.later.lock().take().unwrap();
    let _ = later.result().tap("late", |_| {});
    assert_eq!(hooks.result().listener_count(), 1);
    let exec = execution();
    let run = || futures::executor::block_on(hooks.guards().run(None, &exec)).unwrap();
    assert!(
        matches!(run(), tack_core::host::GuardOutcome::Denied { .. }),
        "the guard stayed although its handle was dropped"
    );

    assert!(host.uninstall("keeps-hooks"));
    assert!(caps.snapshot().approval.is_none());
    assert_eq!(hooks.result().listener_count(), 0);
    assert!(
        matches!(run(), tack_core::host::GuardOutcome::Passed),
        "the guard went with the plugin"
    );
}

/// Places a listener after one that does not exist, with `?`.
struct BadOrder;
impl Plugin for BadOrder {
    fn name(&self) -> &str {
        "bad-order"
    }
    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        let _ = cx.hooks().pre_execute().tap("first", |e, next| next.run(e));
        cx.hooks().pre_execute().tap_with(
            "second",
            tack_core::hook::Order::after("missing"),
            |e, next| next.run(e),
        )?;
        Ok(())
    }
}

#[test]
fn an_order_error_returned_with_question_mark_names_the_plugin_and_rolls_back() {
    let (hooks, caps, registry) = (
        ToolHooks::new(),
        CapabilitySlots::new(),
        MapRegistry::default(),
    );
    let mut host = PluginHost::new(&hooks, &caps, &registry);
    let err = host.install(&BadOrder).unwrap_err();
    assert!(
        matches!(&err, PluginError::Order { plugin: Some(p), .. } if p == "bad-order"),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("plugin `bad-order`: "), "{err}");
    assert!(err.to_string().contains("`missing`"), "{err}");
    assert_eq!(hooks.pre_execute().listener_count(), 0, "rolled back");
}

/// Registers a tool, then builds an invalid one with `?`.
struct BadDefinition;
impl Plugin for BadDefinition {
    fn name(&self) -> &str {
        "bad-definition"
    }
    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        cx.register_tool(tool("fine"))?;
        let broken = ToolDefinition::builder("broken")
            .input_schema(json!({"type": "object"}))
            .output(OutputSpec::new(json!({})))
            .handler(|_, _| async { Ok(json!(null)) })
            .build()?;
        cx.register_tool(broken)
    }
}

#[test]
fn a_definition_error_returned_with_question_mark_names_the_plugin_and_rolls_back() {
    let (hooks, caps, registry) = (
        ToolHooks::new(),
        CapabilitySlots::new(),
        MapRegistry::default(),
    );
    let mut host = PluginHost::new(&hooks, &caps, &registry);
    let err = host.install(&BadDefinition).unwrap_err();
    assert!(
        matches!(&err, PluginError::EmptyDescription { plugin: Some(p), tool } if p == "bad-definition" && tool == "broken"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "plugin `bad-definition`: tool `broken` has no description: tell the model what it does and when to use it"
    );
    assert!(registry.0.lock().is_empty(), "rolled back");
    // Outside a plugin, the same error names the tool alone.
    let alone = ToolDefinition::builder("broken").build().unwrap_err();
    assert_eq!(
        alone.to_string(),
        "tool `broken` has no description: tell the model what it does and when to use it"
    );
}

/// A valid execution of a tool `t`, for dispatching hook points directly.
fn execution() -> Arc<tack_core::tool::ToolExecution> {
    Arc::new(tack_core::tool::ToolExecution::new(
        tack_core::tool::CallId::from("c1"),
        tack_core::tool::ToolName::new("t").unwrap(),
        Arc::new(json!({})),
        tack_core::tool::Tier::ReadOnly,
        tack_core::tool::ExecutionToken::issue(tack_core::tool::CallId::from("c1")),
    ))
}
