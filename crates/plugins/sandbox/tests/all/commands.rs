//! Commands: environment, process groups, deadlines, output caps, limits,
//! exit status, working directory.

use std::time::{Duration, Instant};

use tack_core::capability::{CapabilityError, CommandOutput, CommandRequest};
use tack_sandbox::{ResourceLimits, Sandbox, SandboxPolicy, is_secret_name};
use tokio_util::sync::CancellationToken;

use crate::fixture::{Fixture, marker, runs_commands, survivors, wait_for_marker};

async fn run(sandbox: &Sandbox, request: CommandRequest) -> CommandOutput {
    sandbox
        .shell()
        .run(request, CancellationToken::new())
        .await
        .unwrap()
}

/// The environment a command sees holds only allowlisted names and no
/// secret. Run as a child of this test binary with secrets set (see below),
/// and on its own with cargo's variables (`CARGO_MANIFEST_DIR` …) set.
#[tokio::test]
async fn the_environment_is_scrubbed() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    if !runs_commands(&sandbox, "the_environment_is_scrubbed") {
        return;
    }
    let out = run(&sandbox, CommandRequest::new("env")).await;
    let names: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split('=').next())
        .collect();
    assert!(names.contains(&"PATH"), "{names:?}");
    for name in &names {
        assert!(!is_secret_name(name), "secret {name} reached the command");
        assert!(
            [
                "PATH", "HOME", "LANG", "LANGUAGE", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR",
                "TZ", "PWD", "OLDPWD", "SHLVL", "_"
            ]
            .contains(name)
                || name.starts_with("LC_"),
            "{name} is not on the allowlist"
        );
    }
    assert!(!out.stdout.contains("TACK_TEST_API_KEY"));
    assert!(!out.stdout.contains("CARGO_MANIFEST_DIR"));
    if std::env::var_os("TACK_TEST_API_KEY").is_some() {
        println!("env-probe: secret scrubbed");
    }
}

/// Re-runs `the_environment_is_scrubbed` in a child of this test binary whose
/// environment holds secrets (this crate forbids `unsafe`, so it cannot
/// `set_var` in its own process).
#[test]
fn a_secret_in_the_parent_env_is_absent_in_the_child() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "commands::the_environment_is_scrubbed",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("TACK_TEST_API_KEY", "sk-do-not-leak")
        .env("GH_TOKEN", "ghp-do-not-leak")
        .env("DB_PASSWORD", "hunter2")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child test failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("env-probe: secret scrubbed") || stdout.contains("skipped"),
        "{stdout}"
    );
    assert!(!stdout.contains("sk-do-not-leak"));
}

#[tokio::test]
async fn cancellation_kills_every_process_of_the_command() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    if !runs_commands(&sandbox, "cancellation_kills_every_process_of_the_command") {
        return;
    }
    let m = marker();
    let cancel = CancellationToken::new();
    let shell = sandbox.shell();
    let token = cancel.clone();
    let command = format!("sleep {m} & sleep {m} & (sleep {m}; true) & wait");
    let running = tokio::spawn(async move { shell.run(CommandRequest::new(command), token).await });
    wait_for_marker(&m, 3).await;
    cancel.cancel();
    let result = running.await.unwrap();
    assert!(
        matches!(result, Err(CapabilityError::Cancelled)),
        "{result:?}"
    );
    assert_eq!(survivors(&m).await, Vec::<i32>::new());
}

/// A caller that abandons the run (a timeout wrapper dropping the future)
/// leaves no process behind either.
#[tokio::test]
async fn abandoning_the_run_kills_every_process() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    if !runs_commands(&sandbox, "abandoning_the_run_kills_every_process") {
        return;
    }
    let m = marker();
    let shell = sandbox.shell();
    let run = shell.run(
        CommandRequest::new(format!("sleep {m} & sleep {m}")),
        CancellationToken::new(),
    );
    let mut run = Box::pin(run);
    tokio::select! {
        () = wait_for_marker(&m, 2) => {}
        result = &mut run => panic!("the command ended early: {result:?}"),
    }
    drop(run);
    assert_eq!(survivors(&m).await, Vec::<i32>::new());
}

#[tokio::test]
async fn the_deadline_kills_every_process_and_says_so() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    if !runs_commands(&sandbox, "the_deadline_kills_every_process_and_says_so") {
        return;
    }
    let m = marker();
    let started = Instant::now();
    let out = run(
        &sandbox,
        CommandRequest::new(format!("sleep {m} & echo before; sleep {m}"))
            .with_timeout(Duration::from_millis(500)),
    )
    .await;
    assert!(out.timed_out);
    assert_eq!(out.signal, Some(9));
    assert_eq!(out.exit_code, None);
    assert_eq!(out.stdout, "before\n");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(survivors(&m).await, Vec::<i32>::new());
}

#[tokio::test]
async fn background_children_do_not_outlive_the_command() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    if !runs_commands(&sandbox, "background_children_do_not_outlive_the_command") {
        return;
    }
    let m = marker();
    let out = run(
        &sandbox,
        CommandRequest::new(format!("sleep {m} & sleep {m} & echo done")),
    )
    .await;
    assert_eq!((out.exit_code, out.stdout.as_str()), (Some(0), "done\n"));
    assert_eq!(survivors(&m).await, Vec::<i32>::new());
}

