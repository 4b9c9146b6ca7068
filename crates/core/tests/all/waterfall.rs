//! Waterfall hook points: chain semantics, order, scope, snapshots, disposal, failure.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use tack_core::hook::{AgentId, Disposer, Next, Order, Provenance, Waterfall, WaterfallListener};
use tack_core::host::HookError;

type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

/// A hook whose default records "default" and returns the input.
fn echo_hook(log: &Log) -> Waterfall<String, String> {
    let log = log.clone();
    Waterfall::new("test/echo", move |input: String| {
        log.lock().push("default".to_owned());
        async move { input }
    })
}

/// A pass-through listener that records its name.
/// (`hook` may be a handle scoped to an agent.)
fn recorder(hook: &Waterfall<String, String>, name: &str, log: &Log) -> Disposer {
    recorder_at(hook, name, Order::NORMAL, log)
}

/// [`recorder`] placed by `order`.
fn recorder_at(hook: &Waterfall<String, String>, name: &str, order: Order, log: &Log) -> Disposer {
    let log = log.clone();
    let logged = name.to_owned();
    hook.tap_with(name, order, move |input, next| {
        log.lock().push(logged.clone());
        next.run(input)
    })
    .unwrap()
}

#[tokio::test]
async fn with_no_listener_the_default_answers() {
    let log = log();
    let hook = echo_hook(&log);
    assert_eq!(hook.dispatch(None, "x".into()).await.unwrap(), "x");
    assert_eq!(*log.lock(), ["default"]);
}

#[tokio::test]
async fn a_listener_can_short_circuit_delegate_rewrite_and_transform() {
    let log = log();
    let hook = echo_hook(&log);

    let short = hook.tap("short", |input: String, next| async move {
        if input == "stop" {
            return "stopped".to_owned(); // never calls next
        }
        next.run(input).await
    });
    let _rewrite = hook.tap("rewrite", |input: String, next| {
        next.run(input.replace('a', "b"))
    });
    let _transform = hook.tap("transform", |input, next| async move {
        next.run(input).await + "!"
    });

    assert_eq!(hook.dispatch(None, "stop".into()).await.unwrap(), "stopped");
    assert!(log.lock().is_empty(), "short-circuit skipped the default");
    assert_eq!(hook.dispatch(None, "abc".into()).await.unwrap(), "bbc!");
    short.dispose();
    assert_eq!(hook.dispatch(None, "stop".into()).await.unwrap(), "stop!");
}

#[tokio::test]
async fn order_is_priority_then_registration() {
    let log = log();
    let hook = echo_hook(&log);
    let _a = recorder(&hook, "a-normal-1st", &log);
    let _b = recorder_at(&hook, "b-late", Order::LATE, &log);
    let _c = recorder_at(&hook, "c-early", Order::EARLY, &log);
    let _d = recorder(&hook, "d-normal-2nd", &log);
    let _e = recorder_at(&hook, "e-early-2nd", Order::EARLY, &log);

    hook.dispatch(None, "x".into()).await.unwrap();
    assert_eq!(
        *log.lock(),
        [
            "c-early",
            "e-early-2nd",
            "a-normal-1st",
            "d-normal-2nd",
            "b-late",
            "default"
        ]
    );
    let names: Vec<String> = hook
        .listener_names(None)
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert_eq!(
        names,
        [
            "c-early",
            "e-early-2nd",
            "a-normal-1st",
            "d-normal-2nd",
            "b-late"
        ]
    );
}

#[tokio::test]
async fn the_outermost_listener_sees_the_output_last() {
    let hook: Waterfall<(), String> = Waterfall::new("test/wrap", |_| async { "core".to_owned() });
    let _inner = hook.tap("inner", |i, next| async move {
        format!("inner({})", next.run(i).await)
    });
    let _outer = hook
        .tap_with("outer", Order::ranked(1), |i, next| async move {
            format!("outer({})", next.run(i).await)
        })
        .unwrap();
    assert_eq!(hook.dispatch(None, ()).await.unwrap(), "outer(inner(core))");
}

#[tokio::test]
async fn a_dispatch_for_agent_a_reaches_global_and_a_never_b() {
    let log = log();
    let hook = echo_hook(&log);
    let a = AgentId::new("a");
    let b = AgentId::new("b");
    let _g = recorder(&hook, "global", &log);
    let _a = recorder(&hook.for_agent(&a), "only-a", &log);
    let _b = recorder(&hook.for_agent(b.clone()), "only-b", &log);

    hook.dispatch(Some(&a), "x".into()).await.unwrap();
    assert_eq!(*log.lock(), ["global", "only-a", "default"]);
    log.lock().clear();

    hook.dispatch(Some(&b), "x".into()).await.unwrap();
    assert_eq!(*log.lock(), ["global", "only-b", "default"]);
    log.lock().clear();

    hook.dispatch(None, "x".into()).await.unwrap();
    assert_eq!(*log.lock(), ["global", "default"]);
    log.lock().clear();

    // An agent id equal by text (not by pointer) is the same agent.
    hook.dispatch(Some(&AgentId::new("a")), "x".into())
        .await
        .unwrap();
    assert_eq!(*log.lock(), ["global", "only-a", "default"]);
}

