//! Warm environments under bubblewrap: one namespace serves command after
//! command, and each command is still on its own. Every test here attacks
//! the reuse: what one command leaves behind must never reach the next.

use std::time::Duration;

use tack_core::capability::{CommandOutput, CommandRequest};
use tack_sandbox::Sandbox;
use tokio_util::sync::CancellationToken;

use crate::fixture::{Fixture, in_bwrap, marker, survivors, wait_for_marker};

async fn run(sandbox: &Sandbox, command: &str) -> CommandOutput {
    sandbox
        .shell()
        .run(CommandRequest::new(command), CancellationToken::new())
        .await
        .unwrap()
}

/// The PID namespace a command runs in (its inode number).
async fn namespace(sandbox: &Sandbox) -> String {
    let out = run(sandbox, "stat -L -c %i /proc/self/ns/pid").await;
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    out.stdout.trim().to_owned()
}

/// A sandbox whose commands run inside bubblewrap, or `None` (printed).
fn bwrap_sandbox(fx: &Fixture, test: &str) -> Option<Sandbox> {
    let sandbox = fx.workspace_write();
    if !in_bwrap(&sandbox) {
        println!("{test}: skipped, commands do not run inside bubblewrap here");
        return None;
    }
    Some(sandbox)
}

#[tokio::test]
async fn a_clean_command_leaves_its_namespace_to_the_next() {
    let fx = Fixture::new();
    let Some(sandbox) = bwrap_sandbox(&fx, "a_clean_command_leaves_its_namespace_to_the_next")
    else {
        return;
    };
    let first = namespace(&sandbox).await;
    assert_eq!(
        namespace(&sandbox).await,
        first,
        "the namespace was not reused"
    );
    // The supervisor is the namespace's PID 1, out of the command's reach:
    // SIGKILL from inside is ignored, and the next command still runs.
    let out = run(&sandbox, "kill -9 1; kill -9 -1; echo still").await;
    assert_eq!(out.stdout, "still\n");
    assert_eq!(namespace(&sandbox).await, first);
}

#[tokio::test]
async fn background_processes_of_a_command_never_reach_the_next() {
    let fx = Fixture::new();
    let Some(sandbox) = bwrap_sandbox(
        &fx,
        "background_processes_of_a_command_never_reach_the_next",
    ) else {
        return;
    };
    let m = marker();
    // Detached in every way a shell allows: background, a new session, a
    // double fork, output redirected away from the pipes.
    let out = run(
        &sandbox,
        &format!(
            "sleep {m} & setsid sleep {m} & (sleep {m} &) ; nohup sleep {m} >/dev/null 2>&1 & echo started"
        ),
    )
    .await;
    assert_eq!(out.stdout, "started\n");
    assert_eq!(survivors(&m).await, Vec::<i32>::new());
    let out = run(
        &sandbox,
        &format!("ps -eo args | grep -c '^sleep {m}' || true"),
    )
    .await;
    assert_eq!(out.stdout.trim(), "0", "{out:?}");
}

#[tokio::test]
async fn a_file_left_in_the_private_tmp_ends_the_namespace() {
    let fx = Fixture::new();
    let Some(sandbox) = bwrap_sandbox(&fx, "a_file_left_in_the_private_tmp_ends_the_namespace")
    else {
        return;
    };
    let first = namespace(&sandbox).await;
    let out = run(
        &sandbox,
        "echo secret > /tmp/left; echo x > /dev/shm/.hidden",
    )
    .await;
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    let out = run(
        &sandbox,
        "cat /tmp/left /dev/shm/.hidden 2>&1; ls -A /tmp /dev/shm",
    )
    .await;
    assert!(!out.stdout.contains("secret"), "{out:?}");
    assert!(!out.stdout.contains(".hidden\n"), "{out:?}");
    assert_ne!(
        namespace(&sandbox).await,
        first,
        "the dirty namespace was reused"
    );
}

