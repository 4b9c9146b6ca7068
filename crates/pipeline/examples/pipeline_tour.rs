//! Registers a tool and a pre-execute gate, and runs three calls through the
//! pipeline: one that succeeds, one with invalid arguments, one denied.
//!
//! Run: `cargo run -p tack-pipeline --example pipeline_tour`

use serde_json::json;
use tack_core::policy::PreDecision;
use tack_core::tool::{ContentBlock, OutputSpec, Tier, ToolCall, ToolDefinition};
use tack_pipeline::{Pipeline, ToolRegistry};
use tokio_util::sync::CancellationToken;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = ToolRegistry::new();

    // A tool: `greet {name}` → "hello <name>".
    let greet = ToolDefinition::builder("greet")
        .description("Greet someone by name. Use when the user wants a greeting.")
        .input_schema(json!({
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1}},
            "required": ["name"],
            "additionalProperties": false
        }))
        .output(
            OutputSpec::new(json!({"type": "string"})).render(|_args, value| {
                vec![ContentBlock::text(value.as_str().unwrap_or_default())]
            }),
        )
        .tier(Tier::ReadOnly)
        .handler(|args, _cx| async move {
            Ok(json!(format!(
                "hello {}",
                args["name"].as_str().unwrap_or_default()
            )))
        })
        .build()
        .expect("a valid definition");
    let _tool = registry
        .register(greet)
        .expect("a fresh registry has no `greet`");

    // The pipeline runs calls against the registry.
    let pipeline = Pipeline::new(registry);

    // A pre-execute gate: nobody greets Mallory.
    let _gate = pipeline
        .hooks()
        .pre_execute()
        .tap("no-mallory", |exec, next| async move {
            if exec.arg_str("name") == Some("Mallory") {
                return PreDecision::deny("greeting Mallory is not allowed here");
            }
            next.run(exec).await
        });

    let calls = [
        ToolCall::new("call-1", "greet", r#"{"name": "Ada"}"#),
        ToolCall::new("call-2", "greet", r#"{"name": 42}"#),
        ToolCall::new("call-3", "greet", r#"{"name": "Mallory"}"#),
    ];
    for call in calls {
        let arguments = call.arguments.clone();
        let outcome = pipeline.execute(call, CancellationToken::new()).await;
        let text = outcome.content.joined_text();
        let status = match outcome.failure_info() {
            None => "ok".to_owned(),
            Some(f) => f.code().to_string(),
        };
        println!(
            "[tool:{}] {} {arguments} -> {status}",
            outcome.tool, outcome.call_id
        );
        println!("    model reads: {text}");
        if let Some(by) = &outcome.provenance {
            println!("    decided by:  {by}");
        }
    }
}
