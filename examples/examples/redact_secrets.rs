//! A `tools/post-execute` transform that redacts secrets: every `sk-…` key
//! in a result's value is replaced, so neither the content the model reads
//! (rendered from the value) nor the value observers and session logs record
//! holds it. A failure has no value; its message is redacted in
//! `tools/execute`, before the pipeline writes it into the outcome.
//!
//! Run: `cargo run -p tack-examples --features agent --example redact_secrets`

use std::sync::{Arc, LazyLock};

use regex::Regex;
use tack_agent::PluginSet;
use tack_core::prelude::*;

/// An API key: `sk-` and the letters, digits, `-` and `_` after it.
static KEY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"sk-[\w-]+").expect("a valid pattern"));

/// `text` with every key replaced by `[REDACTED]`.
fn redact(text: &str) -> String {
    KEY.replace_all(text, "[REDACTED]").into_owned()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let redacting = PluginFn::new("redact", |cx| {
        let hooks = cx.hooks();
        let (post_execute, execute) = (hooks.post_execute(), hooks.execute());
        post_execute.tap("redact", |record, next| async move {
            let decision = next.run(record.clone()).await;
            let Some(value) = record.outcome.value() else {
                return decision; // a failure: see `redact-errors`
            };
            // Replace the value: the model's content is rendered from it.
            match serde_json::from_str(&redact(&value.to_string())) {
                Ok(clean) if clean != *value => decision.replace_value(clean),
                Ok(_) => decision,
                Err(_) => decision.block("a secret could not be redacted"),
            }
        });
        // Post-execute cannot change a failure's message: redact it where it is made.
        execute.tap("redact-errors", |request, next| async move {
            let output = next.run(request).await;
            match output.result() {
                Err(e) if redact(e.message()) != e.message() => {
                    ExecuteOutput::err(ToolError::new(redact(e.message())))
                }
                _ => output,
            }
        });
        Ok(())
    });
    let plugins = PluginSet::new().with(redacting).build()?;
    let pipeline = &plugins.pipeline;
    // What a session log writes: the final record, after post-execute.
    let result = pipeline.hooks().result();
    let _log = result.tap("log", |record: &Arc<ExecutionRecord>| {
        match record.outcome.result() {
            Ok(value) => println!("logged value: {value}"),
            Err(failure) => {
                let failure = serde_json::to_string(failure).unwrap_or_default();
                println!("logged error: {failure}");
            }
        }
    });
    let config = ToolDefinition::builder("config")
        .description("Read a section of the configuration.")
        .input_schema(json!({"type": "object", "properties": {"section": {"type": "string"}}}))
        .output(OutputSpec::new(json!({"type": "object"})))
        .handler(|args, _cx| async move {
            match args["section"].as_str() {
                Some("api") => Ok(json!({"user": "ada", "key": "sk-live-4f9a2b7c"})),
                _ => Err(ToolError::new("bad section in `key = sk-live-4f9a2b7c`")),
            }
        })
        .build()?;
    let _config = pipeline.registry().register(config)?;
    for args in [r#"{"section": "api"}"#, r#"{"section": "db"}"#] {
        let call = ToolCall::new("call-1", "config", args);
        let outcome = pipeline.execute(call, CancellationToken::new()).await;
        println!("model reads: {}", outcome.content.joined_text());
    }
    Ok(())
}
