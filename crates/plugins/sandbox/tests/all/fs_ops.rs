//! The filesystem operations themselves, inside the workspace.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use tack_core::capability::{CapabilityError, EntryKind, FileSystem};

use crate::fixture::Fixture;

#[tokio::test]
async fn reads_respect_the_byte_limit() {
    let fx = Fixture::new();
    std::fs::write(fx.ws.path().join("f.txt"), b"0123456789").unwrap();
    let fs = fx.workspace_write().fs();
    let part = fs.read(Path::new("f.txt"), Some(4)).await.unwrap();
    assert_eq!(
        (part.bytes.as_slice(), part.total_size, part.truncated),
        (&b"0123"[..], 10, true)
    );
    let whole = fs.read(Path::new("f.txt"), Some(10)).await.unwrap();
    assert_eq!((whole.bytes.len(), whole.truncated), (10, false));
    let all = fs.read(Path::new("f.txt"), None).await.unwrap();
    assert_eq!(all.bytes, b"0123456789");
}

/// `(bytes, total_size, truncated)` of `fs.read_at(path, offset, limit)`.
async fn range(fs: &dyn FileSystem, path: &str, offset: u64, limit: u64) -> (Vec<u8>, u64, bool) {
    let got = fs.read_at(Path::new(path), offset, limit).await.unwrap();
    (got.bytes, got.total_size, got.truncated)
}

#[tokio::test]
async fn ranged_reads_return_the_start_middle_and_end() {
    let fx = Fixture::new();
    std::fs::write(fx.ws.path().join("f.txt"), b"0123456789").unwrap();
    let fs = fx.workspace_write().fs();
    assert_eq!(
        range(&*fs, "f.txt", 0, 4).await,
        (b"0123".to_vec(), 10, true)
    );
    assert_eq!(
        range(&*fs, "f.txt", 3, 4).await,
        (b"3456".to_vec(), 10, true)
    );
    assert_eq!(
        range(&*fs, "f.txt", 6, 4).await,
        (b"6789".to_vec(), 10, false)
    );
    // A range that runs past the end is cut there.
    assert_eq!(
        range(&*fs, "f.txt", 8, 100).await,
        (b"89".to_vec(), 10, false)
    );
    assert_eq!(
        range(&*fs, "f.txt", 0, u64::MAX).await,
        (b"0123456789".to_vec(), 10, false)
    );
    // An empty range still says whether bytes follow.
    assert_eq!(range(&*fs, "f.txt", 5, 0).await, (Vec::new(), 10, true));
}

#[tokio::test]
async fn a_ranged_read_past_the_end_is_empty_not_an_error() {
    let fx = Fixture::new();
    std::fs::write(fx.ws.path().join("f.txt"), b"0123456789").unwrap();
    std::fs::write(fx.ws.path().join("empty.txt"), b"").unwrap();
    let fs = fx.workspace_write().fs();
    for offset in [10, 11, 1 << 40, u64::MAX] {
        assert_eq!(
            range(&*fs, "f.txt", offset, 4).await,
            (Vec::new(), 10, false),
            "offset {offset}"
        );
    }
    assert_eq!(range(&*fs, "empty.txt", 0, 4).await, (Vec::new(), 0, false));
}

