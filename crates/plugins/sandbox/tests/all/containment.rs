//! The reference harness's [CORE] containment cases (SBX), in
//! tack's terms.

use std::path::Path;

use tack_core::capability::{Access, CapabilityError};
use tack_sandbox::{SandboxError, SandboxMode, SandboxPolicy};

use crate::fixture::{Fixture, SECRET, snapshot};

/// SBX-001 (tack differs: the default preset is workspace-write, as issue 6
/// says); a configured root is canonicalized; an unknown mode is rejected.
#[test]
fn sbx_001_default_mode_and_absolute_root() {
    assert_eq!(SandboxMode::default(), SandboxMode::WorkspaceWrite);
    let fx = Fixture::new();
    let dotted = fx.ws.path().join(".");
    let sandbox =
        crate::fixture::sandbox(SandboxPolicy::new(SandboxMode::default(), dotted)).unwrap();
    assert_eq!(sandbox.workspace_root(), fx.ws());
    assert!(sandbox.workspace_root().is_absolute());
    assert!("host-root".parse::<SandboxMode>().is_err());
}

/// SBX-010: an absolute path outside, or a `..` climb, is denied and the
/// original is untouched.
#[tokio::test]
async fn sbx_010_writes_outside_are_denied_originals_untouched() {
    let fx = Fixture::new();
    let fs = fx.workspace_write().fs();
    let target = fx.outside().join("secret.txt");
    let err = fs.write(&target, b"edited").await.unwrap_err();
    assert!(err.to_string().contains("workspace-write mode"), "{err}");
    let err = fs
        .write(&fx.outside().join("created.txt"), b"x")
        .await
        .unwrap_err();
    assert!(matches!(err, CapabilityError::Refused { .. }));
    let climb = format!(
        "../{}/secret.txt",
        fx.outside().file_name().unwrap().to_string_lossy()
    );
    let err = fs.write(Path::new(&climb), b"edited").await.unwrap_err();
    assert!(matches!(err, CapabilityError::Refused { .. }), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), SECRET);
    assert!(!fx.outside().join("created.txt").exists());
}

/// SBX-011 and SBX-012: a symlinked directory pointing out is denied on the
/// canonical path, also for a new file under missing subdirectories of it;
/// no directory is created outside.
#[tokio::test]
async fn sbx_011_012_symlinked_directory_out_is_denied() {
    let fx = Fixture::new();
    fx.link("out", fx.outside());
    let fs = fx.workspace_write().fs();
    let before = fx.outside_snapshot();
    for path in ["out/file.txt", "out/x/y/z/file.txt"] {
        let err = fs.write(Path::new(path), b"x").await.unwrap_err();
        assert!(
            matches!(err, CapabilityError::Refused { .. }),
            "{path}: {err}"
        );
    }
    assert_eq!(before, fx.outside_snapshot());
    assert!(!fx.outside().join("x").exists());
}

/// SBX-014: the workspace root itself passes containment and fails only on
/// its type.
#[tokio::test]
async fn sbx_014_the_root_itself_fails_on_type_not_containment() {
    let fx = Fixture::new();
    let fs = fx.workspace_write().fs();
    for path in [Path::new("."), Path::new(""), &fx.ws()] {
        let err = fs.write(path, b"x").await.unwrap_err();
        assert!(
            matches!(err, CapabilityError::IsADirectory { .. }),
            "{}: {err}",
            path.display()
        );
        assert!(fs.resolve(path, Access::Write).is_ok());
    }
}

/// SBX-015: the filesystem root as the workspace allows writes anywhere.
#[tokio::test]
async fn sbx_015_filesystem_root_as_workspace() {
    let fx = Fixture::new();
    let fs = crate::fixture::sandbox(SandboxPolicy::workspace_write("/"))
        .unwrap()
        .fs();
    let target = fx.outside().join("landed.txt");
    fs.write(&target, b"landed").await.unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"landed");
}

/// SBX-018: equal paths and descendants are contained.
#[tokio::test]
async fn sbx_018_equal_and_descendant_paths_are_contained() {
    let fx = Fixture::new();
    let fs = fx.workspace_write().fs();
    assert_eq!(fs.resolve(&fx.ws(), Access::Write).unwrap(), fx.ws());
    assert_eq!(
        fs.resolve(&fx.ws().join("a/b"), Access::Write).unwrap(),
        fx.ws().join("a/b")
    );
}

/// SBX-019: an unrelated sibling sharing a prefix, a missing root, and a path
/// through a regular file are not contained.
#[tokio::test]
async fn sbx_019_prefix_siblings_missing_roots_and_file_segments() {
    let parent = tempfile::tempdir().unwrap();
    std::fs::create_dir(parent.path().join("ws")).unwrap();
    std::fs::create_dir(parent.path().join("ws2")).unwrap();
    let fs = crate::fixture::sandbox(SandboxPolicy::workspace_write(parent.path().join("ws")))
        .unwrap()
        .fs();
    let sibling = parent.path().join("ws2/file.txt");
    let err = fs.write(&sibling, b"x").await.unwrap_err();
    assert!(matches!(err, CapabilityError::Refused { .. }), "{err}");
    assert!(!sibling.exists());

    let missing =
        crate::fixture::sandbox(SandboxPolicy::workspace_write(parent.path().join("nope")));
    assert!(matches!(missing, Err(SandboxError::RootNotFound { .. })));

    std::fs::write(parent.path().join("ws/file"), b"f").unwrap();
    let err = fs
        .write(Path::new("file/child.txt"), b"x")
        .await
        .unwrap_err();
    assert!(
        matches!(err, CapabilityError::NotADirectory { .. }),
        "{err}"
    );
    let err = fs
        .read(Path::new("file/child.txt"), None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, CapabilityError::NotADirectory { .. }),
        "{err}"
    );
    assert_eq!(std::fs::read(parent.path().join("ws/file")).unwrap(), b"f");
}

