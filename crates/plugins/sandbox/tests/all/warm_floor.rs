//! Warm environments on the floor (no bubblewrap): one supervisor, started
//! once with Landlock, the seccomp filter and its watchdog, serves command
//! after command; each command moves into the call's `pids` cgroup first,
//! and the host empties that cgroup after it. Every test here attacks the
//! reuse: what one command starts or leaves must never reach the next, and
//! no command may leave the call's cgroup.

use std::time::Duration;

use tack_core::capability::{CommandOutput, CommandRequest};
use tack_sandbox::{Namespaces, ResourceLimits, Sandbox, SandboxPolicy};
use tokio_util::sync::CancellationToken;

use crate::fixture::{Fixture, live_with_marker, marker, survivors};

async fn run(sandbox: &Sandbox, command: &str) -> CommandOutput {
    sandbox
        .shell()
        .run(CommandRequest::new(command), CancellationToken::new())
        .await
        .unwrap()
}

/// A sandbox on the floor whose commands start in warm environments, or
/// `None` (printed) where the floor cannot have them (no Landlock, or no
/// `pids` cgroup the host can make: an unprivileged user without a
/// delegated cgroup).
fn floor_sandbox(fx: &Fixture, test: &str, limits: Option<ResourceLimits>) -> Option<Sandbox> {
    let mut policy = SandboxPolicy::workspace_write(fx.ws()).with_namespaces(Namespaces::Disabled);
    if let Some(limits) = limits {
        policy = policy.with_limits(limits);
    }
    let sandbox = Sandbox::new(policy).unwrap();
    let warm = sandbox.status().policy.is_some_and(|p| p.warm);
    if !warm || !crate::fixture::runs_commands(&sandbox, test) {
        println!("{test}: skipped, the floor starts each command anew here");
        return None;
    }
    Some(sandbox)
}

/// The supervisor's pid: the parent of a command started anew (`PPID` in
/// its text makes it one).
async fn supervisor(sandbox: &Sandbox) -> String {
    let out = run(sandbox, "echo $PPID").await;
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    out.stdout.trim().to_owned()
}

#[tokio::test]
async fn one_supervisor_serves_command_after_command() {
    let fx = Fixture::new();
    let Some(sandbox) = floor_sandbox(&fx, "one_supervisor_serves_command_after_command", None)
    else {
        return;
    };
    let first = supervisor(&sandbox).await;
    assert_eq!(run(&sandbox, "true").await.exit_code, Some(0));
    assert_eq!(
        supervisor(&sandbox).await,
        first,
        "the supervisor was not reused"
    );
    // Each command runs in the call's cgroup, the supervisor outside it.
    let out = run(
        &sandbox,
        "grep pids /proc/self/cgroup; grep pids /proc/$PPID/cgroup",
    )
    .await;
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{out:?}");
    assert_ne!(
        lines[0], lines[1],
        "the command shares the supervisor's cgroup"
    );
    // The environment's directory (its FIFOs) takes no file a later command
    // could find.
    let out = run(
        &sandbox,
        &format!(
            "n=0; for d in {}/tack-sandbox-*/; do \
               [ -p \"$d/out\" ] || continue; n=$((n+1)); \
               echo x > \"$d/left\" 2>/dev/null && echo \"wrote $d\"; done; echo \"found $n\"",
            std::env::temp_dir().display()
        ),
    )
    .await;
    assert!(!out.stdout.contains("wrote"), "{out:?}");
    assert_ne!(out.stdout.trim(), "found 0", "{out:?}");
}

#[tokio::test]
async fn background_processes_of_a_command_never_reach_the_next() {
    let fx = Fixture::new();
    let Some(sandbox) = floor_sandbox(
        &fx,
        "background_processes_of_a_command_never_reach_the_next",
        None,
    ) else {
        return;
    };
    let m = marker();
    // Detached in every way a shell allows: background, a new session (the
    // filter refuses it), a new process group (refused too), a double fork,
    // output redirected away from the pipes.
    let out = run(
        &sandbox,
        &format!(
            "sleep {m} & setsid sleep {m} & (sleep {m} &) ; nohup sleep {m} >/dev/null 2>&1 & \
             perl -e 'setpgrp(0,0); exec @ARGV' sleep {m} 2>/dev/null & echo started"
        ),
    )
    .await;
    assert_eq!(out.stdout, "started\n");
    // Gone when the call returns, not some time later.
    assert_eq!(live_with_marker(&m), Vec::<i32>::new());
    let out = run(
        &sandbox,
        &format!("ps -eo args | grep -c '^sleep {m}' || true"),
    )
    .await;
    assert_eq!(out.stdout.trim(), "0", "{out:?}");
}

