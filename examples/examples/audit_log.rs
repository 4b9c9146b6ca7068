//! A `tools/result` observer writing an audit log: one JSON line per call,
//! whatever its end (success, denial, failure, unknown tool). Observers are
//! synchronous, so the observer only hands each record to a channel; a
//! writer thread does the file I/O.
//!
//! Run: `cargo run -p tack-examples --features agent --example audit_log -- audit.jsonl`

use std::io::{LineWriter, Write};
use std::sync::{Arc, mpsc};

use tack_agent::PluginSet;
use tack_core::prelude::*;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: audit_log FILE")?;
    let mut file = LineWriter::new(std::fs::File::create(&path)?);
    let (records, inbox) = mpsc::channel::<Arc<ExecutionRecord>>();
    // The writer ends once the plugin is unloaded and every record is written.
    let writer = std::thread::spawn(move || {
        let to_line = |r: Arc<ExecutionRecord>| serde_json::to_string(&*r.outcome);
        inbox
            .iter()
            .try_for_each(|r| writeln!(file, "{}", to_line(r)?))
    });
    let audit = PluginFn::new("audit", move |cx| {
        let records = records.clone();
        cx.hooks()
            .result()
            .tap("audit", move |record: &Arc<ExecutionRecord>| {
                let _ = records.send(record.clone()); // cheap: an Arc, no I/O here
            });
        Ok(())
    });
    let plugins = PluginSet::new().with(audit).build()?;
    let echo = ToolDefinition::builder("echo")
        .description("Say the text back.")
        .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
        .output(OutputSpec::new(json!({"type": "string"})))
        .handler(|args, _cx| async move { Ok(args["text"].clone()) })
        .build()?;
    let echo = plugins.pipeline.registry().register(echo)?;
    for (id, tool, args) in [
        ("call-1", "echo", r#"{"text": "hi"}"#),
        ("call-2", "echo", r#"{"text": 7}"#),
        ("call-3", "rm", "{}"),
    ] {
        let call = ToolCall::new(id, tool, args);
        plugins
            .pipeline
            .execute(call, CancellationToken::new())
            .await;
    }
    echo.dispose();
    plugins.disposables.dispose(); // unloads the observer, which closes the channel
    drop(plugins);
    writer.join().map_err(|_| "the audit writer panicked")??;
    print!("{}", std::fs::read_to_string(&path)?);
    Ok(())
}
