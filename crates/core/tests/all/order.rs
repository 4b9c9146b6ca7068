//! Ordering by name: `Order::before` / `Order::after`.

use std::sync::Arc;

use futures::future::BoxFuture;

use tack_core::hook::{AgentId, Disposer, Next, Observer, Order, OrderError, Waterfall};

type Hook = Waterfall<Vec<&'static str>, Vec<&'static str>>;

fn hook() -> Hook {
    Waterfall::new("test/order", |trail| async move { trail })
}

type Trail = Vec<&'static str>;

/// A listener that appends its name on the way in.
fn mark(
    name: &'static str,
) -> impl Fn(Trail, Next<Trail, Trail>) -> BoxFuture<'static, Trail> + Send + Sync + 'static {
    move |mut trail, next| {
        trail.push(name);
        Box::pin(next.run(trail))
    }
}

fn run(hook: &Hook, agent: Option<&AgentId>) -> Vec<&'static str> {
    futures::executor::block_on(hook.dispatch(agent, Vec::new())).unwrap()
}

fn names(hook: &Hook) -> Vec<String> {
    hook.listener_names(None)
        .iter()
        .map(|n| n.to_string())
        .collect()
}

#[test]
fn before_and_after_place_a_listener_whatever_the_priorities() {
    let hook = hook();
    let _gate = hook
        .tap_with("permission", Order::ranked(i32::MAX), mark("permission"))
        .unwrap();
    let _cache = hook
        .tap_with("cache", Order::ranked(i32::MIN), mark("cache"))
        .unwrap();
    let _audit = hook
        .tap_with(
            "audit",
            Order::ranked(i32::MIN).and_before("permission"),
            mark("audit"),
        )
        .unwrap();
    let _inner = hook
        .tap_with("inner", Order::after("cache"), mark("inner"))
        .unwrap();
    assert_eq!(run(&hook, None), ["audit", "permission", "cache", "inner"]);
    assert_eq!(names(&hook), ["audit", "permission", "cache", "inner"]);
}

#[test]
fn unrelated_listeners_keep_priority_then_registration_order() {
    let hook = hook();
    let _a = hook.tap("a", mark("a"));
    let _b = hook.tap_with("b", Order::EARLY, mark("b")).unwrap();
    let _c = hook.tap("c", mark("c"));
    // `d` must be inside `a`; it does not jump over `c`, which nothing relates to it.
    let _d = hook.tap_with("d", Order::after("a"), mark("d")).unwrap();
    assert_eq!(run(&hook, None), ["b", "a", "c", "d"]);
    // Before `c` and after `a`: between them.
    let _e = hook
        .tap_with("e", Order::after("a").and_before("c"), mark("e"))
        .unwrap();
    assert_eq!(run(&hook, None), ["b", "a", "e", "c", "d"]);
}

#[test]
fn the_same_registrations_always_give_the_same_chain() {
    let build = || {
        let hook = hook();
        let keep: Vec<Disposer> = vec![
            hook.tap("x", mark("x")),
            hook.tap("y", mark("y")),
            hook.tap_with("z", Order::before("x"), mark("z")).unwrap(),
            hook.tap_with("w", Order::after("z").and_before("x"), mark("w"))
                .unwrap(),
        ];
        (hook, keep)
    };
    let (first, _k1) = build();
    let (second, _k2) = build();
    assert_eq!(run(&first, None), ["z", "w", "x", "y"]);
    assert_eq!(run(&first, None), run(&second, None));
}

#[test]
fn an_unknown_name_is_a_clear_error_and_registers_nothing() {
    let hook = hook();
    let _a = hook.tap("audit", mark("audit"));
    let err = hook
        .tap_with("retry", Order::before("timeout"), mark("retry"))
        .unwrap_err();
    assert_eq!(
        err,
        OrderError::UnknownListener {
            hook: "test/order",
            listener: "retry".into(),
            relation: "before",
            target: "timeout".into(),
            known: vec!["audit".into()],
        }
    );
    let text = err.to_string();
    assert!(text.contains("no listener named `timeout`"), "{text}");
    assert!(text.contains("it has `audit`"), "{text}");
    assert!(text.contains("register `timeout` first"), "{text}");
    assert_eq!(hook.listener_count(), 1, "nothing was registered");
}

#[test]
fn a_conflict_is_refused_naming_both_sides() {
    let hook = hook();
    let _a = hook.tap("a", mark("a"));
    let _b = hook.tap_with("b", Order::after("a"), mark("b")).unwrap();
    let _c = hook.tap_with("c", Order::after("b"), mark("c")).unwrap();
    // A second `a` after `c`: but every `a` is before `b`, which is before `c`.
    let err = hook
        .tap_with("a", Order::after("c"), mark("a2"))
        .unwrap_err();
    assert_eq!(
        err,
        OrderError::Conflict {
            hook: "test/order",
            listener: "a".into(),
            placing: "a".into(),
            after: "c".into(),
            before: "b".into(),
        }
    );
    let text = err.to_string();
    assert!(
        text.contains("would have to run after `c` and before `b`, but `b` runs before `c`"),
        "{text}"
    );
    // Not satisfiable without reordering listeners that did not ask to move.
    let err = hook
        .tap_with("e", Order::after("c").and_before("a"), mark("e"))
        .unwrap_err();
    assert!(matches!(err, OrderError::Conflict { .. }), "{err}");
    assert_eq!(run(&hook, None), ["a", "b", "c"], "the chain is unchanged");
    assert_eq!(hook.listener_count(), 3);
}

#[test]
fn a_constraint_also_holds_for_namesakes_registered_later() {
    let hook = hook();
    let _x = hook.tap("x", mark("x1"));
    let _first = hook
        .tap_with("first", Order::before("x"), mark("first"))
        .unwrap();
    let _x2 = hook.tap_with("x", Order::EARLY, mark("x2")).unwrap();
    assert_eq!(run(&hook, None), ["first", "x2", "x1"]);
}

#[test]
fn disposing_a_named_listener_leaves_the_others_in_order() {
    let hook = hook();
    let x = hook.tap("x", mark("x"));
    let _y = hook.tap("y", mark("y"));
    let _z = hook.tap_with("z", Order::before("x"), mark("z")).unwrap();
    assert_eq!(run(&hook, None), ["z", "x", "y"]);
    x.dispose();
    assert_eq!(run(&hook, None), ["y", "z"], "back to registration order");
}

#[test]
fn scoped_listeners_are_ordered_in_one_merged_chain() {
    let hook = hook();
    let a = AgentId::new("a");
    let _g = hook.tap("global", mark("global"));
    let _only_a = hook
        .for_agent(&a)
        .tap_with("only-a", Order::before("global"), mark("only-a"))
        .unwrap();
    assert_eq!(run(&hook, Some(&a)), ["only-a", "global"]);
    assert_eq!(run(&hook, None), ["global"]);
}

#[test]
fn observers_are_ordered_by_name_too() {
    let hook: Observer<()> = Observer::new("test/observed");
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let s = seen.clone();
    let _late = hook.tap("late", move |_| s.lock().push("late"));
    let s = seen.clone();
    let _early = hook
        .tap_with("early", Order::before("late"), move |_| {
            s.lock().push("early")
        })
        .unwrap();
    hook.notify(None, &Arc::new(()));
    assert_eq!(*seen.lock(), ["early", "late"]);
    assert!(hook.tap_with("x", Order::after("none"), |_| {}).is_err());
}
