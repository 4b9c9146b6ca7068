//! Starting `true` through the confined shell, against a bare `sh -c true`
//! in the same run: the difference is what the sandbox adds per command.
//!
//! ```text
//! cargo bench -p tack-sandbox
//! TACK_SANDBOX_FLOOR_ONLY=1 cargo bench -p tack-sandbox   # without bubblewrap
//! ```
#![allow(missing_docs, clippy::unwrap_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use tack_core::capability::CommandRequest;
use tack_sandbox::{Namespaces, Sandbox, SandboxPolicy};
use tokio_util::sync::CancellationToken;

fn command_start(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let mut policy = SandboxPolicy::workspace_write(workspace.path());
    if std::env::var_os("TACK_SANDBOX_FLOOR_ONLY").is_some_and(|v| v == "1") {
        policy = policy.with_namespaces(Namespaces::Disabled);
    }
    let sandbox = Sandbox::new(policy).unwrap();
    println!("{}", sandbox.status());
    let shell = sandbox.shell();
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
    group.bench_function("confined true", |b| {
        b.to_async(&runtime).iter(|| async {
            let out = shell
                .run(CommandRequest::new("true"), CancellationToken::new())
                .await
                .unwrap();
            assert_eq!(out.exit_code, Some(0));
        });
    });
    group.finish();
}

criterion_group!(benches, command_start);
criterion_main!(benches);