#[tokio::test]
async fn a_command_cannot_leave_the_calls_cgroup() {
    let fx = Fixture::new();
    let Some(sandbox) = floor_sandbox(&fx, "a_command_cannot_leave_the_calls_cgroup", None) else {
        return;
    };
    let first = supervisor(&sandbox).await;
    let m = marker();
    // Into the supervisor's cgroup or the hierarchy's root (cgroup v1's
    // `pids` hierarchy, or v2's): every `cgroup.procs` but the call's own
    // is out of reach, for the command and for a process it started.
    let out = run(
        &sandbox,
        &format!(
            "sleep {m} & b=$!; n=0; \
             for f in /sys/fs/cgroup/pids/cgroup.procs /sys/fs/cgroup/cgroup.procs \
               \"/sys/fs/cgroup/pids$(grep :pids: /proc/$PPID/cgroup | cut -d: -f3)/cgroup.procs\" \
               \"/sys/fs/cgroup$(grep '^0::' /proc/$PPID/cgroup | cut -d: -f3)/cgroup.procs\"; do \
               [ -e \"$f\" ] || continue; \
               echo \"$b\" > \"$f\" 2>/dev/null && echo \"moved into $f\"; \
               echo 0 > \"$f\" 2>/dev/null && echo \"moved self into $f\"; \
               n=$((n+1)); \
             done; echo \"tried $n\""
        ),
    )
    .await;
    assert!(!out.stdout.contains("moved"), "{out:?}");
    assert!(out.stdout.starts_with("tried "), "{out:?}");
    assert_ne!(
        out.stdout.trim(),
        "tried 0",
        "no other cgroup was tried: {out:?}"
    );
    assert_eq!(live_with_marker(&m), Vec::<i32>::new());
    assert_eq!(supervisor(&sandbox).await, first);
}

#[tokio::test]
async fn the_process_limit_holds_for_each_call_anew() {
    let fx = Fixture::new();
    let limits = ResourceLimits::default().with_processes(Some(16));
    let Some(sandbox) = floor_sandbox(
        &fx,
        "the_process_limit_holds_for_each_call_anew",
        Some(limits),
    ) else {
        return;
    };
    let m = marker();
    // `sh` (not bash, which retries a failed fork for seconds) starts
    // sleeps until a fork fails; `echo` is a builtin, which needs none.
    let flood = format!(
        "sh -c 'for i in $(seq 40); do sleep {m} & done; echo all started' 2>&1; echo \"sh: $?\""
    );
    let out = run(&sandbox, &flood).await;
    assert!(
        !out.stdout.contains("all started") && out.stdout.lines().last() != Some("sh: 0"),
        "the flood was not stopped at the limit: {out:?}"
    );
    assert!(out.stdout.to_lowercase().contains("fork"), "{out:?}");
    assert_eq!(live_with_marker(&m), Vec::<i32>::new());
    // The next call has the whole limit again.
    let out = run(
        &sandbox,
        "for i in 1 2 3 4 5 6 7 8; do sleep 0.2 & done; wait; echo fine",
    )
    .await;
    assert_eq!(
        (out.stdout.as_str(), out.exit_code),
        ("fine\n", Some(0)),
        "{out:?}"
    );
}

/// A command that kills the supervisor, or forges its answers on the pipe
/// to the host (reachable through `/proc/$PPID/fd/1`), breaks only its own
/// environment: its processes are gone, and the next command gets a fresh
/// supervisor.
#[tokio::test]
async fn a_command_that_attacks_its_supervisor_takes_only_its_environment() {
    let fx = Fixture::new();
    let Some(sandbox) = floor_sandbox(
        &fx,
        "a_command_that_attacks_its_supervisor_takes_only_its_environment",
        None,
    ) else {
        return;
    };
    let mut last = supervisor(&sandbox).await;
    for attack in [
        "sleep {m} & kill -9 $PPID; sleep 1",
        "sleep {m} & for n in 1 2 3; do echo \"exit 0 0 0 \" > /proc/$PPID/fd/1; \
         echo \"started 0\" > /proc/$PPID/fd/1; done 2>/dev/null; echo done",
        "sleep {m} & kill -STOP $PPID; sleep 1",
    ] {
        let m = marker();
        let result = sandbox
            .shell()
            .run(
                CommandRequest::new(attack.replace("{m}", &m)).with_timeout(Duration::from_secs(5)),
                CancellationToken::new(),
            )
            .await;
        drop(result);
        assert_eq!(survivors(&m).await, Vec::<i32>::new(), "{attack}");
        let out = run(&sandbox, "echo next").await;
        assert_eq!(out.stdout, "next\n", "{attack}");
        let now = supervisor(&sandbox).await;
        if !attack.contains("echo done") {
            assert_ne!(now, last, "a broken supervisor was reused after {attack}");
        }
        last = now;
    }
}

#[tokio::test]
async fn a_timeout_ends_the_environment_and_everything_in_it() {
    let fx = Fixture::new();
    let Some(sandbox) = floor_sandbox(
        &fx,
        "a_timeout_ends_the_environment_and_everything_in_it",
        None,
    ) else {
        return;
    };
    let first = supervisor(&sandbox).await;
    let m = marker();
    let out = sandbox
        .shell()
        .run(
            CommandRequest::new(format!("sleep {m} & sleep {m}"))
                .with_timeout(Duration::from_millis(300)),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(out.timed_out);
    assert_eq!(live_with_marker(&m), Vec::<i32>::new());
    assert!(
        !std::path::Path::new(&format!("/proc/{first}")).exists() || {
            // The pid may have been reused by then; it is not the supervisor.
            std::fs::read_to_string(format!("/proc/{first}/cmdline"))
                .is_ok_and(|c| !c.contains("tack-sandbox-supervisor"))
        }
    );
    assert_ne!(supervisor(&sandbox).await, first);
}
