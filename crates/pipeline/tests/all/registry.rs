//! Registration and disposal (REG-*).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tack_core::hook::{AgentId, Scope};
use tack_core::host::schema_depth;
use tack_core::plugin::PluginError;
use tack_core::tool::{Content, ErrorCode, OutputSpec, ToolDefinition};
use tack_pipeline::{RUN_CODE, RestrictError, Restriction, ToolRegistry};

use crate::harness::*;

// REG-001
#[test]
fn schemas_expose_exactly_name_description_and_parameters() {
    let registry = ToolRegistry::new();
    let def = ToolDefinition::builder("echo")
        .description("Repeat the text.")
        .input_schema(echo_schema())
        .output(OutputSpec::new(json!({"type": "string"})))
        .handler(|args, _cx| async move { Ok(args["text"].clone()) })
        .timeout(Duration::from_secs(5))
        .concurrency_safe(|_| true)
        .present_call(|_| "echo".to_owned())
        .finalize_content(|_| None::<Content>)
        .build()
        .unwrap();
    let _kept = registry.register(def).unwrap();
    let schemas = registry.schemas(None);
    assert_eq!(schemas.len(), 1);
    let wire = serde_json::to_value(&schemas[0]).unwrap();
    let mut keys: Vec<&String> = wire.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["description", "name", "parameters"]);
    assert_eq!(wire["parameters"], echo_schema());
}

// REG-002 (tack has no prompt assembly in the pipeline; the tool list the
// host feeds it is `schemas()`)
#[test]
fn registered_tool_appears_in_the_tool_list() {
    let registry = ToolRegistry::new();
    let _kept = registry.register(echo("echo")).unwrap();
    assert_eq!(tool_names(&registry, None), ["echo"]);
}

// REG-004 (tack compiles full JSON Schema; a schema that does not compile is refused)
#[test]
fn output_schema_that_does_not_compile_is_refused_at_registration() {
    let registry = ToolRegistry::new();
    let def = raw_tool(
        "bad_out",
        json!({"type": "object"}),
        json!({"type": "string", "pattern": "(unclosed"}),
        |_a, _c| async move { Ok(json!("x")) },
    );
    let err = registry.register(def).unwrap_err();
    assert!(matches!(err, PluginError::InvalidSchema { .. }), "{err:?}");
    assert!(err.to_string().contains("output"), "{err}");
    assert!(registry.get("bad_out", None).is_none());
}

// ARG-012 / SCH-* (tack: an input schema that does not compile fails at registration)
#[test]
fn input_schema_that_does_not_compile_is_refused_at_registration() {
    let registry = ToolRegistry::new();
    let def = raw_tool(
        "bad_in",
        json!({"type": "object", "properties": {"n": {"type": "integr"}}}),
        json!({}),
        |_a, _c| async move { Ok(json!(1)) },
    );
    let err = registry.register(def).unwrap_err();
    assert!(matches!(err, PluginError::InvalidSchema { .. }), "{err:?}");
    assert!(err.to_string().contains("input"), "{err}");
}

// REG-005 (tack: `Duration` cannot be negative or infinite; zero is refused)
#[test]
fn zero_timeout_is_refused() {
    let err = ToolDefinition::builder("t")
        .description("d")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({})))
        .handler(|_a, _c| async move { Ok(json!(1)) })
        .timeout(Duration::ZERO)
        .build()
        .unwrap_err();
    assert!(matches!(err, PluginError::ZeroTimeout { .. }), "{err:?}");
}

// REG-007
#[test]
fn run_code_cannot_be_registered_globally_or_in_a_scope() {
    let registry = ToolRegistry::new();
    let global = registry.register(echo(RUN_CODE)).unwrap_err();
    assert!(
        matches!(global, PluginError::ReservedTool { .. }),
        "{global:?}"
    );
    let scoped = registry
        .register_in(Scope::Agent(AgentId::new("a")), echo(RUN_CODE))
        .unwrap_err();
    assert!(
        matches!(scoped, PluginError::ReservedTool { .. }),
        "{scoped:?}"
    );
    assert!(registry.get(RUN_CODE, None).is_none());
}

// REG-007
#[test]
fn run_code_cannot_be_restricted() {
    let registry = ToolRegistry::new();
    let _echo = registry.register(echo("echo")).unwrap();
    let err = registry
        .restrict(AgentId::new("a"), Restriction::deny([RUN_CODE]))
        .unwrap_err();
    assert_eq!(err, RestrictError::Reserved);
    let err = registry
        .restrict(AgentId::new("a"), Restriction::allow(["echo", RUN_CODE]))
        .unwrap_err();
    assert_eq!(err, RestrictError::Reserved);
}

