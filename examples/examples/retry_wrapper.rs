//! An execute wrapper with retry and exponential backoff, and its metrics.
//! It wraps `tools/execute`, runs a body that failed with `EXECUTION_FAILED`
//! again (at most three attempts, waiting twice as long before each), and
//! counts attempts, retries and give-ups for the host to read.
//!
//! Run: `cargo run -p tack-examples --features agent --example retry_wrapper`

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use tack_agent::PluginSet;
use tack_core::prelude::*;

#[derive(Debug, Default)]
struct Metrics {
    attempts: AtomicU64,
    retries: AtomicU64,
    gave_up: AtomicU64,
}

/// Runs the body up to three times while it fails with `EXECUTION_FAILED`.
async fn retry(request: ExecuteRequest, m: Arc<Metrics>) -> ExecuteOutput {
    let mut attempt = 1;
    loop {
        m.attempts.fetch_add(1, Relaxed);
        let output = request.clone().run_body().await; // CANCELLED if cancelled meanwhile
        let failed = matches!(output.result(), Err(e) if e.code() == ErrorCode::ExecutionFailed);
        if !failed || attempt == 3 {
            m.gave_up.fetch_add(u64::from(failed), Relaxed);
            return output;
        }
        m.retries.fetch_add(1, Relaxed);
        tokio::time::sleep(Duration::from_millis(10) * 2u32.pow(attempt - 1)).await;
        attempt += 1;
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let metrics = Arc::new(Metrics::default());
    let m = metrics.clone();
    let plugin = PluginFn::new("retry", move |cx| {
        let m = m.clone();
        // `next` runs at most once, so a retry runs the body itself: it goes
        // innermost (LATE), and a deadline wrapped around it bounds all attempts.
        let hooks = cx.hooks();
        hooks
            .execute()
            .tap_with("retry", Order::LATE, move |req, _| retry(req, m.clone()))?;
        Ok(())
    });
    let plugins = PluginSet::new().with(plugin).build()?;
    let pipeline = &plugins.pipeline;
    // A weather service that fails twice, answers once, then is down for good.
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let weather = ToolDefinition::builder("weather")
        .description("Today's weather.")
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({"type": "string"})))
        .handler(|_args, _cx| async {
            let answer = (RUNS.fetch_add(1, Relaxed) == 2).then(|| json!("sunny"));
            answer.ok_or_else(|| ToolError::new("the weather service answered 503"))
        })
        .build()?;
    let _weather = pipeline.registry().register(weather)?;
    for id in ["call-1", "call-2"] {
        let call = ToolCall::new(id, "weather", "{}");
        let outcome = pipeline.execute(call, CancellationToken::new()).await;
        println!("{id}: {}", outcome.content.joined_text());
    }
    println!("{metrics:?}");
    Ok(())
}
