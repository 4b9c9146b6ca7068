//! 1,000 concurrent calls while listeners are registered and disposed.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use parking_lot::Mutex;
use serde_json::json;
use tack_core::hook::AgentId;
use tack_core::hooks::ExecutionRecord;
use tack_core::policy::PreDecision;
use tack_core::tool::{ErrorCode, ToolCall};
use tokio_util::sync::CancellationToken;

use crate::harness::*;

const CALLS: usize = 1_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thousand_concurrent_calls_with_listener_churn_lose_nothing() {
    let h = Arc::new(Harness::new());
    h.add(echo("echo"));
    h.add(add_one());
    h.add(panicking("boom"));
    let _scoped = h.add_for(&AgentId::new("a"), echo("mine"));

    // Every outcome, by call id, as the permanent observer saw it.
    let seen: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let count = seen.clone();
    let _observer = h
        .hooks()
        .result()
        .tap("count", move |record: &Arc<ExecutionRecord>| {
            *count
                .lock()
                .entry(record.outcome.call_id.to_string())
                .or_default() += 1;
        });
    let _deny_odd_agents = h
        .hooks()
        .for_agent(AgentId::new("b"))
        .pre_execute()
        .tap("deny-b", |_exec, _next| {
            std::future::ready(PreDecision::deny("b may not"))
        });

    // Churn: register and dispose listeners of every kind while calls run.
    let stop = Arc::new(AtomicBool::new(false));
    let churned = Arc::new(AtomicUsize::new(0));
    let churn = {
        let pipeline = h.pipeline.clone();
        let registry = h.registry.clone();
        let stop = stop.clone();
        let churned = churned.clone();
        tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                let hooks = pipeline.hooks();
                let pre = hooks
                    .pre_execute()
                    .tap("churn-pre", |exec, next| next.run(exec));
                let exec = hooks.execute().tap("churn-exec", |req, next| next.run(req));
                let post = hooks
                    .post_execute()
                    .tap("churn-post", |input, next| next.run(input));
                let obs = hooks
                    .result()
                    .tap("churn-result", |_r: &Arc<ExecutionRecord>| {});
                let guard = hooks.guard("churn-guard", |_| Ok(()));
                let tool = registry.register(echo("churn_tool"));
                tokio::task::yield_now().await;
                for d in [pre, exec, post, obs, guard] {
                    d.dispose();
                }
                if let Ok(tool) = tool {
                    tool.dispose();
                }
                churned.fetch_add(1, Ordering::SeqCst);
                tokio::task::yield_now().await;
            }
        })
    };

    let mut tasks = Vec::with_capacity(CALLS);
    for i in 0..CALLS {
        let h = h.clone();
        tasks.push(tokio::spawn(async move {
            let id = format!("call-{i}");
            let call = match i % 6 {
                0 => ToolCall::new(id.clone(), "echo", r#"{"text": "x"}"#),
                1 => ToolCall::new(id.clone(), "add_one", format!(r#"{{"x": {i}}}"#)),
                2 => ToolCall::new(id.clone(), "boom", "{}"),
                3 => ToolCall::new(id.clone(), "mine", r#"{"text": "x"}"#).with_agent("a"),
                4 => ToolCall::new(id.clone(), "echo", r#"{"text": "x"}"#).with_agent("b"),
                _ => ToolCall::new(id.clone(), "echo", "not json"),
            };
            let out = h.pipeline.execute(call, CancellationToken::new()).await;
            (i, id, out)
        }));
    }
    let mut outcomes = Vec::with_capacity(CALLS);
    for task in tasks {
        outcomes.push(task.await.unwrap());
    }
    stop.store(true, Ordering::SeqCst);
    churn.await.unwrap();

    assert_eq!(outcomes.len(), CALLS);
    for (i, id, out) in &outcomes {
        assert_eq!(out.call_id.as_str(), id);
        let expected = match i % 6 {
            0 | 3 => None,
            1 => None,
            2 => Some(ErrorCode::ExecutionFailed),
            4 => Some(ErrorCode::Denied),
            _ => Some(ErrorCode::InvalidArguments),
        };
        assert_eq!(out.error_code(), expected, "{id}: {out:?}");
        if i % 6 == 1 {
            assert_eq!(out.value().unwrap(), &json!({"y": i + 1}));
        }
    }
    let seen = seen.lock();
    assert_eq!(seen.len(), CALLS, "every call observed");
    assert!(seen.values().all(|&n| n == 1), "each exactly once");
    assert_eq!(h.results.lock().len(), CALLS);
    // Each call went through the recorder once at `result`.
    let results = h
        .recorder
        .all()
        .into_iter()
        .filter(|(_, s)| s.as_str() == "result")
        .count();
    assert_eq!(results, CALLS);
    assert!(churned.load(Ordering::SeqCst) > 0, "listeners were churned");
}
