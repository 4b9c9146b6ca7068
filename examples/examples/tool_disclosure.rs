//! Progressive tool disclosure with `restrict`: an agent starts with one
//! tool, `reveal_tools`, and each call of it shows the agent a further group
//! of tools.
//!
//! `cargo run -p tack-examples --example tool_disclosure`
//!
//! `ToolRegistry::restrict` puts a mask on one agent: a tool the mask hides is
//! absent from that agent's schemas, and a call of it ends `UNKNOWN_TOOL`
//! exactly like a tool that does not exist. Each hidden group has its own
//! deny mask (masks on one agent intersect), and revealing a group disposes
//! its mask's `Disposer`, which lifts it. Other agents are not masked.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tack_core::hook::{AgentId, Disposer};
use tack_core::prelude::*;
use tack_pipeline::{Pipeline, Restriction, ToolRegistry};

const GROUPS: [(&str, &[&str]); 2] = [
    ("read", &["list_files", "read_file"]),
    ("edit", &["write_file", "delete_file"]),
];

/// A tool taking any object, with a synchronous body.
fn tool<F>(name: &str, body: F) -> Result<ToolDefinition, Box<dyn std::error::Error>>
where
    F: Fn(&Value, &ToolRunContext) -> Result<Value, ToolError> + Send + Sync + 'static,
{
    let definition = ToolDefinition::builder(name).description(format!("The {name} tool."));
    let definition = definition.input_schema(json!({"type": "object"}));
    let definition = definition.output(OutputSpec::new(json!({})));
    Ok(definition
        .handler(move |args, cx| std::future::ready(body(&args, &cx)))
        .build()?)
}

fn names(registry: &ToolRegistry, agent: &str) -> Vec<String> {
    let schemas = registry.schemas(Some(&AgentId::from(agent)));
    schemas.into_iter().map(|s| s.name).collect()
}

/// The masks still on, by agent and group.
type Masks = Mutex<HashMap<(Option<AgentId>, String), Disposer>>;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = ToolRegistry::new();
    let masks: Arc<Masks> = Arc::default();
    let mut tools = Vec::new(); // the registrations: `dispose()` unregisters one
    for &name in GROUPS.iter().flat_map(|(_, names)| names.iter()) {
        tools.push(registry.register(tool(name, move |_, _| Ok(json!(format!("{name} ran"))))?)?);
    }
    let shared = masks.clone();
    tools.push(registry.register(tool("reveal_tools", move |args, cx| {
        let group = args["group"].as_str().unwrap_or_default().to_owned();
        let key = (cx.agent().cloned(), group);
        let lifted = shared
            .lock()
            .map_err(|_| ToolError::new("poisoned"))?
            .remove(&key);
        match lifted {
            Some(mask) => {
                mask.dispose();
                Ok(json!(format!("{} tools revealed", key.1)))
            }
            None => Err(ToolError::new("nothing hidden in that group")),
        }
    })?)?);
    let helper = AgentId::from("helper");
    let mut hidden = HashMap::new();
    for (group, names) in GROUPS {
        let mask = registry.restrict(&helper, Restriction::deny(names.iter().copied()))?;
        hidden.insert((Some(helper.clone()), group.to_owned()), mask);
    }
    *masks.lock().map_err(|_| "poisoned")? = hidden;

    let pipeline = Pipeline::new(registry.clone());
    let steps = [
        ("write_file", json!({})),
        ("reveal_tools", json!({"group": "read"})),
        ("reveal_tools", json!({"group": "edit"})),
        ("write_file", json!({})),
        ("reveal_tools", json!({"group": "edit"})),
    ];
    println!("helper sees {:?}", names(&registry, "helper"));
    for (n, (name, args)) in steps.into_iter().enumerate() {
        let call = ToolCall::new(format!("c{n}"), name, args.to_string()).with_agent("helper");
        let outcome = pipeline.execute(call, CancellationToken::new()).await;
        println!("{name} {args} -> {}", outcome.content.joined_text());
        println!("helper sees {:?}", names(&registry, "helper"));
    }
    println!("reviewer sees {:?}", names(&registry, "reviewer"));
    Ok(())
}
