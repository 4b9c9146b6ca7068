//! Protected paths: `.git`, `.tack` and the other entries of
//! `DEFAULT_PROTECTED` are read-only to the tools in every writable preset
//! unless the user lifts the protection.

use std::path::Path;
use std::time::Duration;

use tack_core::capability::{CapabilityError, CommandRequest};
use tack_sandbox::{Enforcement, SandboxPolicy};
use tokio_util::sync::CancellationToken;

use crate::fixture::{Fixture, in_bwrap, runs_commands, sandbox, snapshot};

fn repo(fx: &Fixture) {
    let ws = fx.ws.path();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(ws.join(".tack/sessions")).unwrap();
    std::fs::write(ws.join(".tack/sessions/1.jsonl"), "{}\n").unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
}

fn refused(result: Result<impl std::fmt::Debug, CapabilityError>, what: &str) -> String {
    match result {
        Err(CapabilityError::Refused { reason, .. }) => reason,
        other => panic!("{what}: expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn the_fs_capability_cannot_change_protected_paths() {
    let presets: [fn(&Path) -> SandboxPolicy; 2] = [
        |p| SandboxPolicy::workspace_write(p),
        |p| SandboxPolicy::full_access(p),
    ];
    for policy in presets {
        let fx = Fixture::new();
        repo(&fx);
        std::os::unix::fs::symlink(".git", fx.ws.path().join("innocent")).unwrap();
        let before = snapshot(fx.ws.path());
        let sb = sandbox(policy(fx.ws.path())).unwrap();
        let fs = sb.fs();
        let reason = refused(
            fs.write(Path::new(".git/config"), b"[core]\nfsmonitor = evil\n")
                .await,
            "write .git/config",
        );
        assert!(reason.contains("is protected (`**/.git`)"), "{reason}");
        assert!(reason.contains("without_protected"), "{reason}");
        refused(
            fs.write(Path::new(".git/hooks/pre-commit"), b"#!/bin/sh\nevil\n")
                .await,
            "plant a hook",
        );
        refused(
            fs.write(Path::new("innocent/hooks/post-checkout"), b"evil")
                .await,
            "through a symlink",
        );
        refused(fs.create_dir_all(Path::new(".git/hooks/x")).await, "mkdir");
        refused(fs.remove(Path::new(".git"), true).await, "remove .git");
        refused(
            fs.remove(Path::new(".git/config"), false).await,
            "remove config",
        );
        refused(
            fs.write(Path::new(".tack/sessions/1.jsonl"), b"").await,
            "truncate the log",
        );
        refused(
            fs.write(Path::new(".tack/sessions/2.jsonl"), b"{\"forged\":1}")
                .await,
            "forge a log",
        );
        // Reading stays allowed; other paths are writable.
        assert_eq!(
            fs.read_to_string(Path::new(".git/config")).await.unwrap(),
            "[core]\n"
        );
        let meta = fs.metadata(Path::new(".git/config")).await.unwrap();
        assert!(!meta.writable);
        assert_eq!(snapshot(fx.ws.path()), before, "a protected path changed");
        fs.write(Path::new("src/main.rs"), b"fn main() {}")
            .await
            .unwrap();
        fs.remove(Path::new("src"), true).await.unwrap();
    }
}

#[tokio::test]
async fn a_listing_says_which_entries_the_tools_may_write() {
    let fx = Fixture::new();
    repo(&fx);
    std::os::unix::fs::symlink(".git", fx.ws.path().join("innocent")).unwrap();
    std::os::unix::fs::symlink("src", fx.ws.path().join("src-link")).unwrap();
    let writable = |sb: &tack_sandbox::Sandbox| {
        let fs = sb.fs();
        async move {
            let listing = fs.list(Path::new(".")).await.unwrap();
            let mut seen: Vec<(String, bool)> =
                listing.into_iter().map(|e| (e.name, e.writable)).collect();
            for (name, writable) in &seen {
                let meta = fs.metadata(Path::new(name)).await.unwrap();
                assert_eq!(meta.writable, *writable, "{name}");
            }
            seen.sort();
            seen
        }
    };
    let sb = sandbox(SandboxPolicy::workspace_write(fx.ws.path())).unwrap();
    let expected = |open: bool| {
        [".git", ".tack", "innocent", "src", "src-link"]
            .map(|name| (name.to_owned(), open && name.starts_with("src")))
    };
    assert_eq!(writable(&sb).await, expected(true));
    let sb = sandbox(SandboxPolicy::read_only(fx.ws.path())).unwrap();
    assert_eq!(writable(&sb).await, expected(false));
}

#[tokio::test]
async fn the_user_can_lift_the_protection() {
    let fx = Fixture::new();
    repo(&fx);
    let sb =
        sandbox(SandboxPolicy::workspace_write(fx.ws.path()).without_protected("**/.git")).unwrap();
    let fs = sb.fs();
    fs.write(Path::new(".git/hooks/pre-commit"), b"ok")
        .await
        .unwrap();
    refused(
        fs.write(Path::new(".tack/x"), b"").await,
        ".tack still protected",
    );
    let custom =
        sandbox(SandboxPolicy::workspace_write(fx.ws.path()).with_protected("ci/**")).unwrap();
    refused(
        custom.fs().write(Path::new("ci/deploy.sh"), b"").await,
        "custom",
    );
}

#[tokio::test]
async fn commands_cannot_change_protected_paths_inside_bubblewrap() {
    let fx = Fixture::new();
    repo(&fx);
    let sb = fx.workspace_write();
    if !runs_commands(
        &sb,
        "commands_cannot_change_protected_paths_inside_bubblewrap",
    ) {
        return;
    }
    let policy = sb.status().policy.unwrap();
    if !in_bwrap(&sb) {
        // The floor cannot make part of a writable root read-only, and says
        // so; it puts a command's changes back when it ends (tested in
        // protected_floor.rs).
        assert_eq!(policy.protected, Enforcement::Partial);
        println!(
            "commands_cannot_change_protected_paths_inside_bubblewrap: floor: not read-only to commands, changes put back"
        );
        return;
    }
    assert_eq!(policy.protected, Enforcement::Enforced);
    let before = snapshot(fx.ws.path());
    let out = sb
        .shell()
        .run(
            CommandRequest::new(
                "echo evil >> .git/config; echo config=$?; echo evil > .git/hooks/pre-commit; echo hook=$?; \
                 chmod 777 .git/config; echo chmod=$?; rm -rf .git 2>/dev/null; echo rm=$?; \
                 : > .tack/sessions/1.jsonl; echo log=$?; echo ok > src/file; echo src=$?",
            )
            .with_timeout(Duration::from_secs(30)),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    // `rm -rf` of a read-only mount point may report success while removing
    // nothing: the snapshot below is what proves it.
    for line in ["config", "hook", "chmod", "log"] {
        assert!(
            !out.stdout.contains(&format!("{line}=0\n")),
            "{line}: {out:?}"
        );
    }
    assert!(out.stdout.contains("src=0\n"), "{out:?}");
    let mut after = snapshot(fx.ws.path());
    after.remove(&fx.ws.path().join("src/file"));
    assert_eq!(after, before, "a protected path changed");
}
