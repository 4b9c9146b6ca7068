//! TMO-* and issue 5's timeout cases.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use tack_core::hook::{AgentId, Disposer, Order, Scope};
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService, PreDecision};
use tack_core::tool::{ErrorCode, ToolError};
use tack_test::Call;
use tack_timeout::{LISTENER_NAME, Timeout, TimeoutConfig, TimeoutConfigError};
use tokio::time::{Instant, sleep};
use tokio_util::sync::CancellationToken;

use crate::fixtures::*;
use crate::harness::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A body that never finishes and ignores its signal.
async fn hang() -> Result<serde_json::Value, ToolError> {
    futures::future::pending::<()>().await;
    Ok(json!(null))
}

/// A cooperative body: returns normally once its signal fires.
async fn cooperative(
    cx: tack_core::context::ToolRunContext,
) -> Result<serde_json::Value, ToolError> {
    cx.cancellation().cancelled().await;
    Ok(json!("stopped cleanly"))
}

fn is_timeout_provenance(out: &tack_core::tool::Outcome) -> bool {
    out.provenance
        .as_ref()
        .is_some_and(|p| p.hook == "tools/execute" && p.listener.as_deref() == Some(LISTENER_NAME))
}

// TMO-004 / issue: the declared budget is honoured; message names the budget;
// provenance names this plugin.
#[tokio::test(start_paused = true)]
async fn declared_budget_is_honoured_with_timeout_naming_the_budget() {
    let r = timed_registry([tool("slow", Some(5000), cooperative)]);
    let start = Instant::now();
    let out = call(&r, "slow").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Timeout);
    assert!(
        f.message()
            .starts_with("tool `slow` timed out after 5000 ms"),
        "{}",
        f.message()
    );
    assert!(
        !f.message().contains("abandoned"),
        "it stopped cooperatively"
    );
    assert!(f.dispatched());
    assert!(is_timeout_provenance(&out), "{out:?}");
    assert_eq!(
        start.elapsed(),
        ms(5000),
        "ended at the deadline, not after the grace"
    );
}

// TMO-001: no declared budget, no default: untouched, body sees the caller's signal.
#[tokio::test(start_paused = true)]
async fn undeclared_tool_is_untouched_and_sees_the_callers_signal() {
    let r = timed_registry([tool("free", None, |cx| async move {
        sleep(Duration::from_secs(3600)).await;
        // Cancelling the body's token cancels the caller's only if they are the same token.
        cx.cancellation().cancel();
        Ok(json!("done"))
    })]);
    let caller = CancellationToken::new();
    let out = call_with(&r, "free", caller.clone()).await;
    assert!(out.is_success(), "{out:?}");
    assert!(caller.is_cancelled(), "the body had the caller's own token");
}

// A budgeted body gets a child token: cancelling it does not reach the caller,
// and after a timeout the caller's token is untouched (later stages see it).
#[tokio::test(start_paused = true)]
async fn budgeted_body_gets_a_child_token_and_the_caller_token_is_untouched() {
    let r = timed_registry([
        tool("child", Some(1000), |cx| async move {
            cx.cancellation().cancel();
            Ok(json!("done"))
        }),
        tool("slow", Some(100), cooperative),
    ]);
    let caller = CancellationToken::new();
    let out = call_with(&r, "child", caller.clone()).await;
    assert!(out.is_success(), "{out:?}");
    assert!(!caller.is_cancelled());
    let out = r
        .call(Call::raw("slow", "{}").id("d").cancellation(caller.clone()))
        .await
        .outcome()
        .clone();
    assert_eq!(failure(&out).code(), ErrorCode::Timeout);
    assert!(
        !caller.is_cancelled(),
        "the deadline cancels only the child"
    );
}

// TMO-008: stages outside the wrapper (an outer wrapper, post-execute) see the caller's token.
#[tokio::test(start_paused = true)]
async fn outer_stages_see_the_callers_token_not_the_deadline() {
    let r = timed_registry([tool("slow", Some(100), cooperative)]);
    let outer_saw_cancelled = Arc::new(AtomicBool::new(true));
    let seen = outer_saw_cancelled.clone();
    // Placed outside the timeout by name, whatever its priority.
    let _outer = r
        .hooks()
        .execute()
        .tap_with("outer", Order::before(LISTENER_NAME), move |req, next| {
            let seen = seen.clone();
            async move {
                let token = req.cancellation().clone();
                let out = next.run(req).await;
                seen.store(token.is_cancelled(), Ordering::SeqCst);
                out
            }
        })
        .unwrap();
    assert_eq!(
        r.hooks().execute().listener_names(None),
        [Arc::<str>::from("outer"), Arc::from(LISTENER_NAME)]
    );
    let out = call(&r, "slow").await;
    assert_eq!(failure(&out).code(), ErrorCode::Timeout);
    assert!(
        !outer_saw_cancelled.load(Ordering::SeqCst),
        "the outer stage's token never fired"
    );
}

