//! Allocations per call, counted (not timed): a call through the pipeline
//! allocates no more than the figures pinned here, with no listeners, with
//! the typical listener set, with 50 pass-through pre-execute listeners and
//! with 1,000 agents that each have a listener of their own.
//!
//! Its own test binary with one test: the counting allocator is global, and
//! another test running at the same time would add its allocations.
//! `--bench allocations` prints the same figures (and the bytes).

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;
use tack_core::hook::{AgentId, Disposer};
use tack_core::tool::ToolCall;
use tack_pipeline::Pipeline;
use tokio_util::sync::CancellationToken;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

// The benches' tool and call; this test uses part of it.
#[allow(dead_code)]
#[path = "../benches/add_one_call/mod.rs"]
mod add_one_call;

use add_one_call::{add_one_registry, poll_once, run, with_listeners};

/// Calls per measurement.
const SAMPLE: usize = 1000;

/// The allocations of `SAMPLE` calls made by `call(i)`, after one round of
/// them (the first call on a thread makes its copies of the catalogue and
/// of the listener snapshots, and fills the future pools).
fn allocations_per_call(mut call: impl FnMut(usize)) -> f64 {
    for i in 0..SAMPLE {
        call(i);
    }
    let region = Region::new(GLOBAL);
    for i in 0..SAMPLE {
        call(i);
    }
    region.change().allocations as f64 / SAMPLE as f64
}

fn pass_through_pre_listeners(pipeline: &Pipeline, n: usize) -> Vec<Disposer> {
    (0..n)
        .map(|i| {
            pipeline
                .hooks()
                .pre_execute()
                .tap(format!("pre-{i}"), |exec, next| next.run(exec))
        })
        .collect()
}

#[test]
fn a_call_allocates_no_more_than_pinned() {
    // The call itself: a host's `ToolCall` clone (name and argument text,
    // two allocations), counted in every figure.
    let (pipeline, _tool) = add_one_registry();
    let none = allocations_per_call(|_| run(&pipeline));

    let (pipeline, _tool) = add_one_registry();
    let _set = with_listeners(&pipeline);
    let set = allocations_per_call(|_| run(&pipeline));

    let (pipeline, _tool) = add_one_registry();
    let _fifty = pass_through_pre_listeners(&pipeline, 50);
    let fifty = allocations_per_call(|_| run(&pipeline));

    let (pipeline, _tool) = add_one_registry();
    let agents: Vec<AgentId> = (0..1000)
        .map(|i| AgentId::new(format!("agent-{i}")))
        .collect();
    let pre = pipeline.hooks().pre_execute();
    let _scoped: Vec<Disposer> = agents
        .iter()
        .map(|a| pre.for_agent(a).tap("session", |exec, next| next.run(exec)))
        .collect();
    let calls: Vec<ToolCall> = agents
        .iter()
        .map(|a| ToolCall::new("c1", "add_one", r#"{"x": 41}"#).with_agent(a.clone()))
        .collect();
    let token = CancellationToken::new();
    let per_agent = allocations_per_call(|i| {
        let outcome = poll_once(pipeline.execute(calls[i % calls.len()].clone(), token.clone()));
        assert!(outcome.is_success(), "{outcome:?}");
    });

    let figures = format!(
        "allocations per call: no listeners {none}, set (c) {set}, 50 pass-through \
         pre-execute listeners {fifty}, 1,000 agents with a listener each {per_agent}"
    );
    println!("{figures}");
    // Pinned: what a call allocated when these were written.
    assert!(none <= NONE, "{figures}: no listeners, pinned {NONE}");
    assert!(set <= SET, "{figures}: set (c), pinned {SET}");
    assert!(
        fifty <= NONE,
        "{figures}: a pass-through listener allocates nothing, pinned {NONE}"
    );
    assert!(
        per_agent <= NONE,
        "{figures}: an agent's own pass-through listener allocates nothing, pinned {NONE}"
    );
}

/// A call with no listeners.
const NONE: f64 = 10.0;
/// A call with set (c).
const SET: f64 = 11.0;
