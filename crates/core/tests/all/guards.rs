//! Guards: fixed order, pass or deny, fail closed.

use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::json;
use tack_core::hook::{AgentId, Provenance};
use tack_core::hooks::ToolHooks;
use tack_core::host::GuardOutcome;
use tack_core::host::{Guards, HookError};
use tack_core::host::{NewExecutionToken, NewToolExecution};
use tack_core::tool::{CallId, ExecutionToken, Tier, ToolExecution, ToolName};

fn exec(args: serde_json::Value) -> Arc<ToolExecution> {
    Arc::new(ToolExecution::new(
        CallId::from("c1"),
        ToolName::new("bash").unwrap(),
        Arc::new(args),
        Tier::Executes,
        ExecutionToken::issue(CallId::from("c1")),
    ))
}

#[tokio::test]
async fn guards_run_in_registration_order_and_the_first_denial_stops_them() {
    let hooks = ToolHooks::new();
    let guards = hooks.guards();
    let seen: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    let s = seen.clone();
    let _a = hooks.guard("a", move |_| {
        s.lock().push("a");
        Ok(())
    });
    let s = seen.clone();
    let _b = hooks.guard_async("b", move |_exec| {
        let s = s.clone();
        async move {
            tokio::task::yield_now().await;
            s.lock().push("b");
            Err("b says no".into())
        }
    });
    let s = seen.clone();
    let _c = hooks.guard("c", move |_| {
        s.lock().push("c");
        Ok(())
    });
    let outcome = guards.run(None, &exec(json!({}))).await.unwrap();
    assert_eq!(
        outcome,
        GuardOutcome::Denied {
            reason: "b says no".into(),
            provenance: Provenance::listener(Guards::STAGE, "b")
        }
    );
    assert_eq!(*seen.lock(), ["a", "b"]);
}

/// A guard with state of its own: registered as a closure that captures it.
struct MaxLen(usize);

impl MaxLen {
    async fn check(&self, execution: &ToolExecution) -> Result<(), String> {
        if execution
            .arg_str("command")
            .is_some_and(|c| c.len() > self.0)
        {
            Err(format!("commands are limited to {} characters", self.0))
        } else {
            Ok(())
        }
    }
}

#[tokio::test]
async fn struct_guards_and_scopes() {
    let hooks = ToolHooks::new();
    let guards = hooks.guards();
    let a = AgentId::new("a");
    let max_len = Arc::new(MaxLen(3));
    let _g = hooks
        .for_agent(&a)
        .guard_async("max-len", move |execution| {
            let max_len = max_len.clone();
            async move { max_len.check(&execution).await }
        });
    let long = exec(json!({"command": "echo hello"}));
    assert!(matches!(
        guards.run(Some(&a), &long).await.unwrap(),
        GuardOutcome::Denied { .. }
    ));
    assert_eq!(
        guards.run(Some(&AgentId::new("b")), &long).await.unwrap(),
        GuardOutcome::Passed
    );
    assert_eq!(guards.run(None, &long).await.unwrap(), GuardOutcome::Passed);
    assert_eq!(guards.names(Some(&a)).len(), 1);
}

#[tokio::test]
async fn a_panicking_guard_fails_closed() {
    let hooks = ToolHooks::new();
    let guards = hooks.guards();
    let _bad = hooks.guard("bad", |_| panic!("guard bug"));
    let err = guards.run(None, &exec(json!({}))).await.unwrap_err();
    assert_eq!(
        err,
        HookError::ListenerPanicked {
            hook: Guards::STAGE,
            listener: "bad".into(),
            message: "guard bug".into()
        }
    );
}