#[tokio::test]
async fn a_system_v_object_left_behind_ends_the_namespace() {
    let fx = Fixture::new();
    let Some(sandbox) = bwrap_sandbox(&fx, "a_system_v_object_left_behind_ends_the_namespace")
    else {
        return;
    };
    if !std::path::Path::new("/usr/bin/ipcmk").exists() {
        println!("a_system_v_object_left_behind_ends_the_namespace: skipped, no ipcmk");
        return;
    }
    let first = namespace(&sandbox).await;
    let out = run(&sandbox, "ipcmk -M 4096").await;
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    let out = run(&sandbox, "tail -n +2 /proc/sysvipc/shm | wc -l").await;
    assert_eq!(
        out.stdout.trim(),
        "0",
        "the segment reached the next command"
    );
    assert_ne!(namespace(&sandbox).await, first);
}

/// A command that forges the supervisor's answer (it can reach PID 1's
/// stdout through `/proc/1/fd/1`) and leaves a process running: the host
/// does not take the answer's word, and nothing survives.
#[tokio::test]
async fn a_forged_answer_does_not_keep_a_process_alive() {
    let fx = Fixture::new();
    let Some(sandbox) = bwrap_sandbox(&fx, "a_forged_answer_does_not_keep_a_process_alive") else {
        return;
    };
    let m = marker();
    let forged = format!(
        "sleep {m} & for n in 1 2 3; do echo \"exit 0 0 0 \" > /proc/1/fd/1; echo \"started 0\" > /proc/1/fd/1; done 2>/dev/null; echo done"
    );
    let out = sandbox
        .shell()
        .run(CommandRequest::new(forged), CancellationToken::new())
        .await;
    // Whatever the command got (its output, or an error for the broken
    // environment), its process is gone and the next command runs.
    drop(out);
    assert_eq!(survivors(&m).await, Vec::<i32>::new());
    let out = run(&sandbox, "echo next").await;
    assert_eq!(out.stdout, "next\n");
    assert_eq!(out.exit_code, Some(0));
}

#[tokio::test]
async fn limits_a_command_sets_stay_with_it() {
    let fx = Fixture::new();
    let Some(sandbox) = bwrap_sandbox(&fx, "limits_a_command_sets_stay_with_it") else {
        return;
    };
    let before = run(&sandbox, "ulimit -t; ulimit -n").await.stdout;
    let out = run(
        &sandbox,
        "ulimit -t 1; ulimit -n 16; cd /; export X=1; ulimit -t",
    )
    .await;
    assert_eq!(out.stdout, "1\n");
    let after = run(&sandbox, "ulimit -t; ulimit -n; echo \"[$X]\"; pwd").await;
    assert_eq!(
        after.stdout,
        format!(
            "{before}[]\n{}\n",
            fx.ws().canonicalize().unwrap().display()
        )
    );
}

#[tokio::test]
async fn a_timeout_ends_the_namespace_and_the_next_command_gets_a_fresh_one() {
    let fx = Fixture::new();
    let Some(sandbox) = bwrap_sandbox(
        &fx,
        "a_timeout_ends_the_namespace_and_the_next_command_gets_a_fresh_one",
    ) else {
        return;
    };
    let first = namespace(&sandbox).await;
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
    assert_eq!((out.exit_code, out.signal), (None, Some(9)));
    assert_eq!(survivors(&m).await, Vec::<i32>::new());
    assert_ne!(namespace(&sandbox).await, first);
}

#[tokio::test]
async fn a_cancelled_command_takes_its_namespace_with_it() {
    let fx = Fixture::new();
    let Some(sandbox) = bwrap_sandbox(&fx, "a_cancelled_command_takes_its_namespace_with_it")
    else {
        return;
    };
    let m = marker();
    let cancel = CancellationToken::new();
    let shell = sandbox.shell();
    let running = tokio::spawn({
        let cancel = cancel.clone();
        let command = format!("sleep {m} & sleep {m}");
        async move { shell.run(CommandRequest::new(command), cancel).await }
    });
    wait_for_marker(&m, 2).await;
    cancel.cancel();
    assert!(running.await.unwrap().is_err());
    assert_eq!(survivors(&m).await, Vec::<i32>::new());
    assert_eq!(run(&sandbox, "echo after").await.stdout, "after\n");
}

