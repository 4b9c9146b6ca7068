//! A registry with the timeout plugin, and test tools.

use std::future::Future;
use std::sync::Arc;

use serde_json::{Value, json};
use tack_core::capability::CapabilitySlots;
use tack_core::context::ToolRunContext;
use tack_core::hook::Disposables;
use tack_core::plugin::PluginHost;
use tack_core::tool::{Failure, Outcome, OutputSpec, ToolDefinition, ToolError};
use tack_pipeline::Pipeline;
use tack_timeout::TimeoutPolicy;

/// Installs `policy` as a plugin into `pipeline`; dropping the result unloads it.
pub fn install(pipeline: &Pipeline, policy: &TimeoutPolicy) -> Disposables {
    let caps: &CapabilitySlots = pipeline.capabilities();
    let mut host = PluginHost::new(pipeline.hooks(), caps, pipeline.registry());
    host.install(policy).unwrap();
    host.into_disposables()
}

/// A tool with an optional declared timeout.
pub fn tool<F, Fut>(name: &str, timeout_ms: Option<u64>, body: F) -> ToolDefinition
where
    F: Fn(ToolRunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    let body = Arc::new(body);
    let mut b = ToolDefinition::builder(name)
        .description(format!("The `{name}` test tool."))
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({})))
        .handler(move |_args: Arc<Value>, cx: ToolRunContext| {
            let body = body.clone();
            async move { body(cx).await }
        });
    if let Some(ms) = timeout_ms {
        b = b.timeout(std::time::Duration::from_millis(ms));
    }
    b.build().unwrap()
}

pub fn failure(outcome: &Outcome) -> &Failure {
    outcome
        .failure_info()
        .unwrap_or_else(|| panic!("expected a failure: {outcome:?}"))
}
