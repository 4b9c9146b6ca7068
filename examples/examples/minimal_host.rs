//! The smallest complete host: a registry, a pipeline, plugins composed with
//! `PluginSet`, a model's turn of calls run by the `TurnScheduler`, the
//! outcomes fed back, and the plugins unloaded. No agent loop, no model
//! client: tack-core and tack-pipeline alone.
//!
//! Run: `cargo run -p tack-examples --example minimal_host`

use std::sync::Arc;

use tack_core::prelude::*;
use tack_core::tool::Outcome;
use tack_pipeline::{PluginSet, TurnScheduler};

/// A tool the host offers: adds two numbers.
fn add() -> Result<ToolDefinition, tack_core::plugin::PluginError> {
    ToolDefinition::builder("add")
        .description("Add two numbers.")
        .input_schema(json!({
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"]
        }))
        .output(OutputSpec::new(json!({"type": "number"})))
        .tier(Tier::ReadOnly)
        .handler(|args, _cx| async move {
            let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
            Ok(json!(sum))
        })
        .build()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Two plugins: the tool, and a `tools/result` observer that sees every
    // call's one outcome.
    let add = add()?;
    let tools = PluginFn::new("math", move |cx| cx.register_tool(add.clone()));
    let log = PluginFn::new("log", |cx| {
        cx.hooks().result().tap("log", |record| {
            let outcome = &record.outcome;
            let code = outcome.failure_info().map(|f| f.code().to_string());
            println!(
                "  [log] {} {}",
                outcome.call_id,
                code.as_deref().unwrap_or("ok")
            );
        });
        Ok(())
    });
    let plugins = PluginSet::new().with(tools).with(log).build()?;
    println!("installed: {:?}", plugins.installed);

    // What the model is shown, in the format of its API.
    for schema in plugins.pipeline.registry().schemas(None) {
        println!(
            "tool for the model: {}",
            schema.to_openai()["function"]["name"]
        );
    }

    // One model turn: the calls it asked for, run in parallel where the
    // tools allow, the outcomes returned in the model's order.
    let scheduler = TurnScheduler::new(plugins.pipeline.clone());
    let turn = vec![
        ToolCall::new("call-1", "add", r#"{"a": 2, "b": 3}"#),
        ToolCall::new("call-2", "add", r#"{"a": "two"}"#),
        ToolCall::new("call-3", "multiply", r#"{"a": 2, "b": 3}"#),
    ];
    let outcomes: Vec<Arc<Outcome>> = scheduler.run_turn(turn, CancellationToken::new()).await;
    for outcome in &outcomes {
        // What goes back into the model's context, one message per call.
        println!("{} -> {}", outcome.call_id, outcome.content.joined_text());
    }

    // Unloading removes the tool and the observer.
    plugins.disposables.dispose();
    let registry = plugins.pipeline.registry();
    println!(
        "after unload: {} tools, {} result listeners",
        registry.schemas(None).len(),
        plugins.pipeline.hooks().result().listener_count()
    );
    Ok(())
}
