//! A table of escape attempts: each is refused, and nothing outside the
//! workspace is read or written.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use tack_core::capability::{CapabilityError, CommandRequest, FileSystem};
use tokio_util::sync::CancellationToken;

use crate::fixture::{Fixture, SECRET, runs_commands};

#[derive(Clone, Copy, Debug)]
enum Op {
    Read,
    /// A ranged read (`read_at`) of the middle of the file.
    ReadAt,
    Write,
    List,
    Metadata,
    CreateDir,
    Remove,
}

/// Runs `op` and returns its error, failing the test if it succeeded.
async fn attempt(fs: &dyn FileSystem, op: Op, path: &Path) -> CapabilityError {
    let result = match op {
        Op::Read => fs.read(path, None).await.map(|b| {
            assert!(!String::from_utf8_lossy(&b.bytes).contains(SECRET));
            format!("read {} bytes", b.bytes.len())
        }),
        Op::ReadAt => fs.read_at(path, 4, 16).await.map(|b| {
            assert_ne!(b.bytes, SECRET.as_bytes()[4..20]);
            format!("read {} bytes from offset 4", b.bytes.len())
        }),
        Op::Write => fs.write(path, b"escaped").await.map(|r| format!("{r:?}")),
        Op::List => fs.list(path).await.map(|l| format!("{l:?}")),
        Op::Metadata => fs.metadata(path).await.map(|m| format!("{m:?}")),
        Op::CreateDir => fs.create_dir_all(path).await.map(|()| "created".to_owned()),
        Op::Remove => fs.remove(path, true).await.map(|()| "removed".to_owned()),
    };
    match result {
        Ok(what) => panic!("{op:?} {} was allowed: {what}", path.display()),
        Err(e) => e,
    }
}

fn refused_because(err: &CapabilityError, fragment: &str) -> bool {
    matches!(err, CapabilityError::Refused { reason, .. } if reason.contains(fragment))
}

#[tokio::test]
async fn every_escape_is_refused_and_touches_nothing() {
    let fx = Fixture::new();
    let outside = fx.outside();
    fx.link("root-link", "/");
    fx.link("out-link", &outside);
    fx.link(
        "rel-out",
        format!("../{}", outside.file_name().unwrap().to_string_lossy()),
    );
    fx.link("secret-link", outside.join("secret.txt"));
    std::fs::create_dir(fx.ws.path().join("sub")).unwrap();
    fx.link("sub/up", "../..");
    let sandbox = fx.workspace_write();
    let fs = sandbox.fs();
    let long = "a/".repeat(2100);
    let long_name = "n".repeat(300);

    let out = |p: &str| outside.join(p);
    let cases: Vec<(Op, PathBuf, &str)> = vec![
        (Op::Read, "../../etc/passwd".into(), "outside the workspace"),
        (Op::Read, "/etc/passwd".into(), "outside the workspace"),
        (Op::Read, out("secret.txt"), "outside the workspace"),
        (
            Op::Read,
            "root-link/etc/passwd".into(),
            "via symlink root-link -> /",
        ),
        (Op::List, "root-link".into(), "via symlink root-link -> /"),
        (
            Op::Read,
            "out-link/secret.txt".into(),
            "via symlink out-link -> ",
        ),
        (
            Op::Read,
            "rel-out/secret.txt".into(),
            "via symlink rel-out -> ../",
        ),
        (
            Op::Read,
            "secret-link".into(),
            "via symlink secret-link -> ",
        ),
        (
            Op::Read,
            "sub/up/etc/passwd".into(),
            "via symlink sub/up -> ../..",
        ),
        (Op::Write, "out-link/new.txt".into(), "via symlink out-link"),
        (
            Op::Write,
            "out-link/secret.txt".into(),
            "via symlink out-link",
        ),
        (Op::Write, "secret-link".into(), "via symlink secret-link"),
        (
            Op::Write,
            "out-link/a/b/c/new.txt".into(),
            "via symlink out-link",
        ),
        (
            Op::CreateDir,
            "out-link/made/here".into(),
            "via symlink out-link",
        ),
        (Op::Write, out("new.txt"), "outside the workspace"),
        (Op::Write, "../escaped.txt".into(), "outside the workspace"),
        (
            Op::Remove,
            "out-link/secret.txt".into(),
            "via symlink out-link",
        ),
        (Op::Remove, out("secret.txt"), "outside the workspace"),
        (Op::List, "..".into(), "outside the workspace"),
        (Op::List, "/".into(), "outside the workspace"),
        (Op::Metadata, "/etc/passwd".into(), "outside the workspace"),
        (
            Op::Read,
            "/proc/self/root/etc/passwd".into(),
            "outside the workspace",
        ),
        (
            Op::Read,
            PathBuf::from("/proc/self/root")
                .join(outside.strip_prefix("/").unwrap())
                .join("secret.txt"),
            "outside the workspace",
        ),
        (
            Op::Read,
            "/proc/self/cwd/Cargo.toml".into(),
            "outside the workspace",
        ),
        (
            Op::Read,
            "/proc/self/environ".into(),
            "outside the workspace",
        ),
        (
            Op::Read,
            long.clone().into(),
            "over the limit of 4096 bytes",
        ),
        (Op::Write, long.into(), "over the limit of 4096 bytes"),
        (Op::Write, long_name.into(), "over the limit of 255 bytes"),
        (
            Op::Read,
            PathBuf::from(OsStr::from_bytes(b"ok\0/../../etc/passwd")),
            "NUL byte",
        ),
        (
            Op::Write,
            PathBuf::from(OsStr::from_bytes(b"new\0.txt")),
            "NUL byte",
        ),
        (
            Op::Read,
            PathBuf::from(OsStr::from_bytes(b"/etc/passwd\0")),
            "NUL byte",
        ),
    ];

    // Every escape refused to `read` is refused to a ranged `read_at` too.
    let ranged: Vec<_> = cases
        .iter()
        .filter(|(op, _, _)| matches!(op, Op::Read))
        .map(|(_, path, fragment)| (Op::ReadAt, path.clone(), *fragment))
        .collect();
    assert!(ranged.len() >= 10);
    for (op, path, fragment) in cases.into_iter().chain(ranged) {
        let before = fx.outside_snapshot();
        let err = attempt(&*fs, op, &path).await;
        assert!(
            refused_because(&err, fragment),
            "{op:?} {}: expected a refusal mentioning {fragment:?}, got: {err}",
            path.display()
        );
        assert_eq!(err.kind_name(), "EACCES");
        assert_eq!(
            before,
            fx.outside_snapshot(),
            "{op:?} {} changed the outside",
            path.display()
        );
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        SECRET
    );
    assert!(!fx.ws.path().parent().unwrap().join("escaped.txt").exists());
}

