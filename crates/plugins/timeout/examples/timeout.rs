//! The timeout plugin: install, effect, disposal.
//!
//! Run with `cargo run -p tack-timeout --example timeout`.

use std::time::Duration;

use serde_json::json;
use tack_core::host::PluginHost;
use tack_core::tool::{OutputSpec, ToolCall, ToolDefinition};
use tack_pipeline::{Pipeline, ToolRegistry};
use tack_timeout::{Timeout, TimeoutConfig};
use tokio_util::sync::CancellationToken;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = ToolRegistry::new();
    // A tool that declares a 200 ms budget but needs a second.
    let _tool = registry.register(
        ToolDefinition::builder("slow_build")
            .description("Builds the project (slowly).")
            .input_schema(json!({"type": "object"}))
            .output(OutputSpec::new(json!({"type": "string"})))
            .timeout(Duration::from_millis(200))
            .handler(|_args, cx| async move {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(1)) => Ok(json!("built")),
                    () = cx.cancellation().cancelled() => Ok(json!("stopped")),
                }
            })
            .build()?,
    )?;

    // Install: a 100 ms grace period instead of the default 2 s.
    let policy = Timeout::new(TimeoutConfig::default().grace(Duration::from_millis(100)))?;
    let pipeline = Pipeline::new(registry.clone());
    let mut host = PluginHost::new(pipeline.hooks(), pipeline.capabilities(), &registry);
    host.install(&policy)?;
    let plugins = host.into_disposables();

    // Effect: the call ends at its deadline with TIMEOUT.
    let out = pipeline
        .execute(
            ToolCall::new("c1", "slow_build", "{}"),
            CancellationToken::new(),
        )
        .await;
    let failure = out.failure_info().ok_or("expected a timeout")?;
    println!(
        "with the plugin:    {} - {}",
        failure.code(),
        failure.message()
    );
    if let Some(p) = &out.provenance {
        println!("                    decided by {p}");
    }

    // Disposal: unloading removes the wrapper; the same call runs to completion.
    drop(plugins);
    let out = pipeline
        .execute(
            ToolCall::new("c2", "slow_build", "{}"),
            CancellationToken::new(),
        )
        .await;
    println!(
        "after unloading it: {}",
        out.value()
            .map_or_else(|| format!("{out:?}"), |v| v.to_string())
    );
    Ok(())
}