#[test]
fn duplicate_names_in_one_layer_are_refused() {
    let registry = ToolRegistry::new();
    let _first = registry.register(echo("echo")).unwrap();
    let err = registry.register(echo("echo")).unwrap_err();
    assert!(matches!(err, PluginError::DuplicateTool { .. }), "{err:?}");
    // The same name in an agent layer is a shadow, not a duplicate.
    let _shadow = registry
        .register_in(Scope::Agent(AgentId::new("a")), echo("echo"))
        .unwrap();
}

#[test]
fn disposing_a_registration_removes_only_that_registration() {
    let registry = ToolRegistry::new();
    let first = registry.register(echo("echo")).unwrap();
    first.dispose();
    assert!(registry.get("echo", None).is_none());
    let _second = registry.register(echo("echo")).unwrap();
    // A stale disposer (idempotent) does not remove the new registration.
    first.dispose();
    drop(first);
    assert!(registry.get("echo", None).is_some());
}

// REG-010
#[test]
fn mutating_a_schema_list_leaves_the_registry_unchanged() {
    let registry = ToolRegistry::new();
    let _kept = registry.register(echo("echo")).unwrap();
    let mut schemas = registry.schemas(None);
    schemas[0].name = "changed".to_owned();
    schemas[0].description.push_str(" and more");
    schemas.push(schemas[0].clone());
    let again = registry.schemas(None);
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].name, "echo");
    assert_eq!(again[0].description, "The `echo` test tool.");
}