// TMO-002: a fast tool with a budget keeps its result.
#[tokio::test(start_paused = true)]
async fn fast_tool_with_budget_keeps_its_result() {
    let r = timed_registry([tool("fast", Some(10_000), |_cx| async { Ok(json!("ok")) })]);
    let out = call(&r, "fast").await;
    assert_eq!(out.value().unwrap(), &json!("ok"));
    assert_eq!(out.provenance, None, "the body's own result");
}

// A body that finishes just before the deadline keeps its result.
#[tokio::test(start_paused = true)]
async fn body_finishing_just_before_the_deadline_keeps_its_result() {
    let r = timed_registry([tool("edge", Some(1000), |_cx| async {
        sleep(ms(999)).await;
        Ok(json!("made it"))
    })]);
    let out = call(&r, "edge").await;
    assert_eq!(out.value().unwrap(), &json!("made it"), "{out:?}");
}

// Ceiling clamps a declared budget (and a default one).
#[tokio::test(start_paused = true)]
async fn ceiling_clamps_the_declared_budget() {
    let policy = Timeout::new(TimeoutConfig::default().ceiling(ms(250))).unwrap();
    let r = timed_registry_with([tool("long", Some(60_000), cooperative)], policy);
    let start = Instant::now();
    let out = call(&r, "long").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Timeout);
    assert!(
        f.message().contains("timed out after 250 ms"),
        "{}",
        f.message()
    );
    assert_eq!(start.elapsed(), ms(250));
}

// Default budget applies to undeclared tools when configured.
#[tokio::test(start_paused = true)]
async fn default_budget_applies_to_undeclared_tools_when_configured() {
    let policy = Timeout::new(TimeoutConfig::default().default_budget(ms(300))).unwrap();
    let r = timed_registry_with([tool("free", None, cooperative)], policy);
    let out = call(&r, "free").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Timeout);
    assert!(f.message().contains("after 300 ms"), "{}", f.message());
}

// Caller cancels first: CANCELLED, not TIMEOUT.
#[tokio::test(start_paused = true)]
async fn caller_cancel_before_the_deadline_is_cancelled_not_timeout() {
    let r = timed_registry([tool("slow", Some(1000), |cx| async move {
        cx.cancellation().cancelled().await;
        Err(ToolError::cancelled("stopped on request"))
    })]);
    let out = call_cancelled_after(&r, "slow", ms(400)).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Cancelled, "{out:?}");
    assert_eq!(
        f.message(),
        "stopped on request",
        "the body's own answer stands"
    );
}

// Caller cancels first and the body ignores it: abandoned after the grace, still CANCELLED.
#[tokio::test(start_paused = true)]
async fn caller_cancel_with_a_hung_body_is_cancelled_after_the_grace() {
    let r = timed_registry([tool("hung", Some(1000), |_cx| hang())]);
    let start = Instant::now();
    let out = call_cancelled_after(&r, "hung", ms(400)).await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Cancelled, "{out:?}");
    assert!(f.message().contains("abandoned"), "{}", f.message());
    assert!(f.dispatched());
    assert_eq!(start.elapsed(), ms(400) + ms(2000));
}

// TMO-007: the deadline wins, then the caller cancels during the grace: TIMEOUT stands.
#[tokio::test(start_paused = true)]
async fn deadline_first_then_caller_cancel_is_timeout() {
    let r = timed_registry([tool("slow", Some(100), |cx| async move {
        cx.cancellation().cancelled().await;
        sleep(ms(500)).await; // cleanup, during which the caller gives up
        Err(ToolError::cancelled("cleaned up"))
    })]);
    let out = call_cancelled_after(&r, "slow", ms(300)).await;
    assert_eq!(failure(&out).code(), ErrorCode::Timeout, "{out:?}");
    assert!(is_timeout_provenance(&out));
}

