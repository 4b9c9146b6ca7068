//! Retry once on `TIMEOUT`, within the call's overall deadline.
//!
//! A search tool declares a 100 ms budget, which `tack-timeout` enforces. Its
//! upstream sometimes times out on its own: the tool then fails with
//! `TIMEOUT` well before its budget, and trying again is worth it. A wrapper
//! outside the timeout runs the rest of the chain — the timeout wrapper and
//! the body — a second time through a fork of `next`; the timeout gives that
//! attempt only what is left of the call's 100 ms.
//!
//! The clock is tokio's paused clock: time moves only while every task
//! waits, so the times printed are exact and the program ends at once.
//!
//! Run: `cargo run -p tack-examples --features agent --example retry_on_timeout`

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::time::Duration;

use tack_agent::PluginSet;
use tack_core::hook::{Next, Order};
use tack_core::prelude::*;
use tokio::time::{Instant, sleep};

/// Runs the rest of the chain once more when it ended in `TIMEOUT`.
async fn retry_once_on_timeout(
    request: ExecuteRequest,
    next: Next<ExecuteRequest, ExecuteOutput>,
) -> ExecuteOutput {
    let again = next.fork();
    let first = next.run(request.clone()).await;
    match first.result() {
        Err(e) if e.code() == ErrorCode::Timeout && !request.cancellation().is_cancelled() => {
            again.run(request).await
        }
        _ => first,
    }
}

/// How many times the tool's body started, in the current call.
static ATTEMPTS: AtomicU32 = AtomicU32::new(0);

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let retry = PluginFn::new("retry", |cx| {
        let order = Order::before(tack_timeout::LISTENER_NAME);
        cx.hooks()
            .execute()
            .tap_with("retry", order, retry_once_on_timeout)?;
        Ok(())
    });
    // The timeout first: the retry places itself before (outside) it by name.
    let plugins = PluginSet::new()
        .with(tack_timeout::Timeout::default())
        .with(retry)
        .build()?;
    let pipeline = &plugins.pipeline;

    // Each attempt does what `plan` says: `upstream-timeout` (fails with
    // TIMEOUT after 30 ms), `slow` (works until stopped), or `answer`
    // (answers after 20 ms).
    let search = ToolDefinition::builder("search")
        .description("Search the index.")
        .input_schema(json!({"type": "object", "properties": {"plan": {"type": "array"}}}))
        .output(OutputSpec::new(json!({"type": "string"})))
        .timeout(Duration::from_millis(100))
        .handler(|args, cx| async move {
            let attempt = ATTEMPTS.fetch_add(1, Relaxed) as usize;
            match args["plan"][attempt].as_str().unwrap_or("answer") {
                "upstream-timeout" => {
                    sleep(Duration::from_millis(30)).await;
                    Err(ToolError::timeout("the index timed out"))
                }
                "slow" => {
                    cx.cancellation().cancelled().await;
                    Err(ToolError::cancelled("stopped"))
                }
                _ => {
                    sleep(Duration::from_millis(20)).await;
                    Ok(json!("3 results"))
                }
            }
        })
        .build()?;
    let _search = pipeline.registry().register(search)?;

    let plans = [
        ("call-1", json!(["upstream-timeout", "answer"])),
        ("call-2", json!(["upstream-timeout", "slow"])),
        ("call-3", json!(["slow", "answer"])),
    ];
    for (id, plan) in plans {
        ATTEMPTS.store(0, Relaxed);
        let arguments = json!({ "plan": plan.clone() }).to_string();
        let started = Instant::now();
        let outcome = pipeline
            .execute(
                ToolCall::new(id, "search", arguments),
                CancellationToken::new(),
            )
            .await;
        let answer = match outcome.failure_info() {
            Some(failure) => failure.code().to_string(),
            None => outcome.content.joined_text(),
        };
        println!(
            "{id} {plan}: {answer} after {} ms, {} attempt(s)",
            started.elapsed().as_millis(),
            ATTEMPTS.load(Relaxed)
        );
    }
    Ok(())
}