#[tokio::test]
async fn registering_during_a_dispatch_affects_only_later_dispatches() {
    let log = log();
    let hook = echo_hook(&log);
    let late: Arc<Mutex<Vec<Disposer>>> = Arc::default();
    let (hook2, log2, late2) = (hook.clone(), log.clone(), late.clone());
    let _adder = hook.tap("adder", move |input, next| {
        let d = recorder(&hook2, "added", &log2);
        late2.lock().push(d);
        next.run(input)
    });

    hook.dispatch(None, "x".into()).await.unwrap();
    assert_eq!(
        *log.lock(),
        ["default"],
        "the listener added mid-dispatch did not run"
    );
    log.lock().clear();
    hook.dispatch(None, "x".into()).await.unwrap();
    assert_eq!(
        *log.lock(),
        ["added", "default"],
        "it runs in the next dispatch"
    );
}

#[tokio::test]
async fn disposing_during_a_dispatch_affects_only_later_dispatches() {
    let log = log();
    let hook = echo_hook(&log);
    let victim: Arc<OnceLock<Disposer>> = Arc::default();
    let v = victim.clone();
    let _killer = hook.tap("killer", move |input, next| {
        if let Some(d) = v.get() {
            d.dispose();
        }
        next.run(input)
    });
    victim.set(recorder(&hook, "victim", &log)).unwrap();

    hook.dispatch(None, "x".into()).await.unwrap();
    assert_eq!(
        *log.lock(),
        ["victim", "default"],
        "the snapshot still held the victim"
    );
    log.lock().clear();
    hook.dispatch(None, "x".into()).await.unwrap();
    assert_eq!(*log.lock(), ["default"]);
}

#[tokio::test]
async fn a_listener_can_dispose_itself_while_it_runs() {
    let calls = Arc::new(AtomicUsize::new(0));
    let hook: Waterfall<u32, u32> = Waterfall::new("test/self", |x| async move { x });
    let me: Arc<OnceLock<Disposer>> = Arc::default();
    let (me2, calls2) = (me.clone(), calls.clone());
    let disposer = hook.tap("once", move |x, next| {
        calls2.fetch_add(1, Ordering::SeqCst);
        me2.get().expect("set before dispatch").dispose(); // no deadlock
        next.run(x + 1)
    });
    me.set(disposer).unwrap();
    assert_eq!(hook.dispatch(None, 1).await.unwrap(), 2);
    assert_eq!(hook.dispatch(None, 1).await.unwrap(), 1);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(me.get().unwrap().is_disposed());
}

#[tokio::test]
async fn disposing_twice_or_after_the_hook_is_gone_is_harmless() {
    let hook: Waterfall<u32, u32> = Waterfall::new("test/twice", |x| async move { x });
    let d = hook.tap("x", |x, next| next.run(x * 10));
    assert_eq!(hook.listener_count(), 1);
    d.dispose();
    d.dispose();
    assert_eq!(hook.listener_count(), 0);

    let d2 = hook.tap("y", |x, next| next.run(x));
    drop(hook);
    d2.dispose(); // the list is gone: nothing to do, no panic
}

#[tokio::test]
async fn only_dispose_removes_a_listener_dropping_its_disposer_keeps_it() {
    let hook: Waterfall<u32, u32> = Waterfall::new("test/drop", |x| async move { x });
    let removed = hook.tap("removed", |x, next| next.run(x + 1));
    assert_eq!(hook.dispatch(None, 0).await.unwrap(), 1);
    removed.dispose();
    assert_eq!(hook.dispatch(None, 0).await.unwrap(), 0);
    {
        let _scoped = hook.tap("scoped", |x, next| next.run(x + 5));
    }
    hook.tap("forever", |x, next| next.run(x + 10));
    assert_eq!(hook.dispatch(None, 0).await.unwrap(), 15);
}

#[tokio::test]
async fn a_panicking_listener_is_an_error_naming_it_never_the_default() {
    let log = log();
    let hook = echo_hook(&log);
    let _ok = recorder(&hook, "fine", &log);
    let _bad = hook.tap("bad", |_input: String, _next| async move {
        panic!("listener bug");
    });
    let err = hook.dispatch(None, "x".into()).await.unwrap_err();
    assert_eq!(
        err,
        HookError::ListenerPanicked {
            hook: "test/echo",
            listener: "bad".into(),
            message: "listener bug".into()
        }
    );
    assert_eq!(err.listener(), Some("bad"));
    assert!(
        !log.lock().contains(&"default".to_owned()),
        "the default never ran"
    );
}

