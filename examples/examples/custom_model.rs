//! A custom `ChatModel`: a small rule-based model plugged into tack-agent's
//! loop, with one tool for it to call.
//!
//! `cargo run -p tack-examples --features agent --example custom_model -- "capital of France" "capital of Atlantis"`
//!
//! The model reads the history the loop hands it and answers with text or a
//! batch of tool calls. Here it calls `capital` for "capital of X", then
//! answers from the tool's result. A tool failure is content the model reads,
//! not an error of the loop: for an unknown country it says so.

use std::sync::Arc;

use tack_agent::{Agent, ChatModel, Message, ModelError, Reply};
use tack_core::host::ToolSchema;
use tack_core::prelude::*;
use tack_pipeline::{Pipeline, ToolRegistry};

/// Asks the `capital` tool (when offered), then answers from its result.
struct Geographer;

#[async_trait]
impl ChatModel for Geographer {
    fn name(&self) -> String {
        "geographer".into()
    }

    async fn complete(&self, msgs: &[Message], tools: &[ToolSchema]) -> Result<Reply, ModelError> {
        let offered = tools.iter().any(|t| t.name == "capital");
        Ok(match msgs.last() {
            Some(Message::ToolResult {
                content, is_error, ..
            }) => Reply::Text(match is_error {
                true => format!("I could not look it up ({content})."),
                false => format!("It is {content}."),
            }),
            Some(Message::User(prompt)) if offered && prompt.starts_with("capital of ") => {
                let args = json!({ "country": &prompt["capital of ".len()..] }).to_string();
                let call = ToolCall::new(format!("call-{}", msgs.len()), "capital", args);
                Reply::ToolCalls(vec![call])
            }
            _ => Reply::Text("Ask me: capital of COUNTRY.".into()),
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let capital = ToolDefinition::builder("capital")
        .description("The capital city of a country.")
        .input_schema(json!({"type": "object", "properties": {"country": {"type": "string"}}, "required": ["country"]}))
        .output(OutputSpec::new(json!({"type": "string"})))
        .tier(Tier::ReadOnly)
        .handler(|args, _cx| async move {
            match args["country"].as_str() {
                Some("France") => Ok(json!("Paris")),
                Some("Japan") => Ok(json!("Tokyo")),
                _ => Err(ToolError::new(format!("no capital known for {}", args["country"]))),
            }
        })
        .build()?;
    let registry = ToolRegistry::new();
    let _capital = registry.register(capital)?; // registered while `_capital` lives
    let mut agent = Agent::builder(Arc::new(Geographer), Pipeline::new(registry)).build();
    for prompt in std::env::args().skip(1) {
        let seen = agent.history().len();
        let end = agent.run(prompt.as_str()).await?;
        println!("> {prompt}");
        for message in &agent.history()[seen..] {
            if let Message::ToolCalls(calls) = message {
                for call in calls {
                    println!("  call {} {}", call.name, call.arguments);
                }
            } else if let Message::ToolResult { content, .. } = message {
                println!("  result: {content}");
            }
        }
        println!("  {end:?}");
    }
    Ok(())
}
