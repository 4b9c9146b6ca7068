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
        let error = |e: std::io::Error| SandboxError::TempDir {
            parent: parent.clone(),
            message: e.to_string(),
        };
        let name = format!(
            "tack-sandbox-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = parent.join(name);
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

impl Drop for PrivateTempDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            tracing::debug!(path = %self.path.display(), error = %e, "could not remove the sandbox temp dir");
        }
    }
}
