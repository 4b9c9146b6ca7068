//! All tools together: definitions, registration, the plugin, the schemas.

use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tack_core::hook::{Disposer, Scope};
use tack_core::hooks::ToolHooks;
use tack_core::host::{CapabilitySlots, PluginHost};
use tack_core::plugin::PluginError;
use tack_core::plugin::ToolRegistrar;
use tack_core::tool::{Tier, ToolDefinition};
use tack_tools::{BuiltinTools, RegisterError, builtin_tools, register_builtin_tools};

/// A registry that records names and refuses the ones in `refuse`.
#[derive(Default)]
struct Recording {
    names: Arc<Mutex<Vec<String>>>,
    refuse: Vec<&'static str>,
}

impl ToolRegistrar for Recording {
    fn register_tool(&self, _: Scope, def: ToolDefinition) -> Result<Disposer, PluginError> {
        let name = def.name().to_string();
        if self.refuse.contains(&name.as_str()) {
            return Err(PluginError::ReservedTool {
                plugin: None,
                name,
                reason: "test".into(),
            });
        }
        self.names.lock().unwrap().push(name.clone());
        let names = self.names.clone();
        Ok(Disposer::new(move || {
            names.lock().unwrap().retain(|n| *n != name)
        }))
    }
}

#[test]
fn every_tool_has_its_tier_and_concurrency_class() {
    let tools = builtin_tools().unwrap();
    let valid_args = |name: &str| match name {
        "read_file" | "list_dir" => json!({"path": "."}),
        "glob" | "grep" => json!({"pattern": "x"}),
        "write_file" => json!({"path": "a", "content": ""}),
        "edit_file" => json!({"path": "a", "old_string": "a", "new_string": "b"}),
        _ => json!({"command": "ls"}),
    };
    let classes: Vec<(&str, Tier, bool)> = tools
        .iter()
        .map(|t| {
            (
                t.name().as_str(),
                t.tier(),
                t.is_concurrency_safe(&valid_args(t.name().as_str())),
            )
        })
        .collect();
    assert_eq!(
        classes,
        [
            ("read_file", Tier::ReadOnly, true),
            ("list_dir", Tier::ReadOnly, true),
            ("glob", Tier::ReadOnly, true),
            ("grep", Tier::ReadOnly, true),
            ("write_file", Tier::Writes, false),
            ("edit_file", Tier::Writes, false),
            ("bash", Tier::Executes, false),
        ]
    );
    // Invalid arguments are never classified as parallel.
    assert!(!tools[0].is_concurrency_safe(&json!({"nope": 1})));
}

/// Every argument the model sees is described, and unknown ones are refused.
#[test]
fn every_input_property_has_a_description() {
    for tool in builtin_tools().unwrap() {
        let schema = tool.input_schema();
        assert_eq!(schema["additionalProperties"], false, "{}", tool.name());
        let props = schema["properties"].as_object().unwrap();
        for (key, prop) in props {
            let described = prop
                .get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| d.len() > 10);
            assert!(described, "{}.{key} has no description", tool.name());
        }
    }
}

#[test]
fn registration_is_all_or_nothing_and_disposable() {
    let registry = Recording::default();
    let tools = register_builtin_tools(&registry, Scope::Global).unwrap();
    assert_eq!(registry.names.lock().unwrap().len(), 7);
    tools.dispose();
    assert!(registry.names.lock().unwrap().is_empty());

    let refusing = Recording {
        refuse: vec!["grep"],
        ..Recording::default()
    };
    let err = register_builtin_tools(&refusing, Scope::Global).unwrap_err();
    assert!(matches!(err, RegisterError::Registration(_)), "{err}");
    assert!(
        refusing.names.lock().unwrap().is_empty(),
        "the tools registered before grep were removed"
    );
}

#[test]
fn the_plugin_installs_every_tool_and_is_submitted_by_name() {
    let (hooks, caps, registry) = (
        ToolHooks::new(),
        CapabilitySlots::new(),
        Recording::default(),
    );
    let mut host = PluginHost::new(&hooks, &caps, &registry);
    host.install(&BuiltinTools).unwrap();
    assert_eq!(registry.names.lock().unwrap().len(), 7);
    host.into_disposables().dispose();
    assert!(registry.names.lock().unwrap().is_empty());

    let factory = tack_core::host::find_plugin("builtin-tools").unwrap();
    assert!(factory.description().contains("read_file"));
}
