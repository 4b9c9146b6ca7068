//! Disposers and bags.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;
use tack_core::hook::Disposer;
use tack_core::host::Disposables;

fn counting(counter: &Arc<AtomicUsize>) -> Disposer {
    let c = counter.clone();
    Disposer::new(move || {
        c.fetch_add(1, Ordering::SeqCst);
    })
}

#[test]
fn dispose_runs_once_whatever_happens() {
    let n = Arc::new(AtomicUsize::new(0));
    let d = counting(&n);
    assert!(!d.is_disposed());
    d.dispose();
    d.dispose();
    drop(d);
    assert_eq!(n.load(Ordering::SeqCst), 1);
}

#[test]
fn dropping_undoes_nothing_only_dispose_does() {
    let n = Arc::new(AtomicUsize::new(0));
    drop(counting(&n));
    let _ = counting(&n);
    assert_eq!(n.load(Ordering::SeqCst), 0);
    let bag = Disposables::new();
    bag.add(counting(&n));
    drop(bag);
    assert_eq!(n.load(Ordering::SeqCst), 0, "nor does dropping a bag");
    assert!(Disposer::noop().is_disposed());
}

// A host's registration stays until it is disposed: `let _ =` — the line
// rustc suggests for an unused value — keeps the listener, like the same
// line inside a plugin.
#[tokio::test]
async fn a_host_registration_ignored_with_let_underscore_stays_registered() {
    use tack_core::hooks::ToolHooks;
    use tack_core::policy::PreDecision;

    let hooks = ToolHooks::new();
    let _ = hooks
        .pre_execute()
        .tap("gate", |_, _| async { PreDecision::deny("closed") });
    {
        let _scoped = hooks.execute().tap("wrap", |req, next| next.run(req));
    }
    assert_eq!(
        hooks.pre_execute().listener_names(None),
        ["gate".into()] as [Arc<str>; 1]
    );
    assert_eq!(
        hooks.execute().listener_count(),
        1,
        "the end of a scope keeps it too"
    );
    let kept = hooks
        .post_execute()
        .tap("post", |input, next| next.run(input));
    kept.dispose();
    assert_eq!(
        hooks.post_execute().listener_count(),
        0,
        "dispose removes it"
    );
}

#[test]
fn dispose_races_from_many_threads_run_the_action_once() {
    let n = Arc::new(AtomicUsize::new(0));
    let d = Arc::new(counting(&n));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let d = d.clone();
            std::thread::spawn(move || d.dispose())
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(n.load(Ordering::SeqCst), 1);
}

#[test]
fn a_disposer_whose_action_disposes_itself_does_not_deadlock() {
    let slot: Arc<Mutex<Option<Arc<Disposer>>>> = Arc::default();
    let s = slot.clone();
    let d = Arc::new(Disposer::new(move || {
        if let Some(me) = s.lock().clone() {
            me.dispose(); // re-entrant: already taken, returns at once
        }
    }));
    *slot.lock() = Some(d.clone());
    d.dispose();
    assert!(d.is_disposed());
    slot.lock().take();
}

#[test]
fn a_bag_disposes_last_added_first_and_stays_usable() {
    let order: Arc<Mutex<Vec<u32>>> = Arc::default();
    let bag = Disposables::new();
    for i in 1..=3 {
        let o = order.clone();
        bag.add(Disposer::new(move || o.lock().push(i)));
    }
    assert_eq!(bag.len(), 3);
    bag.dispose();
    assert_eq!(*order.lock(), [3, 2, 1]);
    assert!(bag.is_empty());

    let o = order.clone();
    bag.add(Disposer::new(move || o.lock().push(4)));
    bag.dispose();
    assert_eq!(*order.lock(), [3, 2, 1, 4]);
}

#[test]
fn bags_nest_and_absorb() {
    let n = Arc::new(AtomicUsize::new(0));
    let inner: Disposables = (0..3).map(|_| counting(&n)).collect();
    let outer = Disposables::new();
    outer.add(inner.into_disposer());
    let other = Disposables::new();
    other.add(counting(&n));
    outer.absorb(other);
    assert_eq!(outer.len(), 2);
    outer.dispose();
    assert_eq!(n.load(Ordering::SeqCst), 4);
}
