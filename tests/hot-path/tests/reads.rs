//! Reads of per-thread copies and copies made per call, counted on the
//! calling thread (`tack_replicated::counting`) and pinned: each read takes
//! one lock, the thread's own, and writes no shared cache line; a copy loads
//! the published value. A change that adds a read (a lock) or a copy to a
//! call fails here.

use tack_core::hook::{AgentId, Disposer};
use tack_core::hooks::ToolHooks;
use tack_core::tool::ToolCall;
use tack_replicated::counting;
use tokio_util::sync::CancellationToken;

// The benches' tool and call; this test uses part of it.
#[allow(dead_code)]
#[path = "../../../crates/pipeline/benches/add_one_call/mod.rs"]
mod add_one_call;

use add_one_call::{add_one_registry, poll_once, run, with_listeners};

const CALLS: u64 = 100;

/// Reads and copies per call of `call(i)`, after one round of calls (the
/// thread's first call makes its copies).
fn per_call(mut call: impl FnMut(u64)) -> (u64, u64) {
    for i in 0..CALLS {
        call(i);
    }
    let (reads, copies) = (counting::reads(), counting::copies());
    for i in 0..CALLS {
        call(i);
    }
    let reads = counting::reads() - reads;
    let copies = counting::copies() - copies;
    assert_eq!(reads % CALLS, 0, "every call reads as often: {reads}");
    (reads / CALLS, copies)
}

/// A pre-execute listener that delegates, registered through `hooks` (the
/// pipeline's, or a handle scoped to an agent).
fn pass_through(hooks: &ToolHooks, name: impl Into<std::sync::Arc<str>>) -> Disposer {
    hooks.pre_execute().tap(name, |exec, next| next.run(exec))
}

#[test]
fn a_call_with_no_listeners_reads_two_copies_and_makes_none() {
    let (pipeline, _tool) = add_one_registry();
    // The registry's catalogue and the capabilities; a hook point with no
    // listener is not read at all.
    assert_eq!(per_call(|_| run(&pipeline)), (2, 0));
}

#[test]
fn a_hook_point_is_read_once_per_call_however_many_listeners_it_has() {
    let (pipeline, _tool) = add_one_registry();
    let _one = pass_through(pipeline.hooks(), "pre-0");
    let one = per_call(|_| run(&pipeline));
    let _more: Vec<Disposer> = (1..50)
        .map(|i| pass_through(pipeline.hooks(), format!("pre-{i}")))
        .collect();
    assert_eq!(per_call(|_| run(&pipeline)), one);
    // The guards (there are none) are not read.
    assert_eq!(one, (3, 0), "the catalogue, the capabilities, pre-execute");
}

#[test]
fn the_typical_listener_set_reads_each_hook_point_once() {
    let (pipeline, _tool) = add_one_registry();
    let _set = with_listeners(&pipeline);
    // The catalogue, the capabilities, and pre-execute, the guards,
    // execute, post-execute and the result observers once each.
    assert_eq!(per_call(|_| run(&pipeline)), (7, 0));
}

#[test]
fn an_agent_among_thousands_reads_as_one_alone() {
    let (pipeline, _tool) = add_one_registry();
    let agents: Vec<AgentId> = (0..1000)
        .map(|i| AgentId::new(format!("agent-{i}")))
        .collect();
    let _scoped: Vec<Disposer> = agents
        .iter()
        .map(|a| pass_through(&pipeline.hooks().for_agent(a), "session"))
        .collect();
    let calls: Vec<ToolCall> = agents
        .iter()
        .map(|a| ToolCall::new("c1", "add_one", r#"{"x": 41}"#).with_agent(a.clone()))
        .collect();
    let token = CancellationToken::new();
    let counted = per_call(|i| {
        let call = calls[i as usize % calls.len()].clone();
        let outcome = poll_once(pipeline.execute(call, token.clone()));
        assert!(outcome.is_success(), "{outcome:?}");
    });
    assert_eq!(counted, (3, 0));
}

#[test]
fn a_change_costs_each_thread_one_copy_on_its_next_call() {
    let (pipeline, _tool) = add_one_registry();
    let _one = pass_through(pipeline.hooks(), "pre-0");
    run(&pipeline);
    let copies = counting::copies();
    let _two = pass_through(pipeline.hooks(), "pre-1");
    run(&pipeline);
    assert_eq!(counting::copies() - copies, 1, "the pre-execute snapshot");
    run(&pipeline);
    assert_eq!(counting::copies() - copies, 1, "and no more");
}