#[tokio::test]
async fn output_is_capped_with_a_marker() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    if !runs_commands(&sandbox, "output_is_capped_with_a_marker") {
        return;
    }
    let out = run(
        &sandbox,
        CommandRequest::new(
            "head -c 100000 /dev/zero | tr '\\0' a; head -c 50 /dev/zero | tr '\\0' e >&2",
        )
        .with_output_limit(1000),
    )
    .await;
    assert!(out.truncated);
    assert!(out.stdout.starts_with(&"a".repeat(1000)));
    assert!(
        out.stdout
            .ends_with("[output truncated by tack-sandbox: 99000 more bytes not shown]"),
        "{}",
        &out.stdout[1000..]
    );
    assert_eq!(out.stderr, "e".repeat(50));
}

#[tokio::test]
async fn the_file_size_limit_is_enforced() {
    let fx = Fixture::new();
    let sandbox = crate::fixture::sandbox(
        SandboxPolicy::workspace_write(fx.ws.path())
            .with_limits(ResourceLimits::default().with_file_size_bytes(Some(4096))),
    )
    .unwrap();
    if !runs_commands(&sandbox, "the_file_size_limit_is_enforced") {
        return;
    }
    let out = run(
        &sandbox,
        CommandRequest::new("head -c 100000 /dev/zero > big; echo status=$?"),
    )
    .await;
    let size = std::fs::metadata(fx.ws.path().join("big")).unwrap().len();
    assert!(size <= 4096, "the file grew to {size} bytes");
    // `head` is killed by SIGXFSZ (25): the shell reports 128 + 25.
    assert!(out.stdout.contains("status=153"), "{out:?}");
    // The limit is set in 512-byte blocks; bash shows 1024-byte ones.
    let out = run(&sandbox, CommandRequest::new("ulimit -f; ulimit -t")).await;
    let blocks = if sandbox.status().shell.ends_with("bash") {
        "4"
    } else {
        "8"
    };
    assert_eq!(out.stdout, format!("{blocks}\n600\n"));
}

#[tokio::test]
async fn exit_codes_and_signals_are_reported() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    if !runs_commands(&sandbox, "exit_codes_and_signals_are_reported") {
        return;
    }
    let out = run(
        &sandbox,
        CommandRequest::new("echo out; echo err >&2; exit 3"),
    )
    .await;
    assert_eq!((out.exit_code, out.signal), (Some(3), None));
    assert_eq!(
        (out.stdout.as_str(), out.stderr.as_str()),
        ("out\n", "err\n")
    );
    assert!(!out.timed_out && !out.truncated);
    let out = run(&sandbox, CommandRequest::new("kill -TERM $$")).await;
    if crate::fixture::warm(&sandbox) {
        // A warm environment's supervisor (a shell) reports a command
        // killed by signal N as exit 128 + N, as bubblewrap does.
        assert_eq!((out.exit_code, out.signal), (Some(143), None));
    } else {
        assert_eq!((out.exit_code, out.signal), (None, Some(15)));
    }
    let err = sandbox
        .shell()
        .run(CommandRequest::new("  "), CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(err, CapabilityError::EmptyCommand);
}

#[tokio::test]
async fn stdin_is_passed_or_empty() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    if !runs_commands(&sandbox, "stdin_is_passed_or_empty") {
        return;
    }
    let out = run(
        &sandbox,
        CommandRequest::new("tr a-z A-Z").with_stdin("hello"),
    )
    .await;
    assert_eq!(out.stdout, "HELLO");
    let out = run(&sandbox, CommandRequest::new("wc -c")).await;
    assert_eq!(out.stdout.trim(), "0");
}

#[tokio::test]
async fn the_working_directory_is_confined() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.ws.path().join("sub")).unwrap();
    fx.link("out", fx.outside());
    let sandbox = fx.workspace_write();
    if !runs_commands(&sandbox, "the_working_directory_is_confined") {
        return;
    }
    let out = run(&sandbox, CommandRequest::new("pwd -P")).await;
    assert_eq!(out.stdout.trim(), fx.ws().display().to_string());
    let out = run(&sandbox, CommandRequest::new("pwd -P").with_cwd("sub")).await;
    assert_eq!(out.stdout.trim(), fx.ws().join("sub").display().to_string());
    for cwd in ["..", "/etc", "out", "missing"] {
        let err = sandbox
            .shell()
            .run(
                CommandRequest::new("touch escaped").with_cwd(cwd),
                CancellationToken::new(),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, CapabilityError::CommandRefused { .. }),
            "{cwd}: {err}"
        );
    }
    assert!(!fx.outside().join("escaped").exists());
}

#[tokio::test]
async fn a_cancelled_token_never_starts_the_command() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let result = sandbox
        .shell()
        .run(CommandRequest::new("touch ran"), cancel)
        .await;
    assert!(result.is_err());
    assert!(!fx.ws.path().join("ran").exists());
}
