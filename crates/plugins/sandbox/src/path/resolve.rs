//! Resolving a path the way the kernel would, without requiring it to exist.
//!
//! This is `realpath` extended to missing tails: every existing component is
//! looked at with `lstat`, symlinks are expanded in place (`..` after a
//! symlink climbs from its *target*, as the kernel does), and once a component
//! is missing the rest is appended as written. The result is canonical for its
//! existing part (SBX-011/012: the deepest existing ancestor is resolved).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// The most symlinks one resolution follows (Linux's `MAXSYMLINKS`).
pub(crate) const MAX_SYMLINKS: usize = 40;

/// One symlink followed while resolving.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SymlinkHop {
    /// Where the link is (canonical parent + link name).
    pub(crate) link: PathBuf,
    /// What it points to, as stored in the link.
    pub(crate) target: PathBuf,
}

/// A resolved path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// Absolute, free of `.`, `..` and symlinks in its existing part.
    pub(crate) path: PathBuf,
    /// The symlinks followed, in order.
    pub(crate) hops: Vec<SymlinkHop>,
    /// Whether the whole path exists.
    pub(crate) exists: bool,
}

/// Why a path could not be resolved.
#[derive(Debug)]
pub(crate) enum ResolveError {
    /// More than [`MAX_SYMLINKS`] symlinks (a loop, most likely).
    TooManySymlinks,
    /// A component that is not a directory has more components after it.
    ThroughNonDirectory,
    /// `lstat` or `readlink` failed for another reason.
    Io {
        /// The path being looked at.
        at: PathBuf,
        /// The error.
        error: io::Error,
    },
}

#[derive(Clone, Debug)]
enum Part {
    Root,
    Parent,
    Normal(OsString),
}

fn parts(path: &Path) -> impl DoubleEndedIterator<Item = Part> + '_ {
    path.components().filter_map(|c| match c {
        Component::RootDir | Component::Prefix(_) => Some(Part::Root),
        Component::CurDir => None,
        Component::ParentDir => Some(Part::Parent),
        Component::Normal(name) => Some(Part::Normal(name.to_owned())),
    })
}

/// Resolves `input` (relative paths against `base`, which must be canonical).
pub(crate) fn resolve(base: &Path, input: &Path) -> Result<Resolved, ResolveError> {
    let mut pending: VecDeque<Part> = parts(input).collect();
    let mut current = if input.is_absolute() {
        PathBuf::from("/")
    } else {
        base.to_path_buf()
    };
    // How many trailing components of `current` do not exist.
    let mut missing = 0usize;
    let mut hops = Vec::new();

    while let Some(part) = pending.pop_front() {
        match part {
            Part::Root => {
                current = PathBuf::from("/");
                missing = 0;
            }
            Part::Parent => {
                current.pop();
                missing = missing.saturating_sub(1);
            }
            Part::Normal(name) => {
                let next = current.join(&name);
                if missing > 0 {
                    current = next;
                    missing += 1;
                    continue;
                }
                match std::fs::symlink_metadata(&next) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        if hops.len() >= MAX_SYMLINKS {
                            return Err(ResolveError::TooManySymlinks);
                        }
                        let target =
                            std::fs::read_link(&next).map_err(|error| ResolveError::Io {
                                at: next.clone(),
                                error,
                            })?;
                        // Splice the target in front of what is left; a relative
                        // target resolves against the link's directory (`current`).
                        for part in parts(&target).rev() {
                            pending.push_front(part);
                        }
                        hops.push(SymlinkHop { link: next, target });
                    }
                    Ok(meta) => {
                        if !meta.is_dir() && !pending.is_empty() {
                            return Err(ResolveError::ThroughNonDirectory);
                        }
                        current = next;
                    }
                    Err(error) if error.kind() == io::ErrorKind::NotFound => {
                        current = next;
                        missing = 1;
                    }
                    Err(error) if error.raw_os_error() == Some(nix::libc::ENOTDIR) => {
                        return Err(ResolveError::ThroughNonDirectory);
                    }
                    Err(error) => return Err(ResolveError::Io { at: next, error }),
                }
            }
        }
    }
    Ok(Resolved {
        path: current,
        hops,
        exists: missing == 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn canonical_tempdir() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, root)
    }

    #[test]
    fn dot_dot_climbs_lexically_through_real_directories() {
        let (_dir, root) = canonical_tempdir();
        std::fs::create_dir(root.join("a")).unwrap();
        let r = resolve(&root, Path::new("a/../b/./c")).unwrap();
        assert_eq!(r.path, root.join("b/c"));
        assert!(!r.exists);
    }

    #[test]
    fn dot_dot_after_a_symlink_climbs_from_its_target() {
        let (_dir, root) = canonical_tempdir();
        std::fs::create_dir_all(root.join("deep/inner")).unwrap();
        symlink(root.join("deep/inner"), root.join("link")).unwrap();
        let r = resolve(&root, Path::new("link/../x")).unwrap();
        assert_eq!(r.path, root.join("deep/x"));
        assert_eq!(r.hops.len(), 1);
    }

    #[test]
    fn a_missing_tail_under_a_symlink_resolves_through_it() {
        let (_dir, root) = canonical_tempdir();
        let (_out, outside) = canonical_tempdir();
        symlink(&outside, root.join("out")).unwrap();
        let r = resolve(&root, Path::new("out/new/sub/file.txt")).unwrap();
        assert_eq!(r.path, outside.join("new/sub/file.txt"));
        assert!(!r.exists);
    }

    #[test]
    fn symlink_loops_end() {
        let (_dir, root) = canonical_tempdir();
        symlink("b", root.join("a")).unwrap();
        symlink("a", root.join("b")).unwrap();
        assert!(matches!(
            resolve(&root, Path::new("a")),
            Err(ResolveError::TooManySymlinks)
        ));
    }

    #[test]
    fn a_regular_file_in_the_middle_is_not_a_directory() {
        let (_dir, root) = canonical_tempdir();
        std::fs::write(root.join("file"), b"x").unwrap();
        assert!(matches!(
            resolve(&root, Path::new("file/child.txt")),
            Err(ResolveError::ThroughNonDirectory)
        ));
    }

    #[test]
    fn proc_self_root_is_followed_to_the_real_root() {
        let (_dir, root) = canonical_tempdir();
        let r = resolve(&root, Path::new("/proc/self/root/etc")).unwrap();
        assert_eq!(r.path, PathBuf::from("/etc"));
    }
}