#[tokio::test]
async fn a_panic_while_calling_the_listener_is_caught_too() {
    let hook: Waterfall<u32, u32> = Waterfall::new("test/sync-panic", |x| async move { x });
    let _bad = hook.tap("sync-bad", |x: u32, next| {
        if x > 0 {
            panic!("before any future exists");
        }
        next.run(x)
    });
    let err = hook.dispatch(None, 1).await.unwrap_err();
    assert_eq!(err.listener(), Some("sync-bad"));
    assert_eq!(err.message(), "before any future exists");
}

#[tokio::test]
async fn the_innermost_panicking_listener_is_named_not_its_callers() {
    let hook: Waterfall<u32, u32> = Waterfall::new("test/nested", |x| async move { x });
    let _outer = hook.tap("outer", |x, next| async move { next.run(x).await + 1 });
    let _inner = hook.tap("inner", |x: u32, next| async move {
        tokio::task::yield_now().await;
        if x > 0 {
            panic!("inner bug");
        }
        next.run(x).await
    });
    let err = hook.dispatch(None, 1).await.unwrap_err();
    assert_eq!(err.listener(), Some("inner"));
}

#[tokio::test]
async fn a_panicking_default_is_reported_as_such() {
    let hook: Waterfall<u32, u32> = Waterfall::new("test/default-panic", |_x| async move {
        panic!("body exploded");
    });
    let _pass = hook.tap("pass", |x, next| next.run(x));
    let err = hook.dispatch(None, 1).await.unwrap_err();
    assert_eq!(
        err,
        HookError::DefaultPanicked {
            hook: "test/default-panic",
            message: "body exploded".into()
        }
    );
    assert_eq!(err.listener(), None);
}

#[tokio::test]
async fn an_outer_listener_cannot_hide_an_inner_panic() {
    use futures::FutureExt;
    use std::panic::AssertUnwindSafe;

    let hook: Waterfall<u32, &'static str> = Waterfall::new("test/hide", |_| async { "default" });
    let _hider = hook.tap("hider", |x, next| async move {
        AssertUnwindSafe(next.run(x))
            .catch_unwind()
            .await
            .unwrap_or("allow (panic swallowed)")
    });
    let _bad = hook.tap("bad", |_x, _next| async move { panic!("inner") });
    let err = hook.dispatch(None, 1).await.unwrap_err();
    assert_eq!(err.listener(), Some("bad"), "the failure stands: {err}");
}

#[tokio::test]
async fn provenance_names_the_listener_that_created_the_output() {
    #[derive(Debug)]
    struct Decision {
        text: &'static str,
        by: Option<Provenance>,
    }
    let hook: Waterfall<u32, Decision> = Waterfall::new("test/prov", |_| async {
        Decision {
            text: "default",
            by: None,
        }
    })
    .with_provenance(|d: &mut Decision| Some(&mut d.by));
    let _pass = hook.tap("pass-through", |x, next| next.run(x));
    let _decider = hook.tap("decider", |x: u32, next| async move {
        if x == 1 {
            Decision {
                text: "decided",
                by: None,
            }
        } else {
            next.run(x).await
        }
    });
    let _pass2 = hook.tap("pass-through-2", |x, next| next.run(x));

    let decided = hook.dispatch(None, 1).await.unwrap();
    assert_eq!(decided.text, "decided");
    assert_eq!(
        decided.by,
        Some(Provenance::listener("test/prov", "decider"))
    );

    let defaulted = hook.dispatch(None, 2).await.unwrap();
    assert_eq!(defaulted.text, "default");
    assert_eq!(
        defaulted.by.unwrap().listener,
        None,
        "pass-throughs take no credit"
    );
}

struct AddN(u32);

impl WaterfallListener<u32, u32> for AddN {
    async fn call(&self, input: u32, next: Next<u32, u32>) -> u32 {
        tokio::task::yield_now().await;
        next.run(input + self.0).await
    }
}

#[tokio::test]
async fn typed_listeners_work_like_closures() {
    let hook: Waterfall<u32, u32> = Waterfall::new("test/typed", |x| async move { x });
    let _one = hook.register("one", AddN(1));
    let _ten = hook.register("ten", AddN(10));
    assert_eq!(hook.dispatch(None, 0).await.unwrap(), 11);
}

