//! The private temporary directory commands may write under workspace-write.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::SandboxError;

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A directory under the host's temp dir, owned by one sandbox (and its
/// clones) and removed with everything in it when the last one is dropped.
#[derive(Debug)]
pub(crate) struct PrivateTempDir {
    path: PathBuf,
}

impl PrivateTempDir {
    pub(crate) fn create() -> Result<Self, SandboxError> {
        let parent = std::env::temp_dir();
        remove_stale(&parent);
        let error = |e: std::io::Error| SandboxError::TempDir {
            parent: parent.clone(),
            message: e.to_string(),
        };
        let path = parent.join(crate::stale::name(NEXT.fetch_add(1, Ordering::Relaxed)));
        std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
            .create(&path)
            .map_err(error)?;
        let path = path.canonicalize().map_err(error)?;
        Ok(Self { path })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// Removes the temp dirs of sandboxes whose process is gone (a host killed
/// by `SIGKILL` cannot remove its own). Only directories named like ours,
/// owned by this user, whose pid is dead, are removed; a pid reused by
/// another process keeps its directory until that process is gone too.
fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    let me = nix::unistd::geteuid().as_raw();
    for entry in entries.flatten() {
        if !crate::stale::left_by_gone_host(&entry.file_name()) {
            continue;
        }
        let owned_dir = std::fs::symlink_metadata(entry.path())
            .is_ok_and(|m| m.is_dir() && std::os::unix::fs::MetadataExt::uid(&m) == me);
        if owned_dir {
            if let Err(e) = std::fs::remove_dir_all(entry.path()) {
                tracing::debug!(path = %entry.path().display(), error = %e, "could not remove a stale sandbox temp dir");
            }
        }
    }
}

impl Drop for PrivateTempDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            tracing::debug!(path = %self.path.display(), error = %e, "could not remove the sandbox temp dir");
        }
    }
}
