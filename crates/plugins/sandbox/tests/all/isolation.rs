//! OS isolation: what Landlock does to real commands on this kernel.

use std::time::Duration;

use tack_core::capability::{CapabilityError, CommandOutput, CommandRequest};
use tack_sandbox::{CommandAdmission, Enforcement, Sandbox, SandboxPolicy, probe_isolation};
use tokio_util::sync::CancellationToken;

use crate::fixture::Fixture;

async fn run(sandbox: &Sandbox, command: String) -> Result<CommandOutput, CapabilityError> {
    sandbox
        .shell()
        .run(
            CommandRequest::new(command).with_timeout(Duration::from_secs(30)),
            CancellationToken::new(),
        )
        .await
}

/// `name=status` lines of a probe's output.
fn statuses(stdout: &str) -> std::collections::HashMap<String, String> {
    stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// `None` (with the reason printed) when this kernel has no Landlock.
fn landlock_abi(test: &str) -> Option<u32> {
    let status = probe_isolation();
    if status.landlock_abi.is_none() {
        println!(
            "{test}: skipped, Landlock is unavailable here: {}",
            status.landlock_unavailable.unwrap_or_default()
        );
    }
    status.landlock_abi
}

#[test]
fn the_probe_is_cached_and_consistent() {
    let status = probe_isolation();
    println!("{status}");
    assert_eq!(status, probe_isolation());
    assert_eq!(
        status.landlock_abi.is_some(),
        status.landlock_unavailable.is_none()
    );
    assert_eq!(
        status.tcp_restriction,
        status.landlock_abi.is_some_and(|v| v >= 4)
    );
}

#[tokio::test]
async fn commands_cannot_write_outside_the_workspace() {
    let Some(abi) = landlock_abi("commands_cannot_write_outside_the_workspace") else {
        return;
    };
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    let policy = sandbox.status().policy.unwrap();
    let expected = if abi >= 5 || crate::fixture::in_bwrap(&sandbox) {
        Enforcement::Enforced
    } else {
        Enforcement::Partial
    };
    assert_eq!(policy.filesystem, expected);
    assert_eq!(policy.commands, CommandAdmission::Run);

    let outside = fx.outside().join("landlock-escape.txt");
    let etc = format!("/etc/tack-sandbox-escape-{}", std::process::id());
    let out = run(
        &sandbox,
        format!(
            "echo x > '{}'; echo outside=$?; echo x > '{etc}'; echo etc=$?; \
             echo y > inside.txt; echo inside=$?; echo t > \"$TMPDIR/t\"; echo tmp=$?; \
             echo z > /dev/null; echo null=$?; rm -f '{}/secret.txt'; echo rm=$?; \
             ln '{}/secret.txt' hard-link 2>/dev/null; echo link=$?; \
             grep NoNewPrivs /proc/self/status | tr -d ' \t'",
            outside.display(),
            fx.outside().display(),
            fx.outside().display()
        ),
    )
    .await
    .unwrap();
    // Exit statuses differ between shells and layers (Landlock: EACCES;
    // bubblewrap: EROFS, and the outside temp dir is not even visible); what
    // matters is which succeeded.
    let status = statuses(&out.stdout);
    for failed in ["outside", "etc", "link"] {
        assert_ne!(status[failed], "0", "{failed}: {out:?}");
    }
    for worked in ["inside", "tmp", "null"] {
        assert_eq!(status[worked], "0", "{worked}: {out:?}");
    }
    assert!(out.stdout.contains("NoNewPrivs:1"), "{out:?}");
    assert!(!outside.exists());
    assert!(!std::path::Path::new(&etc).exists());
    assert!(fx.outside().join("secret.txt").exists());
    assert!(!fx.ws.path().join("hard-link").exists());
    assert_eq!(
        std::fs::read(fx.ws.path().join("inside.txt")).unwrap(),
        b"y\n"
    );
}

/// Commands cannot signal processes outside their sandbox (this test process
/// included) where the kernel scopes signals (Landlock ABI 6+).
#[tokio::test]
async fn commands_cannot_signal_the_host() {
    let Some(abi) = landlock_abi("commands_cannot_signal_the_host") else {
        return;
    };
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    let probe = format!(
        "kill -0 {} 2>/dev/null; echo host=$?; kill -0 $$; echo self=$?",
        std::process::id()
    );
    let out = run(&sandbox, probe.clone()).await.unwrap();
    if abi < 6 {
        assert_eq!(
            sandbox.status().policy.unwrap().signals,
            Enforcement::Unavailable
        );
        println!(
            "commands_cannot_signal_the_host: ABI {abi} has no signal scoping; checked that the status says so"
        );
        return;
    }
    assert_eq!(
        sandbox.status().policy.unwrap().signals,
        Enforcement::Enforced
    );
    assert_eq!(out.stdout, "host=1\nself=0\n", "{out:?}");
    let open = crate::fixture::sandbox(SandboxPolicy::full_access(fx.ws.path())).unwrap();
    assert_eq!(
        open.status().policy.unwrap().signals,
        Enforcement::NotRequested
    );
    assert_eq!(run(&open, probe).await.unwrap().stdout, "host=0\nself=0\n");
}

#[tokio::test]
async fn read_only_commands_write_only_dev_null() {
    let Some(_) = landlock_abi("read_only_commands_write_only_dev_null") else {
        return;
    };
    let fx = Fixture::new();
    std::fs::write(fx.ws.path().join("keep.txt"), b"keep").unwrap();
    let sandbox = crate::fixture::sandbox(SandboxPolicy::read_only(fx.ws.path())).unwrap();
    let out = run(
        &sandbox,
        "cat keep.txt; echo; echo x > new.txt; echo new=$?; echo x >> keep.txt; echo append=$?; \
         mkdir d; echo mkdir=$?; echo x > /dev/null; echo null=$?; echo x > /tmp/ro-$$; echo tmp=$?"
            .to_owned(),
    )
    .await
    .unwrap();
    assert!(out.stdout.starts_with("keep\n"), "{out:?}");
    let status = statuses(&out.stdout);
    for failed in ["new", "append", "mkdir", "tmp"] {
        assert_ne!(status[failed], "0", "{failed}: {out:?}");
    }
    assert_eq!(status["null"], "0", "{out:?}");
    assert_eq!(
        std::fs::read(fx.ws.path().join("keep.txt")).unwrap(),
        b"keep"
    );
    assert!(!fx.ws.path().join("new.txt").exists());
}

#[tokio::test]
async fn full_access_commands_are_not_confined() {
    let fx = Fixture::new();
    let sandbox = crate::fixture::sandbox(SandboxPolicy::full_access(fx.ws.path())).unwrap();
    let policy = sandbox.status().policy.unwrap();
    assert_eq!(policy.filesystem, Enforcement::NotRequested);
    assert_eq!(policy.network, Enforcement::NotRequested);
    let target = fx.outside().join("allowed.txt");
    let out = run(&sandbox, format!("echo x > '{}'", target.display()))
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert!(target.exists());
}

/// TCP connect to a listener on this host: denied without network (where the
/// kernel can restrict TCP), allowed with it.
#[tokio::test]
async fn tcp_is_denied_unless_the_network_is_allowed() {
    let status = probe_isolation();
    if !status.tcp_restriction {
        println!(
            "tcp_is_denied_unless_the_network_is_allowed: skipped, this kernel cannot restrict TCP ({status})"
        );
        return;
    }
    if !std::path::Path::new("/bin/bash").exists() {
        println!(
            "tcp_is_denied_unless_the_network_is_allowed: skipped, needs /bin/bash for /dev/tcp"
        );
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect =
        format!("/bin/bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' 2>/dev/null; echo connect=$?");
    let fx = Fixture::new();

    let denied = fx.workspace_write();
    assert_eq!(
        denied.status().policy.unwrap().network,
        Enforcement::Enforced
    );
    let out = run(&denied, connect.clone()).await.unwrap();
    assert_eq!(out.stdout, "connect=1\n", "{out:?}");

    let allowed =
        crate::fixture::sandbox(SandboxPolicy::workspace_write(fx.ws.path()).with_network(true))
            .unwrap();
    assert_eq!(
        allowed.status().policy.unwrap().network,
        Enforcement::NotRequested
    );
    let out = run(&allowed, connect).await.unwrap();
    assert_eq!(out.stdout, "connect=0\n", "{out:?}");
}

/// SBX-021: where the kernel cannot confine, required isolation means the
/// command never runs; where it can, the command runs confined.
#[tokio::test]
async fn required_isolation_never_falls_back_silently() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    let result = run(&sandbox, "touch ran".to_owned()).await;
    match sandbox.status().policy.unwrap().commands {
        CommandAdmission::Refused { reason } => {
            assert_eq!(result, Err(CapabilityError::CommandRefused { reason }));
            assert!(!fx.ws.path().join("ran").exists());
        }
        CommandAdmission::Run => {
            assert_eq!(result.unwrap().exit_code, Some(0));
            assert!(fx.ws.path().join("ran").exists());
        }
        other => panic!("isolation is required, yet commands are admitted as {other:?}"),
    }
}
