//! Structured output: the model ends its turn by calling a typed answer tool,
//! and the host gets that answer as a Rust value.
//!
//! `cargo run -p tack-examples --features agent --example structured_output`
//!
//! `submit_review` is a typed tool: its input schema comes from the `Review`
//! type, so the pipeline checks the model's answer before the body runs. The
//! body keeps the answer and calls `conclude_turn`, which ends the agent's
//! turn (`RunEnd::Concluded`) without another model call. A model that
//! answers badly gets the schema error as a tool result and tries again; the
//! scripted model here does exactly that.

use std::sync::{Arc, OnceLock};

use tack_agent::{Agent, Message, RunEnd, ScriptedModel};
use tack_core::prelude::*;
use tack_pipeline::{Pipeline, ToolRegistry};

/// The answer the host wants.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Review {
    verdict: Verdict,
    /// From 0 to 10.
    #[schemars(range(max = 10))]
    score: u8,
    reasons: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Verdict {
    Approve,
    Reject,
}

/// The answer tool: keeps the review and concludes the turn.
struct SubmitReview(Arc<OnceLock<Review>>);

impl Tool for SubmitReview {
    const NAME: &'static str = "submit_review";
    type Args = Review;
    type Output = Review;
    fn description(&self) -> &str {
        "Submit your review. Call it once, when done; it ends your turn."
    }
    fn tier(&self) -> Tier {
        Tier::ReadOnly
    }
    async fn execute(&self, review: Review, cx: &ToolRunContext) -> Result<Review, ToolError> {
        if self.0.set(review.clone()).is_err() {
            return Err(ToolError::new("you already answered"));
        }
        cx.conclude_turn();
        Ok(review)
    }
}

const SCRIPT: &str = r#"{"turns": [
  {"tool_calls": [{"id": "c1", "name": "submit_review", "arguments": "{\"verdict\": \"maybe\", \"score\": 11, \"reasons\": []}"}]},
  {"tool_calls": [{"id": "c2", "name": "submit_review", "arguments": "{\"verdict\": \"approve\", \"score\": 8, \"reasons\": [\"tests pass\", \"small diff\"]}"}]},
  {"text": "never reached: the turn ended with the answer"}
]}"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let answer = Arc::new(OnceLock::new());
    let registry = ToolRegistry::new();
    let _tool = registry.register(ToolDefinition::from_tool(SubmitReview(answer.clone()))?)?;
    let model = Arc::new(ScriptedModel::parse(SCRIPT)?);
    let mut agent = Agent::builder(model, Pipeline::new(registry)).build();
    let end = agent.run("Review the change in PR 7.").await?;
    for message in agent.history() {
        if let Message::ToolResult { content, .. } = message {
            println!("tool result: {content}");
        }
    }
    match (end, answer.get()) {
        (RunEnd::Concluded, Some(review)) => println!("typed answer: {review:?}"),
        (end, _) => return Err(format!("no answer: the turn ended {end:?}").into()),
    }
    Ok(())
}
