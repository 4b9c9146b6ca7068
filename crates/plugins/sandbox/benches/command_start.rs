//! Starting `true` through the confined shell, against a bare `sh -c true`
//! and a bare run of the shell commands run in (`bash -c true` where bash
//! exists) in the same run: the difference is what the sandbox adds per
//! command.
//! Both layers are measured: the kernel-only floor, and bubblewrap when it
//! works on this machine; and both again in a workspace of 2,000 directories
//! (10,000 files), where finding the protected paths before and after each
//! command walks every directory; and in a repository with a nested one
//! (git's sample hooks in each), where on the floor what the protected
//! entries hold is recorded before each command and compared after it
//! (and on the floor in a workspace whose `.direnv` holds 5,000 files).
//!
//! ```text
//! cargo bench -p tack-sandbox
//! ```
#![allow(missing_docs, clippy::unwrap_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use tack_core::capability::CommandRequest;
use tack_sandbox::{Enforcement, Namespaces, Sandbox, SandboxPolicy};
use tokio_util::sync::CancellationToken;

fn command_start(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let big = tempfile::tempdir().unwrap();
    for i in 0..2000 {
        let dir = big.path().join(format!("d{}/e{}", i / 50, i % 50));
        std::fs::create_dir_all(&dir).unwrap();
        for j in 0..5 {
            std::fs::write(dir.join(format!("f{j}.rs")), "").unwrap();
        }
    }
    let repo = tempfile::tempdir().unwrap();
    for dir in [repo.path().to_path_buf(), repo.path().join("vendor/lib")] {
        let git = dir.join(".git");
        for sub in ["hooks", "info", "objects/pack", "refs/heads", "refs/tags"] {
            std::fs::create_dir_all(git.join(sub)).unwrap();
        }
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(
            git.join("config"),
            "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n",
        )
        .unwrap();
        std::fs::write(git.join("description"), "Unnamed repository\n").unwrap();
        std::fs::write(git.join("info/exclude"), "# git ls-files --others\n").unwrap();
        // As many sample hooks as `git init` writes, of about their size.
        for i in 0..14 {
            std::fs::write(
                git.join(format!("hooks/hook-{i}.sample")),
                "#!/bin/sh\n".repeat(160),
            )
            .unwrap();
        }
    }
    // A Python environment's worth of files in a protected entry.
    let direnv = tempfile::tempdir().unwrap();
    for i in 0..5000 {
        let dir = direnv.path().join(format!(".direnv/lib/p{}", i / 50));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("m{i}.py")), "x = 1\n").unwrap();
    }
    let mut group = c.benchmark_group("command_start");
    group.bench_function("bare sh -c true", |b| {
        b.to_async(&runtime).iter(|| async {
            let status = tokio::process::Command::new("/bin/sh")
                .args(["-c", "true"])
                .status()
                .await
                .unwrap();
            assert!(status.success());
        });
    });
    // The shell confined commands run in, bare: bash where it exists
    // starts more slowly than sh, and that part is not the sandbox's.
    let shell = tack_sandbox::probe_isolation().shell;
    group.bench_function(format!("bare {} -c true", shell.display()), |b| {
        b.to_async(&runtime).iter(|| async {
            let status = tokio::process::Command::new(&shell)
                .args(["-c", "true"])
                .status()
                .await
                .unwrap();
            assert!(status.success());
        });
    });
    for (name, namespaces, root) in [
        (
            "confined true, floor",
            Namespaces::Disabled,
            workspace.path(),
        ),
        (
            "confined true, bubblewrap",
            Namespaces::Required,
            workspace.path(),
        ),
        (
            "confined true, floor, in a repository",
            Namespaces::Disabled,
            repo.path(),
        ),
        (
            "confined true, bubblewrap, in a repository",
            Namespaces::Required,
            repo.path(),
        ),
        (
            "confined true, floor, 5000 files in .direnv",
            Namespaces::Disabled,
            direnv.path(),
        ),
        (
            "confined true, floor, 2000 directories",
            Namespaces::Disabled,
            big.path(),
        ),
        (
            "confined true, bubblewrap, 2000 directories",
            Namespaces::Required,
            big.path(),
        ),
    ] {
        let sandbox =
            Sandbox::new(SandboxPolicy::workspace_write(root).with_namespaces(namespaces)).unwrap();
        let policy = sandbox.status().policy.unwrap();
        if namespaces == Namespaces::Required && policy.namespaces != Enforcement::Enforced {
            println!("{name}: skipped, bubblewrap is not usable here");
            continue;
        }
        let shell = sandbox.shell();
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| async {
                let out = shell
                    .run(CommandRequest::new("true"), CancellationToken::new())
                    .await
                    .unwrap();
                assert_eq!(out.exit_code, Some(0));
            });
        });
    }
    group.finish();
}

criterion_group!(benches, command_start);
criterion_main!(benches);
