//! The canonical roots a sandbox allows, and separator-aware containment.

use std::path::{Path, PathBuf};

use crate::error::SandboxError;

/// Whether a root may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RootAccess {
    /// Read only.
    Read,
    /// Read and write.
    Write,
}

/// One canonical root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Root {
    pub(crate) path: PathBuf,
    pub(crate) access: RootAccess,
}

/// The workspace root and the extra roots, canonicalized.
#[derive(Clone, Debug)]
pub(crate) struct Roots {
    workspace: PathBuf,
    all: Vec<Root>,
}

/// Canonicalizes one configured root.
pub(crate) fn canonical_root(path: &Path) -> Result<PathBuf, SandboxError> {
    let canonical = std::fs::canonicalize(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            SandboxError::RootNotFound {
                path: path.to_owned(),
            }
        } else {
            SandboxError::RootUnreadable {
                path: path.to_owned(),
                message: e.to_string(),
            }
        }
    })?;
    let meta = std::fs::metadata(&canonical).map_err(|e| SandboxError::RootUnreadable {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    if !meta.is_dir() {
        return Err(SandboxError::RootNotADirectory {
            path: path.to_owned(),
        });
    }
    std::fs::read_dir(&canonical).map_err(|e| SandboxError::RootUnreadable {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    Ok(canonical)
}

/// Whether `path` is `root` or below it. Component-wise, so `/ws2` is not
/// under `/ws`, and everything is under `/`.
pub(crate) fn is_within(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

impl Roots {
    /// Roots from already canonical parts (see [`canonical_root`]).
    pub(crate) fn new(workspace: PathBuf, workspace_access: RootAccess, extra: Vec<Root>) -> Self {
        let mut all = vec![Root {
            path: workspace.clone(),
            access: workspace_access,
        }];
        for root in extra {
            match all.iter_mut().find(|r| r.path == root.path) {
                Some(existing) if root.access == RootAccess::Write => existing.access = root.access,
                Some(_) => {}
                None => all.push(root),
            }
        }
        Self { workspace, all }
    }

    /// The canonical workspace root.
    pub(crate) fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Every root.
    pub(crate) fn all(&self) -> &[Root] {
        &self.all
    }

    /// The canonical writable roots.
    pub(crate) fn writable(&self) -> impl Iterator<Item = &Path> {
        self.all
            .iter()
            .filter(|r| r.access == RootAccess::Write)
            .map(|r| r.path.as_path())
    }

    /// The innermost root containing `path`, preferring a writable one.
    pub(crate) fn containing(&self, path: &Path) -> Option<&Root> {
        self.all
            .iter()
            .filter(|r| is_within(path, &r.path))
            .max_by_key(|r| (r.access == RootAccess::Write, r.path.components().count()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_is_separator_aware() {
        assert!(is_within(Path::new("/ws"), Path::new("/ws")));
        assert!(is_within(Path::new("/ws/a/b"), Path::new("/ws")));
        assert!(!is_within(Path::new("/ws2"), Path::new("/ws")));
        assert!(!is_within(Path::new("/ws2/a"), Path::new("/ws")));
        assert!(!is_within(Path::new("/"), Path::new("/ws")));
    }

    #[test]
    fn the_filesystem_root_contains_everything() {
        assert!(is_within(Path::new("/etc/passwd"), Path::new("/")));
        assert!(is_within(Path::new("/"), Path::new("/")));
    }

    #[test]
    fn a_missing_root_is_a_clear_error() {
        let err = canonical_root(Path::new("/definitely/not/here")).unwrap_err();
        assert!(matches!(err, SandboxError::RootNotFound { .. }));
        assert!(err.to_string().contains("does not exist"));
    }

    #[test]
    fn a_file_root_is_not_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        assert!(matches!(
            canonical_root(&file).unwrap_err(),
            SandboxError::RootNotADirectory { .. }
        ));
    }

    #[test]
    fn a_writable_duplicate_upgrades_a_readable_root() {
        let roots = Roots::new(
            PathBuf::from("/ws"),
            RootAccess::Read,
            vec![Root {
                path: PathBuf::from("/ws"),
                access: RootAccess::Write,
            }],
        );
        assert_eq!(roots.all().len(), 1);
        assert_eq!(roots.writable().count(), 1);
    }
}