// Tack differs from TMO-009 (docs/design.md, difference 6): a body that ignores its signal is
// abandoned after the grace period, and the pipeline does not hang.
#[tokio::test(start_paused = true)]
async fn body_ignoring_the_signal_is_abandoned_after_the_grace_period() {
    let dropped = Arc::new(AtomicBool::new(false));
    struct DropFlag(Arc<AtomicBool>);
    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let flag = dropped.clone();
    let policy = Timeout::new(TimeoutConfig::default().grace(ms(700))).unwrap();
    let r = timed_registry_with(
        [tool("hung", Some(100), move |_cx| {
            let guard = DropFlag(flag.clone());
            async move {
                let _guard = guard;
                hang().await
            }
        })],
        policy,
    );
    let start = Instant::now();
    // If the wrapper waited for the body this would never finish; the outer
    // timeout turns a hang into a test failure instead of a hung test.
    let out = tokio::time::timeout(Duration::from_secs(3600), call(&r, "hung"))
        .await
        .expect("the pipeline hung on a body that ignores its signal");
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Timeout);
    assert!(
        f.message().contains("timed out after 100 ms"),
        "{}",
        f.message()
    );
    assert!(
        f.message()
            .contains("700 ms grace period and was abandoned"),
        "{}",
        f.message()
    );
    assert_eq!(start.elapsed(), ms(800));
    assert!(
        dropped.load(Ordering::SeqCst),
        "the body's future was dropped"
    );
}

// TMO-004: a cooperative body's late result is replaced by TIMEOUT.
#[tokio::test(start_paused = true)]
async fn cooperative_result_after_the_deadline_is_replaced() {
    let r = timed_registry([tool("coop", Some(100), cooperative)]);
    let out = call(&r, "coop").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Timeout);
    assert!(f.message().contains("timed out after 100 ms"));
}

struct SlowApprover;
#[async_trait]
impl ApprovalService for SlowApprover {
    async fn request(&self, _: ApprovalRequest, _: CancellationToken) -> ApprovalOutcome {
        sleep(Duration::from_secs(30)).await;
        ApprovalOutcome::AllowedOnce
    }
}

// Time waiting for approval never counts against the budget.
#[tokio::test(start_paused = true)]
async fn approval_wait_does_not_count_against_the_budget() {
    let mut r = registry([tool("work", Some(1000), |_cx| async {
        sleep(ms(800)).await;
        Ok(json!("done"))
    })]);
    let _ask = r
        .hooks()
        .pre_execute()
        .tap("ask", |_e, _n| async { PreDecision::ask("needs a person") });
    let _svc = r.capabilities().provide_approval(Arc::new(SlowApprover));
    r.install().unwrap();
    let start = Instant::now();
    let out = call(&r, "work").await;
    assert_eq!(out.value().unwrap(), &json!("done"), "{out:?}");
    assert_eq!(start.elapsed(), Duration::from_secs(30) + ms(800));
}

// TMO-010: the budget comes from the definition visible to the calling agent.
#[tokio::test(start_paused = true)]
async fn budget_comes_from_the_agents_visible_definition() {
    let mut r = registry([tool("t", Some(10_000), cooperative)]);
    let a = AgentId::new("a");
    r.register_in(Scope::Agent(a.clone()), &tool("t", Some(50), cooperative))
        .unwrap();
    r.install().unwrap();
    let out = r
        .call(Call::raw("t", "{}").id("c").agent(a))
        .await
        .outcome()
        .clone();
    assert!(failure(&out).message().contains("after 50 ms"), "{out:?}");
    let start = Instant::now();
    let out = call(&r, "t").await;
    assert!(
        failure(&out).message().contains("after 10000 ms"),
        "{out:?}"
    );
    assert_eq!(start.elapsed(), ms(10_000));
}

// TMO-011: once unloaded, bodies see the caller's signal again and no deadline applies.
#[tokio::test(start_paused = true)]
async fn unloading_stops_the_wrapping() {
    let mut r = timed_registry([tool("t", Some(100), |cx| async move {
        sleep(ms(500)).await;
        cx.cancellation().cancel();
        Ok(json!("done"))
    })]);
    let first = call(&r, "t").await;
    assert_eq!(failure(&first).code(), ErrorCode::Timeout);
    r.uninstall();
    assert_eq!(r.hooks().execute().listener_count(), 0);
    let caller = CancellationToken::new();
    let out = call_with(&r, "t", caller.clone()).await;
    assert!(out.is_success(), "{out:?}");
    assert!(
        caller.is_cancelled(),
        "the body had the caller's own token again"
    );
}

