//! The process limit holds per call, for root too where a `pids` cgroup can
//! be made: a command that starts processes without end gets no more than
//! the limit, and the next call starts afresh.

use std::time::Duration;

use tack_core::capability::CommandRequest;
use tack_sandbox::{Enforcement, ResourceLimits, SandboxPolicy};
use tokio_util::sync::CancellationToken;

use crate::fixture::{
    Fixture, live_with_marker, marker, runs_commands, survivors, wait_for_marker,
};

#[tokio::test]
async fn a_process_flood_stops_at_the_limit_and_ends_with_its_call() {
    let fx = Fixture::new();
    let limit = 64;
    let sandbox = crate::fixture::sandbox(
        SandboxPolicy::workspace_write(fx.ws.path())
            .with_limits(ResourceLimits::default().with_processes(Some(limit))),
    )
    .unwrap();
    let test = "a_process_flood_stops_at_the_limit_and_ends_with_its_call";
    if !runs_commands(&sandbox, test) {
        return;
    }
    let enforcement = sandbox.status().policy.unwrap().processes;
    if enforcement == Enforcement::Unavailable {
        // Root without a pids cgroup: the status says the limit does not
        // hold, and a flood would reach the host.
        println!("{test}: skipped, the status says no per-call process limit holds here");
        return;
    }
    assert!(
        matches!(enforcement, Enforcement::Enforced | Enforcement::Partial),
        "{enforcement:?}"
    );
    let m = marker();
    let shell = sandbox.shell();
    let flood = tokio::spawn({
        let command = format!("for i in $(seq 300); do sleep {m} & done 2>/dev/null; sleep {m}");
        async move {
            shell
                .run(
                    CommandRequest::new(command).with_timeout(Duration::from_secs(6)),
                    CancellationToken::new(),
                )
                .await
        }
    });
    wait_for_marker(&m, 16).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let running = live_with_marker(&m).len() as u64;
    assert!(
        running <= limit,
        "{running} processes ran under a limit of {limit}"
    );
    let out = flood.await.unwrap().unwrap();
    assert!(out.timed_out, "{out:?}");
    assert_eq!(survivors(&m).await, Vec::<i32>::new());
    // The next call is not charged for the last one's processes.
    let out = sandbox
        .shell()
        .run(
            CommandRequest::new("for i in $(seq 20); do sleep 0.2 & done; wait; echo ok"),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.stdout, "ok\n", "{out:?}");
}
