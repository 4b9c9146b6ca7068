//! Atomic replacement of registered tools.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::json;
use tack_core::CancellationToken;
use tack_core::capability::ToolDispatcher;
use tack_core::hook::{AgentId, Scope};
use tack_core::plugin::PluginError;
use tack_core::plugin::ToolRegistrar;
use tack_core::tool::{ErrorCode, OutputSpec, ToolCall, ToolDefinition};
use tack_pipeline::{Pipeline, ToolRegistry};

fn tool(name: &str, description: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description(description)
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({})))
        .handler(|_args, _cx| async move { Ok(json!("ok")) })
        .build()
        .unwrap()
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn a_changed_tool_is_swapped_and_only_the_new_disposer_removes_it() {
    let registry = ToolRegistry::new();
    let old = registry.register(tool("a", "Old a.")).unwrap();
    let gone = registry.register(tool("b", "Old b.")).unwrap();
    let new = registry
        .replace(
            Scope::Global,
            &names(&["a", "b"]),
            vec![tool("a", "New a."), tool("c", "C.")],
        )
        .unwrap();
    assert_eq!(new.len(), 2);
    assert_eq!(
        registry.get("a", None).unwrap().definition().description(),
        "New a."
    );
    assert!(registry.get("b", None).is_none());
    assert!(registry.get("c", None).is_some());
    old.dispose();
    gone.dispose();
    assert!(
        registry.get("a", None).is_some(),
        "the old disposer removed the new tool"
    );
    new[0].dispose();
    assert!(registry.get("a", None).is_none());
    assert!(registry.get("c", None).is_some());
}

#[test]
fn a_refused_replacement_changes_nothing() {
    let registry = ToolRegistry::new();
    let _a = registry.register(tool("a", "Old a.")).unwrap();
    let _other = registry.register(tool("other", "Someone else's.")).unwrap();
    let bad = ToolDefinition::builder("bad")
        .description("Bad schema.")
        .input_schema(json!({"type": "object", "properties": {"n": {"type": "integr"}}}))
        .output(OutputSpec::new(json!({})))
        .handler(|_args, _cx| async move { Ok(json!(null)) })
        .build()
        .unwrap();
    let err = registry
        .replace(
            Scope::Global,
            &names(&["a"]),
            vec![tool("a", "New a."), bad],
        )
        .unwrap_err();
    assert!(
        matches!(err, PluginError::InvalidSchema { ref name, .. } if name == "bad"),
        "{err}"
    );
    // A name held by another registration and not removed is a duplicate.
    let err = registry
        .replace(
            Scope::Global,
            &names(&["a"]),
            vec![tool("a", "New a."), tool("other", "Taken.")],
        )
        .unwrap_err();
    assert!(
        matches!(err, PluginError::DuplicateTool { ref name, .. } if name == "other"),
        "{err}"
    );
    let err = registry
        .replace(Scope::Global, &[], vec![tool("x", "1"), tool("x", "2")])
        .unwrap_err();
    assert!(matches!(err, PluginError::DuplicateTool { .. }), "{err}");
    let err = registry
        .replace(Scope::Global, &[], vec![tool("run_code", "no")])
        .unwrap_err();
    assert!(matches!(err, PluginError::ReservedTool { .. }), "{err}");
    assert_eq!(
        registry.get("a", None).unwrap().definition().description(),
        "Old a."
    );
    assert_eq!(
        registry
            .get("other", None)
            .unwrap()
            .definition()
            .description(),
        "Someone else's."
    );
    assert!(registry.get("x", None).is_none());
}

#[test]
fn replacing_in_an_agent_scope_leaves_the_global_layer_alone() {
    let registry = ToolRegistry::new();
    let agent = AgentId::new("a1");
    let _global = registry.register(tool("t", "Global.")).unwrap();
    let registrar: &dyn ToolRegistrar = &registry;
    let own = registrar
        .replace_tools(Scope::Agent(agent.clone()), &[], vec![tool("t", "Own.")])
        .unwrap();
    assert_eq!(
        registry
            .get("t", Some(&agent))
            .unwrap()
            .definition()
            .description(),
        "Own."
    );
    let _again = registrar
        .replace_tools(
            Scope::Agent(agent.clone()),
            &names(&["t"]),
            vec![tool("t", "Own 2.")],
        )
        .unwrap();
    // The first replace's disposers are stale: disposing them leaves the
    // second replace's tool.
    own.iter().for_each(|d| d.dispose());
    assert_eq!(
        registry
            .get("t", Some(&agent))
            .unwrap()
            .definition()
            .description(),
        "Own 2."
    );
    assert_eq!(
        registry.get("t", None).unwrap().definition().description(),
        "Global."
    );
}

/// The point of replacing in one step: readers racing a stream of
/// replacements always find the tool, through the registry and through the
/// pipeline. (Disposing and registering again leaves a window in which a
/// reader finds nothing, and this test catches it.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_never_miss_a_tool_being_replaced() {
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let mut kept = vec![registry.register(tool("t", "v0")).unwrap()];
    let done = Arc::new(AtomicBool::new(false));
    let misses = Arc::new(AtomicUsize::new(0));
    let reader = {
        let (registry, done, misses) = (registry.clone(), done.clone(), misses.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if registry.get("t", None).is_none() {
                    misses.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    let caller = {
        let (pipeline, done) = (pipeline.clone(), done.clone());
        tokio::spawn(async move {
            let mut unknown = 0;
            let mut calls = 0;
            while !done.load(Ordering::Relaxed) {
                let out = pipeline
                    .dispatch(ToolCall::new("c", "t", "{}"), CancellationToken::new())
                    .await;
                calls += 1;
                if out.error_code() == Some(ErrorCode::UnknownTool) {
                    unknown += 1;
                }
                tokio::task::yield_now().await;
            }
            (calls, unknown)
        })
    };
    for i in 1..=3000 {
        let next = registry
            .replace(
                Scope::Global,
                &names(&["t"]),
                vec![tool("t", &format!("v{i}"))],
            )
            .unwrap();
        kept = next;
        if i % 100 == 0 {
            tokio::task::yield_now().await;
        }
    }
    done.store(true, Ordering::Relaxed);
    reader.join().unwrap();
    let (calls, unknown) = caller.await.unwrap();
    assert!(calls > 0);
    assert_eq!(
        misses.load(Ordering::Relaxed),
        0,
        "a reader found no tool mid-replacement"
    );
    assert_eq!(unknown, 0, "{unknown} of {calls} calls got UNKNOWN_TOOL");
    assert_eq!(kept.len(), 1);
    assert_eq!(
        registry.get("t", None).unwrap().definition().description(),
        "v3000"
    );
}
