//! A typed tool plugin: argument and output types whose JSON Schemas are
//! derived, a plugin that registers the tool, and two calls through the
//! pipeline — one valid, one the schema refuses before the body runs.
//!
//! Run: `cargo run -p tack-examples --example typed_tool`

use tack_core::prelude::*;
use tack_pipeline::PluginSet;

#[derive(Deserialize, JsonSchema)]
struct CountArgs {
    /// The text to count words in.
    text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Count {
    words: usize,
}

struct CountWords;

impl Tool for CountWords {
    const NAME: &'static str = "count_words";
    type Args = CountArgs;
    type Output = Count;
    fn description(&self) -> &str {
        "Count the words in a text. Use when the user asks how long a text is."
    }
    fn tier(&self) -> Tier {
        Tier::ReadOnly // policies read the tier: this tool changes nothing
    }
    async fn execute(&self, args: CountArgs, _cx: &ToolRunContext) -> Result<Count, ToolError> {
        let words = args.text.split_whitespace().count();
        Ok(Count { words })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The tool stays registered until the plugin unloads
    // (`plugins.disposables.dispose()`). This host needs only tack-core and
    // tack-pipeline.
    let words = PluginFn::new("words", |cx| cx.register_typed(CountWords));
    let plugins = PluginSet::new().with(words).build()?;
    let pipeline = &plugins.pipeline;
    for schema in pipeline.registry().schemas(None) {
        println!("schema: {}", schema.to_openai());
    }
    for args in [r#"{"text": "the quick brown fox"}"#, r#"{"text": 4}"#] {
        let call = ToolCall::new("call-1", "count_words", args);
        let outcome = pipeline.execute(call, CancellationToken::new()).await;
        println!("{args} -> {}", outcome.content.joined_text());
    }
    Ok(())
}