#[tokio::test]
async fn refusal_reasons_name_the_symlink_and_its_target() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.ws.path().join("src")).unwrap();
    fx.link("src/link", "/etc");
    let sandbox = fx.workspace_write();
    let err = sandbox
        .fs()
        .read(Path::new("src/link/passwd"), None)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "access to src/link/passwd refused: path resolves outside the workspace via symlink src/link -> /etc"
    );
}

#[tokio::test]
async fn a_symlink_made_by_a_command_is_not_followed_out() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    if !runs_commands(&sandbox, "a_symlink_made_by_a_command_is_not_followed_out") {
        return;
    }
    let command = format!(
        "ln -s '{}' made-by-cmd && ln -s / made-root",
        fx.outside().display()
    );
    let out = sandbox
        .shell()
        .run(CommandRequest::new(command), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    let fs = sandbox.fs();
    for path in ["made-by-cmd/secret.txt", "made-root/etc/passwd"] {
        let before = fx.outside_snapshot();
        let err = fs.read(Path::new(path), None).await.unwrap_err();
        assert!(refused_because(&err, "via symlink made-"), "{err}");
        let err = fs.read_at(Path::new(path), 0, 64).await.unwrap_err();
        assert!(refused_because(&err, "via symlink made-"), "{err}");
        let err = fs.write(Path::new(path), b"x").await.unwrap_err();
        assert!(refused_because(&err, "via symlink made-"), "{err}");
        assert_eq!(before, fx.outside_snapshot());
    }
    // Removing the link removes the link, never its target.
    fs.remove(Path::new("made-by-cmd"), true).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.outside().join("secret.txt")).unwrap(),
        SECRET
    );
}

#[tokio::test]
async fn look_alike_names_stay_literal_names_inside_the_workspace() {
    let fx = Fixture::new();
    let sandbox = fx.workspace_write();
    let fs = sandbox.fs();
    let ws = fx.ws();
    // None of these is `..`: they are ordinary names, resolved inside.
    for name in [
        "%2e%2e/%2e%2e/etc/passwd",
        "..%2f..%2fetc%2fpasswd",
        "\u{2025}/etc/passwd",
        "\u{FF0E}\u{FF0E}/\u{FF0E}\u{FF0E}/etc/passwd",
        "...",
        ". ./. ./etc/passwd",
    ] {
        let resolved = fs
            .resolve(Path::new(name), tack_core::capability::Access::Write)
            .unwrap();
        assert!(
            resolved.starts_with(&ws),
            "{name} -> {}",
            resolved.display()
        );
        let err = fs.read(Path::new(name), None).await.unwrap_err();
        assert!(
            matches!(err, CapabilityError::NotFound { .. }),
            "{name}: {err}"
        );
        fs.write(Path::new(name), b"literal").await.unwrap();
        assert_eq!(std::fs::read(ws.join(name)).unwrap(), b"literal");
    }
    // Through /proc/self/root, a path that lands inside is just that path.
    let via_proc = PathBuf::from("/proc/self/root")
        .join(ws.strip_prefix("/").unwrap())
        .join("proc.txt");
    fs.write(&via_proc, b"p").await.unwrap();
    assert_eq!(std::fs::read(ws.join("proc.txt")).unwrap(), b"p");
}