#[tokio::test]
async fn commands_running_together_get_a_namespace_each() {
    let fx = Fixture::new();
    let Some(sandbox) = bwrap_sandbox(&fx, "commands_running_together_get_a_namespace_each") else {
        return;
    };
    let both = futures_join(
        run(&sandbox, "sleep 0.3; stat -L -c %i /proc/self/ns/pid"),
        run(&sandbox, "sleep 0.3; stat -L -c %i /proc/self/ns/pid"),
    )
    .await;
    assert_ne!(
        both.0.stdout, both.1.stdout,
        "two commands shared a namespace"
    );
}

async fn futures_join<A: std::future::Future, B: std::future::Future>(
    a: A,
    b: B,
) -> (A::Output, B::Output) {
    tokio::join!(a, b)
}

/// A protected entry the host creates between two commands (a nested
/// repository) is read-only to the next command: the namespace its mounts
/// came from is not reused.
#[tokio::test]
async fn a_protected_path_appearing_between_commands_is_mounted_read_only() {
    let fx = Fixture::new();
    let Some(sandbox) = bwrap_sandbox(
        &fx,
        "a_protected_path_appearing_between_commands_is_mounted_read_only",
    ) else {
        return;
    };
    let first = namespace(&sandbox).await;
    let hooks = fx.ws().join("sub/.git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let out = run(&sandbox, "echo evil > sub/.git/hooks/pre-commit").await;
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    assert!(!hooks.join("pre-commit").exists());
    assert_ne!(namespace(&sandbox).await, first);
}

#[tokio::test]
async fn stdin_and_a_multi_line_command_reach_the_command_unchanged() {
    let fx = Fixture::new();
    let Some(sandbox) = bwrap_sandbox(
        &fx,
        "stdin_and_a_multi_line_command_reach_the_command_unchanged",
    ) else {
        return;
    };
    let out = sandbox
        .shell()
        .run(
            CommandRequest::new(
                "read a\necho \"got $a\"\n>x echo 'a\n>b'\ncat x; echo \"[$1][$#]\"",
            )
            .with_stdin("line one\n"),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.stdout, "got line one\na\n>b\n[][0]\n", "{out:?}");
    let out = run(&sandbox, "cat").await;
    assert_eq!(out.stdout, "", "stdin of the last command leaked: {out:?}");
}

/// A NUL byte in the command is refused, as without a warm environment:
/// it never reaches the supervisor, whose `read` would drop it and run the
/// text around it as one command.
#[tokio::test]
async fn a_nul_byte_in_the_command_is_refused_not_dropped() {
    let fx = Fixture::new();
    let Some(sandbox) = bwrap_sandbox(&fx, "a_nul_byte_in_the_command_is_refused_not_dropped")
    else {
        return;
    };
    let result = sandbox
        .shell()
        .run(
            CommandRequest::new("echo a\0; touch made"),
            CancellationToken::new(),
        )
        .await;
    assert!(result.is_err(), "{result:?}");
    assert!(!fx.ws().join("made").exists());
    assert_eq!(run(&sandbox, "echo next").await.stdout, "next\n");
}

/// A command in a warm environment runs in a subshell of the supervisor;
/// it must look like a shell started for it, as on the floor: no
/// positional parameters, no variable or trap of the supervisor's, `$0` the
/// shell, `SECONDS` from zero, and no signal ignored (a background job of a
/// shell without job control has `SIGINT` and `SIGQUIT` ignored).
#[tokio::test]
async fn a_command_sees_a_shell_started_for_it() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    if !crate::fixture::runs_commands(&sandbox, "a_command_sees_a_shell_started_for_it") {
        return;
    }
    let shell = tack_sandbox::probe_isolation().shell;
    if shell.file_name().is_none_or(|name| name != "bash") {
        println!(
            "a_command_sees_a_shell_started_for_it: skipped, commands do not run in bash here"
        );
        return;
    }
    // The signals a shell the host starts ignores (those the host itself
    // ignores, inherited), for comparison.
    let bare = std::process::Command::new(&shell)
        .args(["-c", "grep SigIgn /proc/self/status"])
        .output()
        .unwrap();
    let ignored = String::from_utf8(bare.stdout).unwrap();
    assert!(ignored.starts_with("SigIgn:"), "{ignored}");
    // What `trap -p` shows in a shell the host starts: the signals ignored
    // when it started (a host started under `nohup` ignores SIGHUP).
    let bare_traps = std::process::Command::new(&shell)
        .args(["-c", "trap -p | wc -l"])
        .output()
        .unwrap();
    let traps = String::from_utf8(bare_traps.stdout).unwrap();
    // The first runs in a forked subshell, the second (it names `trap`)
    // in a bash started anew; each twice: the second time in the
    // environment the first warmed.
    let forked = "echo \"[$#][${OLDPWD-unset}][$0][$SECONDS]\"; grep SigIgn /proc/self/status; \
                  declare -p d n m w c s l i r k b f t v g p 2>/dev/null | wc -l";
    let started = format!("{forked}; trap -p | wc -l");
    let expected = format!("[0][unset][{}][0]\n{ignored}0\n", shell.display());
    for _ in 0..2 {
        let out = run(&sandbox, forked).await;
        assert_eq!(out.stdout, expected, "{out:?}");
        let out = run(&sandbox, &started).await;
        assert_eq!(out.stdout, format!("{expected}{traps}"), "{out:?}");
    }
}

