//! Policy runs in model order (PAR-007, PAR-009): pre-execute and approval of
//! one call at a time, while bodies overlap.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use parking_lot::Mutex;
use pretty_assertions::assert_eq;
use tack_core::hook::Next;
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService, PreDecision};
use tack_core::tool::{ErrorCode, ToolExecution};
use tokio::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

use super::harness::*;

/// A log of `what` at ms since `t0`.
#[derive(Clone)]
struct Log(Arc<Mutex<Vec<String>>>, Instant);

impl Log {
    fn new() -> Self {
        Self(Arc::default(), Instant::now())
    }
    fn push(&self, what: String) {
        let at = self.1.elapsed().as_millis();
        self.0.lock().push(format!("{at} {what}"));
    }
    fn entries(&self) -> Vec<String> {
        self.0.lock().clone()
    }
}

/// Installs a pre-execute listener `name` that logs `pre {id}`, then answers as `decide` does.
fn logged_pre<F, Fut>(b: &Bench, log: &Log, name: &str, decide: F)
where
    F: Fn(Arc<ToolExecution>, Next<Arc<ToolExecution>, PreDecision>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = PreDecision> + Send + 'static,
{
    let log = log.clone();
    b.pipeline
        .hooks()
        .pre_execute()
        .tap(name, move |exec: Arc<ToolExecution>, next| {
            let log = log.clone();
            let decision = decide(exec.clone(), next);
            async move {
                log.push(format!("pre {}", exec.call_id()));
                decision.await
            }
        });
}

/// Takes `ms` (from the call's arguments) to answer, then allows once.
struct SlowApprover(Log);

impl ApprovalService for SlowApprover {
    fn request<'life0, 'async_trait>(
        &'life0 self,
        request: ApprovalRequest,
        _cancel: CancellationToken,
    ) -> Pin<Box<dyn Future<Output = ApprovalOutcome> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        let log = self.0.clone();
        Box::pin(async move {
            log.push(format!("ask {}", request.call_id));
            tokio::time::sleep(Duration::from_millis(4)).await;
            log.push(format!("answer {}", request.call_id));
            ApprovalOutcome::AllowedOnce
        })
    }
}

#[tokio::test(start_paused = true)]
async fn pre_execute_and_approval_run_in_model_order_and_never_overlap() {
    let b = Bench::new();
    let log = Log::new();
    b.pipeline
        .capabilities()
        .provide_approval(Arc::new(SlowApprover(log.clone())));
    let pre = log.clone();
    // Slower for earlier calls: without ordering, later calls would overtake.
    logged_pre(&b, &log, "slow-policy", move |exec, _next| {
        let pre = pre.clone();
        async move {
            let wait = 10 - exec.arg("ms").and_then(|v| v.as_u64()).unwrap_or(0) / 10;
            tokio::time::sleep(Duration::from_millis(wait)).await;
            pre.push(format!("pre-done {}", exec.call_id()));
            PreDecision::ask("needs a human")
        }
    });
    let out = b
        .run(
            10,
            vec![
                work("c1", 10, true),
                work("c2", 20, true),
                work("c3", 30, true),
            ],
        )
        .await;
    assert!(out.iter().all(|o| o.is_success()), "{out:?}");
    assert_eq!(
        log.entries(),
        [
            "0 pre c1",
            "9 pre-done c1",
            "9 ask c1",
            "13 answer c1",
            "13 pre c2",
            "21 pre-done c2",
            "21 ask c2",
            "25 answer c2",
            "25 pre c3",
            "32 pre-done c3",
            "32 ask c3",
            "36 answer c3",
        ]
    );
    // Bodies overlap: each starts once its own admission is over.
    assert_eq!(b.timeline(), ["c1 13..23", "c2 25..45", "c3 36..66"]);
}

#[tokio::test(start_paused = true)]
async fn guards_are_admission_too() {
    let b = Bench::new();
    let log = Log::new();
    let seen = log.clone();
    b.pipeline
        .hooks()
        .guard_async("slow-guard", move |exec: Arc<ToolExecution>| {
            let seen = seen.clone();
            async move {
                seen.push(format!("guard {}", exec.call_id()));
                tokio::time::sleep(Duration::from_millis(2)).await;
                Ok(())
            }
        });
    b.run(10, vec![work("c1", 10, true), work("c2", 10, true)])
        .await;
    assert_eq!(log.entries(), ["0 guard c1", "2 guard c2"]);
    assert_eq!(b.timeline(), ["c1 2..12", "c2 4..14"]);
}

#[tokio::test(start_paused = true)]
async fn denials_and_panicking_policy_are_ordered_and_never_dispatched() {
    // PAR-009. tack differs (docs/design.md #4): post-execute sees every outcome of a known
    // tool, the panicking listener's call included.
    let b = Bench::new();
    let log = Log::new();
    logged_pre(&b, &log, "policy", |exec, next| async move {
        match exec.call_id().as_str() {
            "c2" => PreDecision::deny("not c2"),
            "c3" => panic!("policy blew up on c3"),
            _ => next.run(exec).await,
        }
    });
    let post = log.clone();
    b.pipeline.hooks().post_execute().tap(
        "post",
        move |record: tack_core::hooks::ExecutionRecord, next| {
            post.push(format!("post {}", record.outcome.call_id));
            next.run(record)
        },
    );
    let out = b
        .run(
            10,
            vec![
                work("c1", 10, true),
                work("c2", 10, true),
                work("c3", 10, true),
                work("c4", 10, true),
            ],
        )
        .await;
    assert_eq!(ids(&out), ["c1", "c2", "c3", "c4"]);
    assert!(out[0].is_success() && out[3].is_success());
    assert_eq!(code(&out[1]), Some(ErrorCode::Denied));
    assert_eq!(code(&out[2]), Some(ErrorCode::Internal));
    assert!(!out[1].failure_info().unwrap().dispatched());
    assert_eq!(b.timeline(), ["c1 0..10", "c4 0..10"], "only c1 and c4 ran");
    assert_eq!(
        log.entries(),
        [
            "0 pre c1",
            "0 pre c2",
            "0 post c2",
            "0 pre c3",
            "0 post c3",
            "0 pre c4",
            "10 post c1",
            "10 post c4"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn the_turn_orders_policy_without_installing_listeners() {
    // Admission is signalled by the pipeline itself (`execute_admitted`), so a
    // turn never adds a `tools/execute` listener, with or without policy.
    let b = Bench::new();
    let hooks = b.pipeline.hooks();
    let names = std::sync::Arc::new(Mutex::new(Vec::new()));
    let seen = names.clone();
    let pipeline = b.pipeline.clone();
    b.add_parallel_tool("look", "Lists the execute listeners.", move |_args, _cx| {
        seen.lock()
            .extend(pipeline.hooks().execute().listener_names(None));
        async move { Ok(serde_json::json!({})) }
    });
    b.run(10, vec![tack_core::tool::ToolCall::new("l", "look", "{}")])
        .await;
    assert!(names.lock().is_empty());
    let _policy = hooks.pre_execute().tap("p", |exec, next| next.run(exec));
    b.run(10, vec![tack_core::tool::ToolCall::new("l", "look", "{}")])
        .await;
    assert!(names.lock().is_empty(), "no listener while the turn runs");
    assert!(hooks.execute().listener_names(None).is_empty());
}