// Ordering: timeout outside a retry covers the whole retry.
#[tokio::test(start_paused = true)]
async fn timeout_outside_a_retry_covers_all_attempts() {
    let r = timed_registry([tool("flaky", Some(1000), |cx| async move {
        tokio::select! {
            () = sleep(ms(400)) => Err(ToolError::new("flaked")),
            () = cx.cancellation().cancelled() => Err(ToolError::cancelled("stopped")),
        }
    })]);
    // A retry wrapper at NORMAL priority is inside the EARLY timeout.
    let _retry = r.hooks().execute().tap("retry", |req, next| async move {
        // Three attempts of 400 ms each would take 1200 ms: the budget ends it.
        let mut out = None;
        for _ in 0..3 {
            if req.cancellation().is_cancelled() {
                break;
            }
            let body = req.clone().run_body().await;
            if body.result().is_ok() {
                return body;
            }
            out = Some(body);
        }
        drop(next);
        out.unwrap()
    });
    let start = Instant::now();
    let out = call(&r, "flaky").await;
    assert_eq!(failure(&out).code(), ErrorCode::Timeout, "{out:?}");
    assert_eq!(start.elapsed(), ms(1000));
}

fn execute_names(r: &Timed) -> Vec<String> {
    r.hooks()
        .execute()
        .listener_names(None)
        .iter()
        .map(|n| n.to_string())
        .collect()
}

// Ordering by name: the timeout goes inside or outside a named wrapper
// without anyone picking a priority number.
#[test]
fn the_timeout_is_placed_by_name() {
    /// The plugin under `policy`, not installed yet, next to a `retry` and a
    /// `log` wrapper at the default priority.
    fn with_wrappers(policy: Timeout) -> (Timed, [Disposer; 2]) {
        let r = registry_with([], policy);
        let retry = r.hooks().execute().tap("retry", |req, next| next.run(req));
        let log = r.hooks().execute().tap("log", |req, next| next.run(req));
        (r, [retry, log])
    }

    // Default: outside every wrapper at the default priority.
    let (mut r, _wrappers) = with_wrappers(Timeout::default());
    r.install().unwrap();
    assert_eq!(execute_names(&r), ["timeout", "retry", "log"]);
    r.uninstall();
    assert_eq!(execute_names(&r), ["retry", "log"]);

    // Inside the retry (whose attempts all count against the call deadline).
    let (mut r, _wrappers) =
        with_wrappers(Timeout::new(TimeoutConfig::default().after("retry")).unwrap());
    r.install().unwrap();
    assert_eq!(execute_names(&r), ["retry", "timeout", "log"]);
    r.uninstall();

    let between = Timeout::new(TimeoutConfig::default().after("retry").before("log")).unwrap();
    let (mut r, _wrappers) = with_wrappers(between);
    r.install().unwrap();
    assert_eq!(execute_names(&r), ["retry", "timeout", "log"]);
    r.uninstall();
    assert_eq!(execute_names(&r), ["retry", "log"]);
}

#[test]
fn placing_the_timeout_next_to_a_missing_wrapper_fails_the_install() {
    let policy = Timeout::new(TimeoutConfig::default().after("retry")).unwrap();
    let mut r = registry_with([], policy);
    let err = r.install().unwrap_err();
    assert!(
        matches!(err, tack_core::plugin::PluginError::Order { .. }),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("no listener named `retry`") && text.contains("register `retry` first"),
        "{text}"
    );
    assert_eq!(r.hooks().execute().listener_count(), 0, "nothing installed");
}

#[test]
fn invalid_configs_are_refused() {
    assert_eq!(
        Timeout::new(TimeoutConfig::default().ceiling(Duration::ZERO)),
        Err(TimeoutConfigError::Zero { what: "ceiling" })
    );
    assert!(matches!(
        Timeout::new(
            TimeoutConfig::default()
                .default_budget(ms(10))
                .ceiling(ms(5))
        ),
        Err(TimeoutConfigError::DefaultAboveCeiling { .. })
    ));
    let err = Timeout::new(TimeoutConfig::default().default_budget(Duration::ZERO)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the timeout default budget must be greater than zero"
    );
}