#[tokio::test]
async fn a_ranged_read_of_a_large_file_matches_its_slice() {
    let fx = Fixture::new();
    // 3 MiB of a pattern that differs at every offset mod 251.
    let contents: Vec<u8> = (0..3 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(fx.ws.path().join("big.bin"), &contents).unwrap();
    let fs = fx.workspace_write().fs();
    let size = contents.len() as u64;
    for (offset, limit) in [
        (0, 4096),
        (1_000_003, 65_536),
        (size - 10, 4096),
        (size / 2, size),
    ] {
        let (bytes, total, truncated) = range(&*fs, "big.bin", offset, limit).await;
        let from = offset as usize;
        let to = (offset + limit).min(size) as usize;
        assert_eq!(bytes, &contents[from..to], "offset {offset}, limit {limit}");
        assert_eq!((total, truncated), (size, offset + limit < size));
    }
}

#[tokio::test]
async fn ranged_reads_are_typed_like_reads() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.ws.path().join("dir")).unwrap();
    let fs = fx.workspace_write().fs();
    let err = fs
        .read_at(Path::new("missing.txt"), 0, 4)
        .await
        .unwrap_err();
    assert!(matches!(err, CapabilityError::NotFound { .. }), "{err}");
    let err = fs.read_at(Path::new("dir"), 0, 4).await.unwrap_err();
    assert!(matches!(err, CapabilityError::IsADirectory { .. }), "{err}");
}

#[tokio::test]
async fn writes_are_atomic_report_created_and_keep_permissions() {
    let fx = Fixture::new();
    let fs = fx.workspace_write().fs();
    let created = fs.write(Path::new("deep/dir/f.sh"), b"one").await.unwrap();
    assert!(created);
    let path = fx.ws.path().join("deep/dir/f.sh");
    assert_eq!(std::fs::read(&path).unwrap(), b"one");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
    let created = fs.write(Path::new("deep/dir/f.sh"), b"two!").await.unwrap();
    assert!(!created);
    assert_eq!(std::fs::read(&path).unwrap(), b"two!");
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o750
    );
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(fx.ws.path().join("deep/dir"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["f.sh"]);
}

#[tokio::test]
async fn concurrent_writes_to_one_file_never_leave_a_torn_file() {
    let fx = Fixture::new();
    let fs = fx.workspace_write().fs();
    let writes = (0..16u8).map(|i| {
        let fs = fs.clone();
        tokio::spawn(async move { fs.write(Path::new("race.txt"), &vec![b'a' + i; 4096]).await })
    });
    for write in writes {
        write.await.unwrap().unwrap();
    }
    let bytes = std::fs::read(fx.ws.path().join("race.txt")).unwrap();
    assert_eq!(bytes.len(), 4096);
    assert!(bytes.iter().all(|b| *b == bytes[0]));
    assert_eq!(std::fs::read_dir(fx.ws.path()).unwrap().count(), 1);
}

#[tokio::test]
async fn lists_are_sorted_with_kinds_and_sizes() {
    let fx = Fixture::new();
    std::fs::write(fx.ws.path().join("b.txt"), b"12345").unwrap();
    std::fs::create_dir(fx.ws.path().join("a-dir")).unwrap();
    fx.link("c-link", "b.txt");
    let fs = fx.workspace_write().fs();
    let listing = fs.list(Path::new(".")).await.unwrap();
    let seen: Vec<_> = listing
        .iter()
        .map(|e| (e.name.as_str(), e.kind, e.size))
        .collect();
    assert_eq!(seen[0], ("a-dir", EntryKind::Dir, 0));
    assert_eq!(seen[1], ("b.txt", EntryKind::File, 5));
    assert_eq!((seen[2].0, seen[2].1), ("c-link", EntryKind::Symlink));
    // Every entry is described as `metadata` describes it (a symlink apart:
    // it is not followed, but its writability is its target's).
    for entry in &listing {
        let meta = fs.metadata(Path::new(&entry.name)).await.unwrap();
        assert_eq!(entry.writable, meta.writable, "{}", entry.name);
        assert!(entry.writable && entry.modified.is_some(), "{entry:?}");
        if entry.kind != EntryKind::Symlink {
            assert_eq!(*entry, meta);
        }
    }
    let err = fs.list(Path::new("b.txt")).await.unwrap_err();
    assert!(
        matches!(err, CapabilityError::NotADirectory { .. }),
        "{err}"
    );
    let err = fs.list(Path::new("missing")).await.unwrap_err();
    assert!(matches!(err, CapabilityError::NotFound { .. }), "{err}");
}

