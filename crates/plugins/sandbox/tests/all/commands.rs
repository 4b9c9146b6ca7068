//! Commands: environment, process groups, deadlines, output caps, limits,
//! exit status, working directory.

use std::path::Path;
use std::time::{Duration, Instant};

use tack_core::capability::{CommandOutput, CommandRequest, ShellError};
use tack_sandbox::{ResourceLimits, Sandbox, SandboxPolicy, is_secret_name};
use tokio_util::sync::CancellationToken;

use crate::fixture::{Fixture, runs_commands};

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

/// Reads the process group of every live process (zombies are already dead).
fn live_members_of_group(group: i32) -> Vec<i32> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the parenthesised command name: state ppid pgrp …
        let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[0] != "Z" && fields[2] == group.to_string() {
            members.push(pid);
        }
    }
    members
}

async fn wait_until_group_is_gone(group: i32) -> Vec<i32> {
    let start = Instant::now();
    loop {
        let members = live_members_of_group(group);
        if members.is_empty() || start.elapsed() > Duration::from_secs(5) {
            return members;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn read_group_id(ws: &Path) -> i32 {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(ws.join("pgid")) {
            if let Ok(group) = text.trim().parse() {
                return group;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the command never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn cancellation_kills_the_whole_process_group() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    if !runs_commands(&sandbox, "cancellation_kills_the_whole_process_group") {
        return;
    }
    let cancel = CancellationToken::new();
    let shell = sandbox.shell();
    let token = cancel.clone();
    let running = tokio::spawn(async move {
        shell
            .run(
                CommandRequest::new("sleep 1000 & sleep 1000 & (sleep 1000; true) & echo $$ > pgid.tmp && mv pgid.tmp pgid; wait"),
                token,
            )
            .await
    });
    let group = read_group_id(&fx.ws()).await;
    assert!(
        live_members_of_group(group).len() >= 4,
        "{:?}",
        live_members_of_group(group)
    );
    cancel.cancel();
    let result = running.await.unwrap();
    assert!(matches!(result, Err(ShellError::Cancelled)), "{result:?}");
    assert_eq!(wait_until_group_is_gone(group).await, Vec::<i32>::new());
}

/// A caller that abandons the run (a timeout wrapper dropping the future,
/// DESIGN §8.6) leaves no process behind either.
#[tokio::test]
async fn abandoning_the_run_kills_the_group() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    if !runs_commands(&sandbox, "abandoning_the_run_kills_the_group") {
        return;
    }
    let shell = sandbox.shell();
    let run = shell.run(
        CommandRequest::new("echo $$ > pgid.tmp && mv pgid.tmp pgid; sleep 1000 & sleep 1000"),
        CancellationToken::new(),
    );
    let mut run = Box::pin(run);
    let ws = fx.ws();
    let group = tokio::select! {
        group = read_group_id(&ws) => group,
        result = &mut run => panic!("the command ended early: {result:?}"),
    };
    assert!(!live_members_of_group(group).is_empty());
    drop(run);
    assert_eq!(wait_until_group_is_gone(group).await, Vec::<i32>::new());
}

#[tokio::test]
async fn the_deadline_kills_the_group_and_says_so() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    if !runs_commands(&sandbox, "the_deadline_kills_the_group_and_says_so") {
        return;
    }
    let started = Instant::now();
    let out = run(
        &sandbox,
        CommandRequest::new(
            "echo $$ > pgid.tmp && mv pgid.tmp pgid; sleep 1000 & echo before; sleep 1000",
        )
        .with_timeout(Duration::from_millis(500)),
    )
    .await;
    assert!(out.timed_out);
    assert_eq!(out.signal, Some(9));
    assert_eq!(out.exit_code, None);
    assert_eq!(out.stdout, "before\n");
    assert!(started.elapsed() < Duration::from_secs(30));
    let group = read_group_id(&fx.ws()).await;
    assert_eq!(wait_until_group_is_gone(group).await, Vec::<i32>::new());
}

#[tokio::test]
async fn background_children_do_not_outlive_the_command() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    if !runs_commands(&sandbox, "background_children_do_not_outlive_the_command") {
        return;
    }
    let started = Instant::now();
    let out = run(
        &sandbox,
        CommandRequest::new("echo $$ > pgid.tmp && mv pgid.tmp pgid; sleep 1000 & echo done"),
    )
    .await;
    assert_eq!((out.exit_code, out.stdout.as_str()), (Some(0), "done\n"));
    assert!(started.elapsed() < Duration::from_secs(30));
    let group = read_group_id(&fx.ws()).await;
    assert_eq!(wait_until_group_is_gone(group).await, Vec::<i32>::new());
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
    let sandbox = Sandbox::new(
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
    let out = run(&sandbox, CommandRequest::new("ulimit -f; ulimit -t")).await;
    assert_eq!(out.stdout, "8\n600\n");
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
    assert_eq!((out.exit_code, out.signal), (None, Some(15)));
    let err = sandbox
        .shell()
        .run(CommandRequest::new("  "), CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(err, ShellError::EmptyCommand);
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
        assert!(matches!(err, ShellError::Refused { .. }), "{cwd}: {err}");
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
