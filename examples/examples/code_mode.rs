//! Code mode: the model sees one tool, `run_code`, and writes a JavaScript
//! program that calls the host's tools; each of those calls goes through the
//! whole pipeline, so a pre-execute gate judges every one.
//!
//! `cargo run -p tack-examples --features code-mode --example code_mode`
//!
//! `CodeMode` registers `run_code`; `Presentation::Code` shows the model
//! only that tool, plus the SDK text (`sdk_text`) declaring `tools.<name>` for
//! the system prompt. The program below refunds every order; the gate denies
//! refunds over 100, and the program catches that `ToolCallError` and goes on.

use tack_agent::PluginSet;
use tack_code_mode::{CodeMode, CodeModeConfig, sdk_text};
use tack_core::prelude::*;
use tack_pipeline::{Pipeline, Presentation, ToolRegistry};

const PROGRAM: &str = r#"
const { orders } = await tools.list_orders({});
const refunded = [];
for (const order of orders) {
  try {
    await tools.refund({ id: order.id, amount: order.amount });
    refunded.push(order.id);
  } catch (e) {
    console.log(`${order.id} not refunded: ${e.code} (${e.message})`);
  }
}
return { refunded };
"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let list_orders = ToolDefinition::builder("list_orders")
        .description("The open orders.")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({"type": "object"})))
        .tier(Tier::ReadOnly)
        .handler(|_, _| async { Ok(json!({"orders": [{"id": "A1", "amount": 40}, {"id": "B2", "amount": 250}, {"id": "C3", "amount": 15}]})) })
        .build()?;
    let refund = ToolDefinition::builder("refund")
        .description("Refund an order.")
        .input_schema(json!({"type": "object", "properties": {"id": {"type": "string"}, "amount": {"type": "number"}}, "required": ["id", "amount"]}))
        .output(OutputSpec::new(json!({"type": "object"})))
        .tier(Tier::Writes)
        .handler(|args, _| async move { Ok(json!({ "refunded": args["id"] })) })
        .build()?;
    let registry = ToolRegistry::new();
    let _tools = [registry.register(list_orders)?, registry.register(refund)?];
    let pipeline = Pipeline::new(registry.clone());
    let _plugins = PluginSet::over(pipeline.clone())
        .with(CodeMode::new(CodeModeConfig::default()))
        .build()?;
    registry.set_presentation(None, Presentation::Code);
    let pre_execute = pipeline.hooks().pre_execute();
    let _gate = pre_execute.tap("refund-limit", |exec, next| async move {
        println!("gate: {} {}", exec.call_id(), exec.name());
        if exec.name() == "refund" && exec.arg("amount").and_then(|a| a.as_f64()) > Some(100.0) {
            return PreDecision::deny("refunds over 100 need a person");
        }
        next.run(exec).await
    });

    let shown: Vec<String> = registry.schemas(None).into_iter().map(|s| s.name).collect();
    println!("the model sees {shown:?}; the SDK declares:");
    let natives: Vec<ToolDefinition> = registry
        .native_tools(None)
        .iter()
        .map(|t| t.definition().clone())
        .collect();
    sdk_text(&natives)
        .lines()
        .filter(|l| l.contains("(args:"))
        .for_each(|l| println!("  {}", l.trim()));
    let call = ToolCall::new("c1", "run_code", json!({ "code": PROGRAM }).to_string());
    let outcome = pipeline.execute(call, CancellationToken::new()).await;
    println!("run_code -> {}", outcome.content.joined_text());
    Ok(())
}