#[tokio::test]
async fn metadata_reports_kind_size_time_and_writability() {
    let fx = Fixture::new();
    std::fs::write(fx.ws.path().join("f"), b"abc").unwrap();
    let fs = fx.workspace_write().fs();
    let meta = fs.metadata(Path::new("f")).await.unwrap();
    assert_eq!(
        (meta.name.as_str(), meta.kind, meta.size, meta.writable),
        ("f", EntryKind::File, 3, true)
    );
    assert!(meta.modified.is_some());
    let root = fs.metadata(Path::new(".")).await.unwrap();
    assert_eq!((root.name.as_str(), root.kind), ("", EntryKind::Dir));
    std::fs::create_dir(fx.ws.path().join("d")).unwrap();
    std::fs::write(fx.ws.path().join("d/g.txt"), b"").unwrap();
    let nested = fs.metadata(Path::new("d/g.txt")).await.unwrap();
    assert_eq!(nested.name, "g.txt");
    let err = fs.metadata(Path::new("nope")).await.unwrap_err();
    assert_eq!(err.kind_name(), "ENOENT");
}

#[tokio::test]
async fn type_errors_are_typed() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.ws.path().join("d")).unwrap();
    let fs = fx.workspace_write().fs();
    let err = fs.read(Path::new("d"), None).await.unwrap_err();
    assert!(matches!(err, CapabilityError::IsADirectory { .. }), "{err}");
    let err = fs.write(Path::new("d"), b"x").await.unwrap_err();
    assert!(matches!(err, CapabilityError::IsADirectory { .. }), "{err}");
    let err = fs.read(Path::new("missing.txt"), None).await.unwrap_err();
    assert!(matches!(err, CapabilityError::NotFound { .. }), "{err}");
    nix::unistd::mkfifo(
        &fx.ws.path().join("fifo"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    let err = fs.read(Path::new("fifo"), None).await.unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

#[tokio::test]
async fn directories_are_created_and_removed() {
    let fx = Fixture::new();
    let fs = fx.workspace_write().fs();
    fs.create_dir_all(Path::new("a/b/c")).await.unwrap();
    fs.create_dir_all(Path::new("a/b/c")).await.unwrap();
    assert!(fx.ws.path().join("a/b/c").is_dir());
    fs.write(Path::new("a/b/c/f.txt"), b"x").await.unwrap();

    let err = fs.remove(Path::new("a"), false).await.unwrap_err();
    assert!(err.to_string().contains("not empty"), "{err}");
    fs.remove(Path::new("a/b/c/f.txt"), false).await.unwrap();
    fs.remove(Path::new("a/b/c"), false).await.unwrap();
    fs.write(Path::new("a/b/g.txt"), b"x").await.unwrap();
    fs.remove(Path::new("a"), true).await.unwrap();
    assert!(!fx.ws.path().join("a").exists());
    let err = fs.remove(Path::new("a"), true).await.unwrap_err();
    assert!(matches!(err, CapabilityError::NotFound { .. }), "{err}");
}

#[tokio::test]
async fn a_recursive_remove_does_not_follow_symlinks_out() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.ws.path().join("tree")).unwrap();
    fx.link("tree/out", fx.outside());
    let fs = fx.workspace_write().fs();
    let before = fx.outside_snapshot();
    fs.remove(Path::new("tree"), true).await.unwrap();
    assert!(!fx.ws.path().join("tree").exists());
    assert_eq!(before, fx.outside_snapshot());
}

#[tokio::test]
async fn the_workspace_root_is_never_removed() {
    let fx = Fixture::new();
    let fs = fx.workspace_write().fs();
    for path in [Path::new("."), &fx.ws()] {
        let err = fs.remove(path, true).await.unwrap_err();
        assert!(err.to_string().contains("sandbox root"), "{err}");
    }
    assert!(fx.ws.path().is_dir());
}