#[test]
fn the_factory_is_registered() {
    let f = tack_core::host::find_plugin("timeout").unwrap();
    assert_eq!(f.create().name(), "timeout");
}

/// A retry outside the timeout: runs the rest of the chain (the timeout
/// wrapper and the body) once more when it ends in `TIMEOUT`.
fn retry_outside_the_timeout(r: &Timed) -> Disposer {
    r.hooks()
        .execute()
        .tap_with(
            "retry",
            Order::before(LISTENER_NAME),
            |req, next| async move {
                let again = next.fork();
                let first = next.run(req.clone()).await;
                match first.result() {
                    Err(e) if e.code() == ErrorCode::Timeout => again.run(req).await,
                    _ => first,
                }
            },
        )
        .unwrap()
}

// A retry that runs the timeout again gets the time the first attempt left,
// not a new budget: a body that reports its own TIMEOUT after 30 ms and then
// runs until stopped ends at the call's 100 ms deadline, not at 130 ms.
#[tokio::test(start_paused = true)]
async fn a_retry_around_the_timeout_gets_only_the_time_left() {
    let attempts = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counted = attempts.clone();
    let r = timed_registry([tool("flaky", Some(100), move |cx| {
        let attempt = counted.fetch_add(1, Ordering::SeqCst);
        async move {
            if attempt == 0 {
                sleep(ms(30)).await;
                return Err(ToolError::timeout("upstream timed out"));
            }
            cooperative(cx).await
        }
    })]);
    let _retry = retry_outside_the_timeout(&r);
    let start = Instant::now();
    let out = call(&r, "flaky").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Timeout);
    assert!(
        f.message()
            .starts_with("tool `flaky` timed out after 100 ms"),
        "{}",
        f.message()
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 2, "the body ran twice");
    assert_eq!(
        start.elapsed(),
        ms(100),
        "the second attempt had 70 ms, not 100"
    );
}

// When the deadline itself ended the first attempt, a retry has no time left:
// the body does not start again, and the call ends at its deadline.
#[tokio::test(start_paused = true)]
async fn a_retry_after_the_deadline_does_not_start_the_body_again() {
    let attempts = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counted = attempts.clone();
    let r = timed_registry([tool("slow", Some(100), move |cx| {
        counted.fetch_add(1, Ordering::SeqCst);
        cooperative(cx)
    })]);
    let _retry = retry_outside_the_timeout(&r);
    let start = Instant::now();
    let out = call(&r, "slow").await;
    let f = failure(&out);
    assert_eq!(f.code(), ErrorCode::Timeout);
    assert!(f.message().contains("it did not start"), "{}", f.message());
    assert_eq!(attempts.load(Ordering::SeqCst), 1, "no second start");
    assert_eq!(start.elapsed(), ms(100));
}

// A retry that succeeds: the second attempt's answer is the call's outcome.
#[tokio::test(start_paused = true)]
async fn a_retry_around_the_timeout_returns_the_second_attempts_answer() {
    let attempts = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counted = attempts.clone();
    let r = timed_registry([tool("flaky", Some(100), move |_cx| {
        let attempt = counted.fetch_add(1, Ordering::SeqCst);
        async move {
            sleep(ms(20)).await;
            if attempt == 0 {
                return Err(ToolError::timeout("upstream timed out"));
            }
            Ok(json!("answered"))
        }
    })]);
    let _retry = retry_outside_the_timeout(&r);
    let out = call(&r, "flaky").await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
}

/// The wrapper's default place: `Order::EARLY`, outside a `tools/execute`
/// listener of the normal rank even one registered before it (so its
/// deadline covers that listener's work too).
#[test]
fn the_wrapper_goes_outside_normal_wrappers_by_default() {
    use tack_core::plugin::PluginFn;
    use tack_pipeline::PluginSet;

    let set = PluginSet::new()
        .with(PluginFn::new("retry", |cx| {
            cx.hooks().execute().tap("retry", |req, next| next.run(req));
            Ok(())
        }))
        .with(Timeout::default())
        .build()
        .unwrap();
    let names: Vec<String> = set
        .pipeline
        .hooks()
        .execute()
        .listener_names(None)
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert_eq!(names, [LISTENER_NAME, "retry"]);
    assert_eq!(Timeout::default().order(), &Order::EARLY);
}