/// SBX-020: a root reached through a symlink alias is recognised, also for a
/// missing target.
#[tokio::test]
async fn sbx_020_alias_roots_are_recognised() {
    let parent = tempfile::tempdir().unwrap();
    let real = parent.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let alias = parent.path().join("alias");
    std::os::unix::fs::symlink(&real, &alias).unwrap();

    // Configured through the alias, paths through the real name are inside…
    let fs = crate::fixture::sandbox(SandboxPolicy::workspace_write(&alias))
        .unwrap()
        .fs();
    fs.write(&real.join("new/a.txt"), b"1").await.unwrap();
    // …and configured through the real name, paths through the alias are too.
    let fs = crate::fixture::sandbox(SandboxPolicy::workspace_write(&real))
        .unwrap()
        .fs();
    fs.write(&alias.join("missing/b.txt"), b"2").await.unwrap();
    assert_eq!(std::fs::read(real.join("new/a.txt")).unwrap(), b"1");
    assert_eq!(std::fs::read(real.join("missing/b.txt")).unwrap(), b"2");
}

/// SBX-024 (fs side): read-only mode reads but never writes, creates or removes.
#[tokio::test]
async fn read_only_mode_denies_every_write() {
    let fx = Fixture::new();
    std::fs::write(fx.ws.path().join("keep.txt"), b"keep").unwrap();
    let sandbox = crate::fixture::sandbox(SandboxPolicy::read_only(fx.ws.path())).unwrap();
    let fs = sandbox.fs();
    let before = snapshot(fx.ws.path());
    assert_eq!(
        fs.read_to_string(Path::new("keep.txt")).await.unwrap(),
        "keep"
    );
    let refusals = [
        fs.write(Path::new("keep.txt"), b"changed")
            .await
            .unwrap_err(),
        fs.write(Path::new("new.txt"), b"new").await.unwrap_err(),
        fs.create_dir_all(Path::new("dir")).await.unwrap_err(),
        fs.remove(Path::new("keep.txt"), false).await.unwrap_err(),
    ];
    for err in refusals {
        assert!(err.to_string().contains("read-only"), "{err}");
    }
    assert!(!fs.metadata(Path::new("keep.txt")).await.unwrap().writable);
    assert_eq!(before, snapshot(fx.ws.path()));
}

/// Extra roots: readable roots are read-only, writable roots are writable.
#[tokio::test]
async fn extra_roots_extend_reads_and_writes() {
    let fx = Fixture::new();
    let extra = tempfile::tempdir().unwrap();
    let sandbox = crate::fixture::sandbox(
        SandboxPolicy::workspace_write(fx.ws.path())
            .with_readable_root(fx.outside.path())
            .with_writable_root(extra.path()),
    )
    .unwrap();
    let fs = sandbox.fs();
    let secret = fx.outside().join("secret.txt");
    assert_eq!(fs.read_to_string(&secret).await.unwrap(), SECRET);
    let err = fs.write(&secret, b"x").await.unwrap_err();
    assert!(err.to_string().contains("read-only root"), "{err}");
    assert!(!fs.metadata(&secret).await.unwrap().writable);
    fs.write(&extra.path().join("ok.txt"), b"ok").await.unwrap();
    assert_eq!(std::fs::read(extra.path().join("ok.txt")).unwrap(), b"ok");
}

/// Denied globs refuse reads and writes inside the roots, including through
/// a symlink that points at a denied path.
#[tokio::test]
async fn denied_globs_refuse_reads_and_writes() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.ws.path().join(".git")).unwrap();
    std::fs::write(fx.ws.path().join(".git/config"), b"[core]").unwrap();
    std::fs::create_dir_all(fx.ws.path().join("app")).unwrap();
    std::fs::write(fx.ws.path().join("app/.env"), b"API_KEY=1").unwrap();
    fx.link("env-link", "app/.env");
    let sandbox = crate::fixture::sandbox(
        SandboxPolicy::workspace_write(fx.ws.path())
            .with_denied(".git/**")
            .with_denied("**/.env"),
    )
    .unwrap();
    let fs = sandbox.fs();
    for path in [".git/config", ".git", "app/.env", "env-link"] {
        let err = fs.read(Path::new(path), None).await.unwrap_err();
        assert!(err.to_string().contains("denied pattern"), "{path}: {err}");
    }
    for path in [".git/hooks/pre-commit", "app/.env", "other/.env"] {
        let err = fs.write(Path::new(path), b"x").await.unwrap_err();
        assert!(err.to_string().contains("denied pattern"), "{path}: {err}");
    }
    assert_eq!(
        std::fs::read(fx.ws.path().join("app/.env")).unwrap(),
        b"API_KEY=1"
    );
    assert!(!fx.ws.path().join(".git/hooks").exists());
    assert!(
        fs.read(Path::new(".gitignore"), None)
            .await
            .is_err_and(|e| matches!(e, CapabilityError::NotFound { .. }))
    );
}

#[test]
fn invalid_globs_and_file_roots_are_clear_errors() {
    let fx = Fixture::new();
    let err =
        crate::fixture::sandbox(SandboxPolicy::workspace_write(fx.ws.path()).with_denied("a["))
            .unwrap_err();
    assert!(matches!(err, SandboxError::InvalidGlob { .. }), "{err}");
    let file = fx.outside().join("secret.txt");
    let err = crate::fixture::sandbox(SandboxPolicy::workspace_write(&file)).unwrap_err();
    assert!(
        matches!(err, SandboxError::RootNotADirectory { .. }),
        "{err}"
    );
}