#[tokio::test]
async fn next_knows_its_hook() {
    let hook: Waterfall<(), String> = Waterfall::new("test/next", |_| async { String::new() });
    let _l = hook.tap("l", |_, next: Next<(), String>| async move {
        next.hook_name().to_owned()
    });
    assert_eq!(
        hook.dispatch(Some(&AgentId::new("a")), ()).await.unwrap(),
        "test/next"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dispatches_are_spawnable_and_survive_concurrent_registration() {
    let hook: Waterfall<u64, u64> = Waterfall::new("test/stress", |x| async move { x });
    let _base = hook.tap("base", |x, next| next.run(x + 1));
    let churn = {
        let hook = hook.clone();
        tokio::spawn(async move {
            for i in 0..500u64 {
                let d = hook.tap(format!("churn-{i}"), |x, next| next.run(x));
                tokio::task::yield_now().await;
                d.dispose();
            }
        })
    };
    let mut tasks = Vec::new();
    for i in 0..1000u64 {
        tasks.push(tokio::spawn(hook.dispatch(None, i)));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        assert_eq!(task.await.unwrap().unwrap(), i as u64 + 1);
    }
    churn.await.unwrap();
    assert_eq!(hook.listener_count(), 1);
}

#[test]
fn dispose_from_another_thread_while_dispatching_does_not_deadlock() {
    let hook: Waterfall<u32, u32> = Waterfall::new("test/threads", |x| async move { x });
    let disposers: Vec<Disposer> = (0..64)
        .map(|i| hook.tap(format!("l{i}"), |x, next| next.run(x)))
        .collect();
    let h = hook.clone();
    let dispatcher = std::thread::spawn(move || {
        for _ in 0..200 {
            futures::executor::block_on(h.dispatch(None, 1)).unwrap();
        }
    });
    let disposer_thread = std::thread::spawn(move || {
        for d in &disposers {
            d.dispose();
        }
    });
    dispatcher.join().unwrap();
    disposer_thread.join().unwrap();
    assert_eq!(hook.listener_count(), 0);
}

/// Runs `f` on its own thread and fails (instead of hanging the suite) if it
/// has not returned within a minute: a deadlock guard, not a speed check.
fn finishes(what: &str, f: impl FnOnce() + Send + 'static) {
    let (done, finished) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        f();
        let _ = done.send(());
    });
    match finished.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(()) => {}
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("{what}: deadlocked"),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            // `f` panicked: report its panic.
            if let Err(panic) = thread.join() {
                std::panic::resume_unwind(panic);
            }
        }
    }
}

#[test]
fn a_listener_that_owns_a_disposer_of_its_own_hook_can_be_disposed() {
    // The main listener owns the companion's disposer. Disposing the main
    // listener drops it (after the list's lock is released) and leaves the
    // companion registered — dropping a disposer undoes nothing — until the
    // companion is disposed, which then finds its own hook unlocked.
    finishes("disposing a listener that owns a disposer", || {
        let log = log();
        let hook = echo_hook(&log);
        let companion = Arc::new(recorder(&hook, "companion", &log));
        let owned = companion.clone();
        let main = hook.tap("main", move |input: String, next| {
            let _owned = owned.clone();
            next.run(input)
        });
        assert_eq!(hook.listener_count(), 2);
        main.dispose();
        assert_eq!(hook.listener_count(), 1, "the companion stays");
        companion.dispose();
        assert_eq!(hook.listener_count(), 0);
        // A refused ordered registration that owns a disposer drops it
        // without hanging too.
        let kept = recorder(&hook, "kept", &log);
        let owned = Arc::new(recorder(&hook, "owned", &log));
        let refused = hook.tap_with(
            "refused",
            tack_core::hook::Order::after("kept").and_before("kept"),
            move |input: String, next| {
                let _owned = owned.clone();
                next.run(input)
            },
        );
        assert!(refused.is_err());
        assert_eq!(
            hook.listener_count(),
            2,
            "`kept`, and `owned`: nothing disposed it"
        );
        kept.dispose();
    });
}

// A fork of `next` runs the rest of the chain again: every listener after the
// forking one, and the default, once per run; the listeners before it once.
#[tokio::test]
async fn a_forked_next_runs_the_rest_of_the_chain_again() {
    let log = log();
    let hook = echo_hook(&log);
    let _outer = recorder_at(&hook, "outer", Order::EARLY, &log);
    let retry_log = log.clone();
    let _retry = hook.tap("retry", move |input: String, next| {
        let log = retry_log.clone();
        async move {
            log.lock().push("retry".to_owned());
            let again = next.fork();
            let first = next.run(format!("{input}-1")).await;
            let second = again.run(format!("{input}-2")).await;
            format!("{first}+{second}")
        }
    });
    let _inner = recorder_at(&hook, "inner", Order::LATE, &log);
    assert_eq!(hook.dispatch(None, "x".into()).await.unwrap(), "x-1+x-2");
    assert_eq!(
        *log.lock(),
        ["outer", "retry", "inner", "default", "inner", "default"]
    );
}
