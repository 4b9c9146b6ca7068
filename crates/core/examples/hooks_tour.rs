//! A tour of tack's hook mechanism: registration, order, scoped dispatch,
//! provenance, failure, and disposal.
//!
//! Run: `cargo run -p tack-core --example hooks_tour`

use std::sync::Arc;

use serde_json::json;
use tack_core::hook::{AgentId, Order};
use tack_core::hooks::{ExecutionRecord, ToolHooks};
use tack_core::host::Disposables;
use tack_core::host::{NewExecutionRecord, NewExecutionToken, NewOutcome, NewToolExecution};
use tack_core::policy::PreDecision;
use tack_core::tool::{CallId, ExecutionToken, Outcome, Tier, ToolExecution, ToolName};

fn execution(tool: &str, args: serde_json::Value, agent: Option<&AgentId>) -> Arc<ToolExecution> {
    Arc::new(
        ToolExecution::new(
            CallId::from(format!("call-{tool}")),
            ToolName::new(tool).expect("valid tool name"),
            Arc::new(args),
            Tier::Executes,
            ExecutionToken::issue(CallId::from(format!("call-{tool}"))),
        )
        .with_agent(agent.cloned()),
    )
}

async fn ask(hooks: &ToolHooks, agent: Option<&AgentId>, tool: &str, args: serde_json::Value) {
    let who = agent.map_or("(no agent)".to_owned(), |a| a.to_string());
    match hooks
        .pre_execute()
        .dispatch(agent, execution(tool, args, agent))
        .await
    {
        Ok(decision) => {
            let by = decision
                .provenance()
                .map_or("?".to_owned(), |p| p.to_string());
            let verdict = match decision.reason() {
                Some(reason) => format!("{}: {reason}", decision.action()),
                None => decision.action().to_string(),
            };
            println!("  {who:>12} {tool:<10} → {verdict}   [decided by {by}]");
        }
        Err(err) => println!("  {who:>12} {tool:<10} → FAILED CLOSED: {err}"),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let hooks = ToolHooks::new();
    let reviewer = AgentId::new("reviewer");
    let coder = AgentId::new("coder");

    // A plugin's footprint: everything it registers goes into one bag.
    let plugin = Disposables::new();

    // 1. A global gate, registered first.
    plugin.add(
        hooks
            .pre_execute()
            .tap("deny-rm-rf", |exec, next| async move {
                if exec
                    .arg_str("command")
                    .is_some_and(|c| c.contains("rm -rf"))
                {
                    return PreDecision::deny("`rm -rf` is not allowed in this workspace");
                }
                next.run(exec).await
            }),
    );
    // 2. A listener for the reviewer only: it may read, nothing else.
    plugin.add(hooks.for_agent(&reviewer).pre_execute().tap(
        "reviewer-read-only",
        |exec, next| async move {
            if exec.name() != "read_file" {
                return PreDecision::deny("the reviewer agent only reads files");
            }
            next.run(exec).await
        },
    ));
    // 3. An audit listener at the early rank: outermost, sees every decision last.
    plugin.add(
        hooks
            .pre_execute()
            .tap_with("audit", Order::EARLY, |exec, next| async move {
                let decision = next.run(exec.clone()).await;
                println!(
                    "  [audit] {} {} → {}",
                    exec.call_id(),
                    exec.name(),
                    decision
                );
                decision
            })
            .expect("a rank alone always registers"),
    );
    // 4. A result observer (observers see frozen values and cannot change them).
    plugin.add(
        hooks
            .result()
            .tap("printer", |record: &Arc<ExecutionRecord>| {
                println!("  [result] {} finished", record.outcome.call_id);
            }),
    );

    println!(
        "order for reviewer: {:?}",
        hooks.pre_execute().listener_names(Some(&reviewer))
    );
    println!(
        "order for coder:    {:?}",
        hooks.pre_execute().listener_names(Some(&coder))
    );

    println!("\nscoped dispatch:");
    ask(
        &hooks,
        Some(&coder),
        "bash",
        json!({"command": "cargo test"}),
    )
    .await;
    ask(&hooks, Some(&coder), "bash", json!({"command": "rm -rf /"})).await;
    ask(
        &hooks,
        Some(&reviewer),
        "bash",
        json!({"command": "cargo test"}),
    )
    .await;
    ask(
        &hooks,
        Some(&reviewer),
        "read_file",
        json!({"path": "src/lib.rs"}),
    )
    .await;

    println!("\na listener that panics fails the dispatch closed (never \"allow\"):");
    // Keep the demo's output short: print panics on one line instead of the default report.
    std::panic::set_hook(Box::new(|info| eprintln!("  (panic: {info})")));
    let buggy = hooks.pre_execute().tap("buggy", |_exec, _next| async move {
        panic!("a bug in a third-party listener");
    });
    ask(&hooks, Some(&coder), "bash", json!({"command": "ls"})).await;
    buggy.dispose();

    println!("\nobservers:");
    let outcome = Outcome::success(CallId::from("call-1"), "read_file", json!("…"), vec![]);
    hooks.result().notify(
        None,
        &Arc::new(ExecutionRecord::new(None, None, Arc::new(outcome))),
    );

    println!(
        "\nunloading the plugin disposes all {} registrations:",
        plugin.len()
    );
    plugin.dispose();
    ask(&hooks, Some(&coder), "bash", json!({"command": "rm -rf /"})).await;
    println!(
        "listeners left: pre-execute {}, result {}",
        hooks.pre_execute().listener_count(),
        hooks.result().listener_count()
    );
}
