//! A host composing a plugin set: plugins by value, built and configured in
//! code (a sandbox over a workspace, a timeout policy), and by `inventory`
//! name (tack's builtin tools, and a gate this program submits itself).
//!
//! Run: `cargo run -p tack-examples --features agent --example plugin_set`

use std::time::Duration;

use tack_agent::PluginSet;
use tack_core::host::plugin_factories;
use tack_core::plugin::PluginFactory;
use tack_core::prelude::*;
use tack_sandbox::{Sandbox, SandboxPolicy};
use tack_timeout::{Timeout, TimeoutConfig};
use tack_tools as _; // a crate whose plugins are installed by name must be linked

fn read_only() -> Box<dyn Plugin> {
    Box::new(PluginFn::new("read-only", |cx| {
        cx.hooks()
            .pre_execute()
            .tap("read-only", |exec, next| async move {
                if !exec.tier().is_read_only() {
                    return PreDecision::deny("this session is read-only");
                }
                next.run(exec).await
            });
        Ok(())
    }))
}

// Submitted at link time: any host linking this code can install it by name.
tack_core::inventory::submit! { PluginFactory::new("read-only", "Denies every call that changes something.", read_only) }

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let names: Vec<&str> = plugin_factories()?.iter().map(|f| f.name()).collect();
    println!("linked plugins: {}", names.join(", "));

    let workspace = tempfile::tempdir()?;
    let hello = workspace.path().join("hello.txt");
    std::fs::write(hello, "hello from the workspace\n")?;
    let sandbox = Sandbox::new(SandboxPolicy::workspace_write(workspace.path()))?;
    let timeouts = TimeoutConfig::default().grace(Duration::from_millis(500));
    let plugins = PluginSet::new()
        .with(sandbox)
        .with(Timeout::new(timeouts)?)
        .with_named("builtin-tools")
        .with_named("read-only")
        .build()?;
    println!("installed, in order: {}", plugins.installed.join(", "));

    for (tool, args) in [
        ("read_file", r#"{"path": "hello.txt"}"#),
        ("write_file", r#"{"path": "a.txt", "content": "x"}"#),
    ] {
        let call = ToolCall::new("c1", tool, args);
        let outcome = plugins.pipeline.execute(call, CancellationToken::new());
        let outcome = outcome.await;
        println!("{tool}: {}", outcome.content.joined_text());
    }
    // A name nothing submitted fails the whole set, saying what is linked.
    if let Err(e) = PluginSet::new().with_named("no-such-plugin").build() {
        println!("no-such-plugin: {e}");
    }
    Ok(())
}
