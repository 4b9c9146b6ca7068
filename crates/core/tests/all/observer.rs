//! Observer hook points: frozen values, containment, scope, snapshots.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use tack_core::hook::{AgentId, Disposer, Observer, Order};

#[test]
fn every_observer_sees_the_same_frozen_value_in_order() {
    let hook: Observer<Vec<u32>> = Observer::new("test/obs");
    let seen: Arc<Mutex<Vec<(String, usize)>>> = Arc::default();
    let value = Arc::new(vec![1, 2, 3]);
    let mut keep = Vec::new();
    for (name, priority) in [
        ("second", Order::NORMAL),
        ("first", Order::EARLY),
        ("third", Order::NORMAL),
    ] {
        let seen = seen.clone();
        let expected = value.clone();
        keep.push(
            hook.tap_with(name, priority, move |v: &Arc<Vec<u32>>| {
                assert!(Arc::ptr_eq(v, &expected), "the very same allocation");
                seen.lock().push((name.to_owned(), v.len()));
            })
            .unwrap(),
        );
    }
    let report = hook.notify(None, &value);
    assert_eq!(report.reached, 3);
    assert!(report.panicked.is_empty());
    let names: Vec<_> = seen.lock().iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(names, ["first", "second", "third"]);
}

#[test]
fn a_panicking_observer_is_contained_and_the_others_still_run() {
    let hook: Observer<u32> = Observer::new("test/panic");
    let count = Arc::new(AtomicUsize::new(0));
    let c1 = count.clone();
    let _a = hook.tap("before", move |_| {
        c1.fetch_add(1, Ordering::SeqCst);
    });
    let _b = hook.tap("bad-str", |_| panic!("observer bug"));
    let _c = hook.tap("bad-any", |_| std::panic::panic_any(42_u8));
    let c2 = count.clone();
    let _d = hook.tap("after", move |_| {
        c2.fetch_add(1, Ordering::SeqCst);
    });
    let report = hook.notify(None, &Arc::new(1));
    assert_eq!(count.load(Ordering::SeqCst), 2);
    assert_eq!(report.reached, 4);
    let panicked: Vec<&str> = report.panicked.iter().map(|n| &**n).collect();
    assert_eq!(panicked, ["bad-str", "bad-any"]);
}

#[test]
fn observers_are_scoped() {
    let hook: Observer<()> = Observer::new("test/scope");
    let seen: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    let mut keep = Vec::new();
    for (name, handle) in [
        ("global", hook.clone()),
        ("a", hook.for_agent(AgentId::new("a"))),
        ("b", hook.for_agent(AgentId::new("b"))),
    ] {
        let seen = seen.clone();
        keep.push(handle.tap(name, move |_| seen.lock().push(name)));
    }
    hook.notify(Some(&AgentId::new("a")), &Arc::new(()));
    assert_eq!(*seen.lock(), ["global", "a"]);
    assert_eq!(hook.listener_names(Some(&AgentId::new("b"))).len(), 2);
}

#[test]
fn an_observer_can_dispose_itself_and_others_during_notify() {
    let hook: Observer<()> = Observer::new("test/self-dispose");
    let count = Arc::new(AtomicUsize::new(0));
    let slot: Arc<OnceLock<Disposer>> = Arc::default();
    let (s, c) = (slot.clone(), count.clone());
    slot.set(hook.tap("once", move |_| {
        c.fetch_add(1, Ordering::SeqCst);
        s.get().unwrap().dispose();
    }))
    .unwrap();
    hook.notify(None, &Arc::new(()));
    hook.notify(None, &Arc::new(()));
    assert_eq!(count.load(Ordering::SeqCst), 1);
    assert_eq!(hook.listener_count(), 0);
}

#[test]
fn registering_during_notify_affects_only_later_notifications() {
    let hook: Observer<()> = Observer::new("test/register");
    let count = Arc::new(AtomicUsize::new(0));
    let keep: Arc<Mutex<Vec<Disposer>>> = Arc::default();
    let (h, c, k) = (hook.clone(), count.clone(), keep.clone());
    let _adder = hook.tap("adder", move |_| {
        let c = c.clone();
        k.lock().push(h.tap("added", move |_| {
            c.fetch_add(1, Ordering::SeqCst);
        }));
    });
    hook.notify(None, &Arc::new(()));
    assert_eq!(count.load(Ordering::SeqCst), 0);
    hook.notify(None, &Arc::new(()));
    assert_eq!(count.load(Ordering::SeqCst), 1);
}
