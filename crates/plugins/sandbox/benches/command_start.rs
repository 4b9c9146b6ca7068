//! Starting `true` through the confined shell, against a bare `sh -c true`
//! in the same run: the difference is what the sandbox adds per command.
//! Both layers are measured: the kernel-only floor, and bubblewrap when it
//! works on this machine.
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
    for (name, namespaces) in [
        ("confined true, floor", Namespaces::Disabled),
        ("confined true, bubblewrap", Namespaces::Required),
    ] {
        let sandbox = Sandbox::new(
            SandboxPolicy::workspace_write(workspace.path()).with_namespaces(namespaces),
        )
        .unwrap();
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
