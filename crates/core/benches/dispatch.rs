//! Hook dispatch cost: a direct async call, a waterfall with 0/1/10/100 no-op
//! listeners, and an observer fanning out to 10 listeners.
//!
//! Every future here completes on its first poll, so each iteration builds the
//! future and polls it once with a no-op waker: no executor noise in the figures.
//!
//! Run: `cargo bench -p tack-core --bench dispatch`

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use criterion::{BenchmarkId, Criterion, criterion_group};
use tack_core::hook::{AgentId, Disposer, Observer, Waterfall};

fn poll_once<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("benchmark futures complete on their first poll"),
    }
}

async fn direct(x: u64) -> u64 {
    black_box(x) + 1
}

/// A hook with `listeners` no-op listeners. `tail`: each returns `next.run(x)`
/// itself (a tail call); otherwise each wraps it in an async block
/// (`async move { next.run(x).await }`), which costs one boxed future.
fn hook_with(listeners: usize, tail: bool) -> (Waterfall<u64, u64>, Vec<Disposer>) {
    let hook: Waterfall<u64, u64> = Waterfall::new("bench/noop", |x| async move { x + 1 });
    let keep = (0..listeners)
        .map(|i| {
            let name = format!("noop-{i}");
            if tail {
                hook.tap(name, |x, next| next.run(x))
            } else {
                hook.tap(name, |x, next| async move { next.run(x).await })
            }
        })
        .collect();
    (hook, keep)
}

fn dispatch(c: &mut Criterion) {
    let mut group = c.benchmark_group("dispatch");
    group.bench_function("direct_async_call", |b| {
        b.iter(|| poll_once(direct(black_box(1))))
    });

    for (kind, tail) in [("tail", true), ("async_block", false)] {
        for listeners in [0usize, 1, 10, 100] {
            let (hook, _keep) = hook_with(listeners, tail);
            let id = BenchmarkId::new(format!("waterfall_noop_{kind}_listeners"), listeners);
            group.bench_with_input(id, &hook, |b, hook| {
                b.iter(|| poll_once(hook.dispatch(None, black_box(1))).expect("no panics here"))
            });
        }
    }

    // Scoped: 10 listeners for agent A, 10 for agent B, dispatched for A.
    let (hook, mut keep) = hook_with(0, true);
    let (a, other) = (AgentId::new("a"), AgentId::new("b"));
    for i in 0..10 {
        keep.push(
            hook.for_agent(&a)
                .tap(format!("a-{i}"), |x, next| next.run(x)),
        );
        keep.push(
            hook.for_agent(&other)
                .tap(format!("b-{i}"), |x, next| next.run(x)),
        );
    }
    group.bench_function("waterfall_10_of_20_scoped_listeners", |b| {
        b.iter(|| poll_once(hook.dispatch(Some(&a), black_box(1))).expect("no panics here"))
    });

    let observer: Observer<u64> = Observer::new("bench/observer");
    let _observers: Vec<Disposer> = (0..10)
        .map(|i| {
            observer.tap(format!("obs-{i}"), |v: &Arc<u64>| {
                black_box(**v);
            })
        })
        .collect();
    let value = Arc::new(7u64);
    group.bench_function("observer_fan_out_10", |b| {
        b.iter(|| observer.notify(None, black_box(&value)))
    });
    group.finish();
}

/// Fixed-work mode for instruction counts: with `DISPATCH_FIXED=kind:n:iters`
/// (`kind` is `tail` or `async_block`), runs `iters` dispatches through `n`
/// listeners and exits, without criterion. Under `valgrind --tool=callgrind`
/// the difference between two `n` divided by the iterations and the
/// difference in `n` is the instruction cost of one extra listener.
fn fixed_work(spec: &str) {
    let mut parts = spec.split(':');
    let kind = parts.next().expect("kind");
    let listeners: usize = parts.next().expect("n").parse().expect("a number");
    let iters: u64 = parts.next().expect("iters").parse().expect("a number");
    let (hook, _keep) = hook_with(listeners, kind == "tail");
    let mut sum = 0u64;
    for _ in 0..iters {
        sum += poll_once(hook.dispatch(None, black_box(1))).expect("no panics here");
    }
    black_box(sum);
}

criterion_group!(benches, dispatch);

fn main() {
    if let Ok(spec) = std::env::var("DISPATCH_FIXED") {
        fixed_work(&spec);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