/// `kill -SIGNAL $$` reaches the command's own shell, as it does for a
/// shell started for the command, and a trap the command sets sees it;
/// the environment stays usable afterwards.
#[tokio::test]
async fn a_signal_to_dollar_dollar_reaches_the_commands_shell() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    if !crate::fixture::runs_commands(
        &sandbox,
        "a_signal_to_dollar_dollar_reaches_the_commands_shell",
    ) {
        return;
    }
    let out = run(
        &sandbox,
        "trap 'echo caught; exit 5' USR1; kill -USR1 $$; sleep 5; echo missed",
    )
    .await;
    assert_eq!(
        (out.stdout.as_str(), out.exit_code),
        ("caught\n", Some(5)),
        "{out:?}"
    );
    let out = run(&sandbox, "kill -INT $$; echo missed").await;
    assert_eq!(out.stdout, "", "{out:?}");
    assert_eq!(
        out.exit_code.or(out.signal.map(|s| 128 + s)),
        Some(130),
        "{out:?}"
    );
    let out = run(&sandbox, "echo next").await;
    assert_eq!(out.stdout, "next\n");
}

/// A command holds no descriptor of the supervisor's (its request and
/// answer pipes, the FIFOs) nor one the host inherited without
/// close-on-exec: only stdin, stdout and stderr, forked or started anew.
/// (`ls` adds one of its own, the directory it lists.)
#[tokio::test]
async fn a_command_holds_only_its_own_descriptors() {
    use std::os::fd::AsFd;
    let fx = Fixture::new();
    // Inherited by every process the test starts, unless closed.
    let inherited = tempfile::tempfile().unwrap();
    nix::fcntl::fcntl(
        inherited.as_fd(),
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
    )
    .unwrap();
    let sandbox = fx.workspace_write();
    if !crate::fixture::runs_commands(&sandbox, "a_command_holds_only_its_own_descriptors") {
        return;
    }
    for command in ["ls /proc/self/fd", "ls /proc/self/fd # PPID: started anew"] {
        for _ in 0..2 {
            let out = run(&sandbox, command).await;
            assert_eq!(out.stdout, "0\n1\n2\n3\n", "{command}: {out:?}");
        }
    }
    drop(inherited);
}