// REG-013
#[tokio::test]
async fn raw_and_typed_tools_are_looked_up_listed_and_executed() {
    let h = Harness::with_tool(echo("echo"));
    h.add(add_one());
    assert!(h.registry.get("missing", None).is_none());
    let raw = h.registry.get("echo", None).unwrap();
    assert_eq!(raw.definition().input_schema().as_ref(), &echo_schema());
    let typed = h.registry.get("add_one", None).unwrap();
    assert_eq!(
        typed.definition().input_schema()["properties"]["x"]["type"],
        "integer"
    );
    assert_eq!(h.names(None), ["add_one", "echo"]);

    let ok = h.call("c1", "echo", r#"{"text": "hi"}"#).await;
    assert_eq!(ok.value().unwrap(), &json!("hi"));
    let ok = h.call("c2", "add_one", r#"{"x": 41}"#).await;
    assert_eq!(ok.value().unwrap(), &json!({"y": 42}));
    let bad = h.call("c3", "add_one", r#"{"x": "41"}"#).await;
    assert_eq!(bad.error_code(), Some(ErrorCode::InvalidArguments));
}

// REG-012: n/a — tack has no registry-change notification (tools/change).
// REG-009, REG-011: [DETAIL], dsh effect-system internals.

/// An object schema nesting `levels` object schemas under property `a`, and
/// arguments that fill it, both built by moving values in (no recursion).
fn nested(levels: usize) -> (Value, Value) {
    let mut schema = json!({"type": "string"});
    let mut args = json!("leaf");
    for _ in 0..levels {
        let mut properties = Map::new();
        properties.insert("a".to_owned(), schema);
        let mut object = Map::new();
        object.insert("type".to_owned(), json!("object"));
        object.insert("properties".to_owned(), Value::Object(properties));
        object.insert("required".to_owned(), json!(["a"]));
        schema = Value::Object(object);
        let mut wrapped = Map::new();
        wrapped.insert("a".to_owned(), args);
        args = Value::Object(wrapped);
    }
    (schema, args)
}

// Schema bombs: the deepest schema a definition may have compiles and
// validates on an ordinary test thread, in every layer and as the transport;
// one level more never reaches the registry.
#[tokio::test]
async fn the_deepest_allowed_schema_registers_everywhere_and_validates() {
    let levels = (ToolDefinition::MAX_SCHEMA_DEPTH - 1) / 2;
    let (schema, args) = nested(levels);
    assert!(schema_depth(&schema) <= ToolDefinition::MAX_SCHEMA_DEPTH);
    let deep = |name: &str| {
        raw_tool(name, schema.clone(), schema.clone(), |args, _| async move {
            Ok((*args).clone())
        })
    };
    let registry = ToolRegistry::new();
    let _global = registry.register(deep("deep")).unwrap();
    let _agent = registry
        .register_in(Scope::Agent(AgentId::new("coder")), deep("deep"))
        .unwrap();
    let _transport = registry.register_code_transport(deep("run_code")).unwrap();
    let h = Harness::with_tool(deep("deep"));
    let out = h.call("c", "deep", &args.to_string()).await;
    assert!(out.is_success(), "{out:?}");
    let (_, short) = nested(levels - 1);
    let out = h.call("d", "deep", &short.to_string()).await;
    assert_eq!(
        out.error_code(),
        Some(ErrorCode::InvalidArguments),
        "{out:?}"
    );

    let (too_deep, _) = nested(levels + 1);
    let err = ToolDefinition::builder("deeper")
        .description("One level too deep.")
        .input_schema(too_deep)
        .output(OutputSpec::new(json!({})))
        .handler(|_, _| async { Ok(json!(null)) })
        .build()
        .unwrap_err();
    assert!(matches!(err, PluginError::SchemaTooDeep { .. }), "{err}");
}

// A chain of `$ref`s compiles into a chain of validators: the longest one a
// definition may have compiles and validates on an ordinary test thread.
#[tokio::test]
async fn the_longest_allowed_ref_chain_registers_and_validates() {
    // root → properties → a → d0 → … → d{links}: links + 4 levels.
    let links = ToolDefinition::MAX_SCHEMA_DEPTH - 4;
    let mut defs = Map::new();
    for i in 0..links {
        defs.insert(
            format!("d{i}"),
            json!({"$ref": format!("#/$defs/d{}", i + 1)}),
        );
    }
    defs.insert(format!("d{links}"), json!({"type": "string"}));
    let mut schema = Map::new();
    schema.insert("type".to_owned(), json!("object"));
    schema.insert("$defs".to_owned(), Value::Object(defs));
    schema.insert(
        "properties".to_owned(),
        json!({"a": {"$ref": "#/$defs/d0"}}),
    );
    let schema = Value::Object(schema);
    assert_eq!(schema_depth(&schema), ToolDefinition::MAX_SCHEMA_DEPTH);
    let h = Harness::with_tool(raw_tool("chain", schema, json!({}), |_, _| async {
        Ok(json!(null))
    }));
    let out = h.call("c", "chain", r#"{"a": 1}"#).await;
    assert_eq!(
        out.error_code(),
        Some(ErrorCode::InvalidArguments),
        "{out:?}"
    );
    assert!(h.call("d", "chain", r#"{"a": "x"}"#).await.is_success());
}

/// Runs `f` on its own thread and fails (instead of hanging the suite) if it
/// has not returned within a minute: a deadlock guard, not a speed check.
fn finishes(what: &str, f: impl FnOnce() + Send + 'static) {
    let (done, finished) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        f();
        let _ = done.send(());
    });
    match finished.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(()) => {}
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("{what}: deadlocked"),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            // `f` panicked: report its panic.
            if let Err(panic) = thread.join() {
                std::panic::resume_unwind(panic);
            }
        }
    }
}

#[test]
fn a_tool_that_owns_disposers_of_its_own_registry_can_be_unregistered() {
    // A tool's handler owns the disposers of a mask and a companion tool of
    // the same registry. Unregistering the tool drops its handler (after the
    // registry's lock is released): dropping the disposers undoes nothing,
    // so the mask and the companion stay until someone disposes them, which
    // then finds the registry unlocked.
    finishes("unregistering a tool that owns disposers", || {
        let registry = ToolRegistry::new();
        let agent = AgentId::new("a");
        let _other = registry.register(echo("other")).unwrap();
        let mask = registry
            .restrict(&agent, Restriction::deny(["other"]))
            .unwrap();
        let companion = registry.register(echo("companion")).unwrap();
        let owned = Arc::new((mask, companion));
        let kept = owned.clone();
        let owner = raw_tool(
            "owner",
            echo_schema(),
            json!({"type": "string"}),
            move |args, _cx| {
                let _owned = owned.clone();
                async move { Ok(args["text"].clone()) }
            },
        );
        let owner = registry.register(owner).unwrap();
        owner.dispose();
        assert!(registry.get("owner", None).is_none());
        assert!(
            registry.get("companion", None).is_some(),
            "still registered"
        );
        assert!(
            registry.get("other", Some(&agent)).is_none(),
            "still masked"
        );
        kept.0.dispose();
        kept.1.dispose();
        assert!(registry.get("companion", None).is_none());
        assert!(registry.get("other", Some(&agent)).is_some());
    });
}
