//! The kernel-only floor cannot keep the existing protected entries
//! read-only to commands (Landlock grants whole trees): what a command
//! changes inside them is put back once its processes are gone. These
//! tests run on the floor whatever this machine has, through real
//! commands, and check the workspace and the directory outside afterwards.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tack_sandbox::{Namespaces, Sandbox, SandboxPolicy};

use crate::fixture::{Fixture, git_binary as git, run_command as run, runs_commands, snapshot};

/// The test's workspace (see [`workspace`]) and a sandbox over it on the
/// floor; `None` (said) where this kernel cannot confine commands.
fn floor_workspace(test: &str) -> Option<(Fixture, Sandbox)> {
    let fx = Fixture::new();
    workspace(&fx);
    let sb = Sandbox::new(
        SandboxPolicy::workspace_write(fx.ws.path()).with_namespaces(Namespaces::Disabled),
    )
    .unwrap();
    runs_commands(&sb, test).then_some((fx, sb))
}

/// A repository with a nested one (made by git where it is installed) and
/// another tool's configuration.
fn workspace(fx: &Fixture) {
    let ws = fx.ws();
    for repo in [ws.clone(), ws.join("vendor/lib")] {
        std::fs::create_dir_all(&repo).unwrap();
        match git() {
            Some(git) => {
                let status = std::process::Command::new(git)
                    .args(["init", "-q"])
                    .current_dir(&repo)
                    .status()
                    .unwrap();
                assert!(status.success());
            }
            None => {
                std::fs::create_dir_all(repo.join(".git/hooks")).unwrap();
                std::fs::create_dir_all(repo.join(".git/objects")).unwrap();
                std::fs::create_dir_all(repo.join(".git/info")).unwrap();
                std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
                std::fs::write(repo.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
            }
        }
        std::fs::write(repo.join(".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n").unwrap();
    }
    std::fs::create_dir_all(ws.join(".vscode")).unwrap();
    std::fs::write(ws.join(".vscode/settings.json"), "{}\n").unwrap();
    // Read-only: what goes back inside it goes back before its mode does.
    std::fs::set_permissions(
        ws.join(".vscode"),
        std::os::unix::fs::PermissionsExt::from_mode(0o555),
    )
    .unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
}

/// Everything under the workspace but git's data (objects, refs, logs,
/// the index) and sample hooks (git never runs a `.sample` file), with each
/// file's bytes and each path's permission bits.
fn state(root: &Path) -> BTreeMap<PathBuf, (Option<Vec<u8>>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    snapshot(root)
        .into_iter()
        .filter(|(p, _)| {
            !p.components().any(|c| {
                matches!(
                    c.as_os_str().to_str(),
                    Some("objects" | "refs" | "logs" | "index" | "ORIG_HEAD" | "COMMIT_EDITMSG")
                )
            }) && p.extension().is_none_or(|e| e != "sample")
        })
        .map(|(p, bytes)| {
            let mode = std::fs::symlink_metadata(&p).unwrap().permissions().mode();
            (p, (bytes, mode & 0o7777))
        })
        .collect()
}

const ATTACK: &str = "\
    printf '[core]\\n\\tfsmonitor = touch \"$PWNED\"; false\\n' >> .git/config; echo config=$?
    printf '[core]\\n\\tfsmonitor = touch \"$PWNED\"; false\\n' >> vendor/lib/.git/config; echo nested=$?
    printf '#!/bin/sh\\ntouch \"$PWNED\"\\n' > vendor/lib/.git/hooks/post-checkout; chmod +x vendor/lib/.git/hooks/post-checkout; echo hook=$?
    chmod 777 .git/hooks/pre-commit; echo chmod=$?
    chmod 000 vendor/lib/.git/config .git/info; echo locked=$?
    mkdir -p .git/hooks/deeper/still; echo x > .git/hooks/deeper/still/file
    chmod 755 .vscode; rm .vscode/settings.json; echo '{\"tasks\":[{\"command\":\"evil\"}]}' > .vscode/tasks.json; echo vscode=$?
    rm -rf vendor/lib/.git/hooks && ln -s \"$OUTSIDE\" vendor/lib/.git/hooks; echo swap=$?
    ln -sf /etc vendor/lib/.git/info 2>/dev/null
    echo kept > src/file; echo src=$?
";

#[tokio::test]
async fn the_floor_puts_back_what_a_command_changed_in_protected_entries() {
    let Some((fx, sb)) =
        floor_workspace("the_floor_puts_back_what_a_command_changed_in_protected_entries")
    else {
        return;
    };
    let pwned = fx.outside().join("pwned");
    let before = state(&fx.ws());
    let outside = fx.outside_snapshot();
    let script = ATTACK
        .replace("$PWNED", &pwned.display().to_string())
        .replace("$OUTSIDE", &fx.outside().display().to_string());
    let out = run(&sb, &script).await;
    // On the floor the writes themselves succeed…
    for line in [
        "config", "nested", "hook", "chmod", "locked", "vscode", "swap", "src",
    ] {
        assert!(
            out.stdout.contains(&format!("{line}=0\n")),
            "{line}: {out:?}"
        );
    }
    // …and are undone before the call returns.
    let mut after = state(&fx.ws());
    let src = after.remove(&fx.ws().join("src/file"));
    assert_eq!(src.and_then(|(bytes, _)| bytes), Some(b"kept\n".to_vec()));
    assert_eq!(after, before, "a protected path kept a change: {out:?}");
    assert_eq!(
        fx.outside_snapshot(),
        outside,
        "the directory outside changed"
    );
    for expected in [
        "tack: put back .git/config as it was before this command",
        "tack: put back vendor/lib/.git/config",
        "tack: made vendor/lib/.git/hooks again",
        "tack: set the permissions of .git/hooks/pre-commit back",
        "tack: removed .git/hooks/deeper,",
        "tack: made .vscode/settings.json again",
        "tack: set the permissions of .vscode back",
        "tack: removed .vscode/tasks.json",
        "SandboxPolicy::without_protected(\"**/.git\")",
    ] {
        assert!(out.stderr.contains(expected), "{expected}: {}", out.stderr);
    }
    assert!(!out.stderr.contains("could NOT"), "{}", out.stderr);
    if let Some(git) = git() {
        for repo in [fx.ws(), fx.ws().join("vendor/lib")] {
            let status = std::process::Command::new(&git)
                .args(["status", "--porcelain"])
                .current_dir(&repo)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", fx.outside())
                .output()
                .unwrap();
            assert!(status.status.success(), "{status:?}");
        }
        assert!(!pwned.exists(), "a planted fsmonitor or hook ran");
    }
}

/// Files left unchanged for a while are compared by their `stat`, and
/// their bytes come from the record of the command before: a write of the
/// same length in the first instant of the next command is still seen (its
/// change time moves), and still undone.
#[tokio::test]
async fn a_same_length_write_to_a_settled_file_is_undone() {
    let Some((fx, sb)) = floor_workspace("a_same_length_write_to_a_settled_file_is_undone") else {
        return;
    };
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let config = std::fs::read(fx.ws().join(".git/config")).unwrap();
    // The first command records the settled files (and keeps their bytes).
    let out = run(&sb, "true").await;
    assert_eq!(out.stderr, "", "{out:?}");
    let path = fx.ws().join(".git/config");
    // `cat >` writes the same file (same inode) in place.
    let out = run(
        &sb,
        "tr '[:lower:]' '[:upper:]' < .git/config > \"$TMPDIR/c\" && cat \"$TMPDIR/c\" > .git/config; echo done",
    )
    .await;
    assert!(out.stdout.contains("done"), "{out:?}");
    assert_eq!(std::fs::read(&path).unwrap(), config, "{out:?}");
    assert!(
        out.stderr.contains("tack: put back .git/config"),
        "{}",
        out.stderr
    );
}

/// Git's own data is the command's to change on the floor (inside
/// bubblewrap the whole `.git` is read-only): a commit's objects stay.
#[tokio::test]
async fn git_data_written_by_a_command_stays() {
    let Some((fx, sb)) = floor_workspace("git_data_written_by_a_command_stays") else {
        return;
    };
    let out = run(
        &sb,
        "mkdir -p .git/objects/ab && echo blob > .git/objects/ab/cd && echo x >> .git/index; echo done",
    )
    .await;
    assert!(out.stdout.contains("done"), "{out:?}");
    assert_eq!(out.stderr, "", "{out:?}");
    assert!(fx.ws().join(".git/objects/ab/cd").is_file());
}

/// Thousands of files added inside a protected directory (named to come
/// first) neither hide a change made next to them nor stay.
#[tokio::test]
async fn a_flood_of_additions_hides_no_change() {
    let Some((fx, sb)) = floor_workspace("a_flood_of_additions_hides_no_change") else {
        return;
    };
    let before = state(&fx.ws());
    let out = run(
        &sb,
        "mkdir -p .git/hooks/000/deep; for i in $(seq 3000); do : > .git/hooks/000/deep/$i; : > .git/hooks/0$i; done; \
         echo '[core] fsmonitor = evil' >> .git/config; echo done",
    )
    .await;
    assert!(out.stdout.contains("done"), "{out:?}");
    assert_eq!(state(&fx.ws()), before, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("tack: and 2982 more paths inside protected entries"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("tack: put back .git/config"),
        "{}",
        out.stderr
    );
}

/// A command that renames a directory holding a nested repository moves
/// the repository with it (its history stays), and what it changed in the
/// repository before moving it is put back where it is now.
#[tokio::test]
async fn a_moved_repository_keeps_its_history_and_loses_the_change() {
    let Some((fx, sb)) =
        floor_workspace("a_moved_repository_keeps_its_history_and_loses_the_change")
    else {
        return;
    };
    if std::fs::metadata(fx.ws())
        .and_then(|m| m.created())
        .is_err()
    {
        println!(
            "a_moved_repository_keeps_its_history_and_loses_the_change: skipped, no birth times here"
        );
        return;
    }
    let lib = fx.ws().join("vendor/lib");
    std::fs::write(lib.join(".git/objects/history"), "commits\n").unwrap();
    let config = std::fs::read(lib.join(".git/config")).unwrap();
    let out = run(
        &sb,
        "echo '[core] fsmonitor = evil' >> vendor/lib/.git/config && mv vendor/lib vendor/lib2 && echo done",
    )
    .await;
    assert!(out.stdout.contains("done"), "{out:?}");
    let moved = fx.ws().join("vendor/lib2/.git");
    assert_eq!(
        std::fs::read(moved.join("objects/history")).unwrap(),
        b"commits\n"
    );
    assert_eq!(
        std::fs::read(moved.join("config")).unwrap(),
        config,
        "{out:?}"
    );
    assert!(
        out.stderr
            .contains("tack: put back vendor/lib2/.git/config"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("tack: removed"), "{}", out.stderr);
}
