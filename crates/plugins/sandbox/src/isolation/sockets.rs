//! Unix sockets inside bubblewrap when the host allows some: the allowed
//! ones are bound in, the others found where services keep theirs are
//! covered.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// Where services keep their sockets (Docker, containerd, podman, D-Bus,
/// systemd, the user's runtime directory under `/run/user`, LXD).
pub(crate) const SOCKET_DIRS: &[&str] = &[
    "/run",
    "/var/run",
    "/var/snap/lxd/common/lxd",
    "/var/lib/lxd",
];

/// How deep below a socket directory the scan looks.
const MAX_DEPTH: usize = 8;
/// The most entries a scan looks at.
const MAX_ENTRIES: usize = 20_000;

fn is_socket(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

/// The allowed sockets that exist now, canonical (a socket that is gone,
/// an agent not running, is skipped).
pub(crate) fn allowed_now(allowed: &[PathBuf]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = allowed
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .filter(|p| is_socket(p))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Every socket under `dirs` now, up to [`MAX_DEPTH`] levels and
/// [`MAX_ENTRIES`] entries, without following symlinks, entering FUSE
/// mounts (a portal could hang the scan) or directories this user cannot
/// list.
pub(crate) fn sockets_under(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut starts: Vec<PathBuf> = dirs.iter().filter_map(|d| d.canonicalize().ok()).collect();
    starts.sort();
    starts.dedup();
    let mut found = Vec::new();
    let mut seen = 0;
    let mut pending: Vec<(PathBuf, usize)> = starts.into_iter().map(|d| (d, 0)).collect();
    while let Some((dir, depth)) = pending.pop() {
        let fuse = nix::sys::statfs::statfs(&dir)
            .is_ok_and(|s| s.filesystem_type() == nix::sys::statfs::FUSE_SUPER_MAGIC);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        if fuse {
            continue;
        }
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return found;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_socket() {
                found.push(entry.path());
            } else if kind.is_dir() && depth < MAX_DEPTH {
                pending.push((entry.path(), depth + 1));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockets_are_found_below_and_allowed_ones_canonicalized() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("a/b")).unwrap();
        let deep = base.join("a/b/deep.sock");
        let _one = std::os::unix::net::UnixListener::bind(&deep).unwrap();
        let _two = std::os::unix::net::UnixListener::bind(base.join("top.sock")).unwrap();
        std::fs::write(base.join("a/plain"), "x").unwrap();
        std::os::unix::fs::symlink(&deep, base.join("link.sock")).unwrap();
        let mut found = sockets_under(std::slice::from_ref(&base));
        found.sort();
        assert_eq!(found, [deep.clone(), base.join("top.sock")]);
        assert_eq!(
            allowed_now(&[
                base.join("link.sock"),
                base.join("a/plain"),
                base.join("gone")
            ]),
            [deep]
        );
    }
}
