//! The filesystem capability: every file a tool touches goes through it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::CapabilityError;

/// What a caller intends to do with a path, for confinement checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Access {
    /// Read contents or metadata, list a directory.
    Read,
    /// Create, replace or remove.
    Write,
}

/// The kind of a directory entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
    /// Anything else (socket, device, fifo).
    Other,
}

/// What a path is: one entry of a [`list`](FileSystem::list)ing, or the
/// answer of [`metadata`](FileSystem::metadata). A listing and a single
/// look-up describe an entry the same way.
///
/// Built with [`new`](Self::new) and, where known,
/// [`with_modified`](Self::with_modified) and
/// [`with_writable`](Self::with_writable):
///
/// ```
/// use std::time::SystemTime;
/// use tack_core::capability::{EntryKind, Metadata};
///
/// let now = SystemTime::now();
/// let meta = Metadata::new("lib.rs", EntryKind::File, 120)
///     .with_modified(now)
///     .with_writable(true);
/// assert_eq!((meta.name.as_str(), meta.kind, meta.size), ("lib.rs", EntryKind::File, 120));
/// assert_eq!((meta.modified, meta.writable), (Some(now), true));
///
/// // Unknown time, not writable: the defaults.
/// let dir = Metadata::new("src", EntryKind::Dir, 0);
/// assert_eq!((dir.modified, dir.writable), (None, false));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Metadata {
    /// The entry's file name: in a listing, the name in its directory; from
    /// [`metadata`](FileSystem::metadata), the last component of the path
    /// as given (`"lib.rs"` for `src/lib.rs`, the link's name for a
    /// symbolic link), and empty when the path ends in no name (`.`, `..`,
    /// `/`, the empty path).
    pub name: String,
    /// What it is.
    pub kind: EntryKind,
    /// Its size in bytes (0 for directories).
    pub size: u64,
    /// When it was last modified, where the platform says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<SystemTime>,
    /// Whether the caller may write it under the current policy.
    #[serde(default)]
    pub writable: bool,
}

impl Metadata {
    /// An entry named `name`, of `kind` and `size` bytes, with no
    /// modification time and not writable.
    pub fn new(name: impl Into<String>, kind: EntryKind, size: u64) -> Self {
        Self {
            name: name.into(),
            kind,
            size,
            modified: None,
            writable: false,
        }
    }

    /// With the time it was last modified.
    #[must_use]
    pub fn with_modified(mut self, modified: SystemTime) -> Self {
        self.modified = Some(modified);
        self
    }

    /// With whether the caller may write it under the current policy.
    #[must_use]
    pub fn with_writable(mut self, writable: bool) -> Self {
        self.writable = writable;
        self
    }
}

/// The bytes of a file, possibly cut at a limit.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileBytes {
    /// The bytes read.
    pub bytes: Vec<u8>,
    /// The file's whole size.
    pub total_size: u64,
    /// Whether `bytes` stops before the end of the file.
    pub truncated: bool,
}

impl FileBytes {
    /// File bytes from their parts.
    pub fn new(bytes: Vec<u8>, total_size: u64, truncated: bool) -> Self {
        Self {
            bytes,
            total_size,
            truncated,
        }
    }
}

/// Confined file access. Builtin tools do all their file I/O through this
/// trait (never `std::fs`), so whichever implementation the host installs —
/// the sandbox plugin's, or a test double — applies to every tool.
///
/// Paths are as the model wrote them: relative to the workspace, or absolute.
/// An implementation resolves and confines them, and reports refusals as
/// [`CapabilityError::Refused`] with the reason.
#[async_trait]
pub trait FileSystem: Send + Sync + 'static {
    /// The directory relative paths are resolved against.
    fn workspace_root(&self) -> &Path;

    /// Resolves `path` for `access` and returns the confined absolute path, for
    /// tools that hand a directory to a walker (glob, grep).
    ///
    /// # Errors
    ///
    /// [`CapabilityError::Refused`] when the path escapes the policy.
    fn resolve(&self, path: &Path, access: Access) -> Result<PathBuf, CapabilityError>;

    /// Reads at most `limit` bytes (all of them when `None`).
    async fn read(&self, path: &Path, limit: Option<u64>) -> Result<FileBytes, CapabilityError>;

    /// Reads the bytes `[offset, offset + limit)` of a file: at most `limit`
    /// bytes starting at byte `offset`, for tools that page through files too
    /// large to hold in memory. In the result, `total_size` is the size of
    /// the whole file and `truncated` says bytes remain after the returned
    /// range. A range that starts at or past the end of the file is empty,
    /// not an error.
    ///
    /// The default implementation reads the file's first `offset + limit`
    /// bytes with [`read`](Self::read) and drops the first `offset`: correct
    /// for any implementation, but its memory and time grow with `offset`.
    /// An implementation backed by real files should override it to seek
    /// and read only the range (the sandbox plugin's does).
    ///
    /// # Errors
    ///
    /// Those of [`read`](Self::read).
    ///
    /// # Examples
    ///
    /// A file system that implements only [`read`](Self::read) gets `read_at`
    /// from the default:
    ///
    /// ```
    /// # use std::path::{Path, PathBuf};
    /// # use async_trait::async_trait;
    /// # use tack_core::capability::{
    /// #     Access, CapabilityError, FileBytes, FileSystem, Metadata,
    /// # };
    /// /// One file, `log.txt`, holding `0123456789`.
    /// struct OneFile;
    ///
    /// #[async_trait]
    /// impl FileSystem for OneFile {
    ///     async fn read(
    ///         &self,
    ///         path: &Path,
    ///         limit: Option<u64>,
    ///     ) -> Result<FileBytes, CapabilityError> {
    ///         let all = b"0123456789";
    ///         let keep = limit.map_or(all.len(), |l| all.len().min(l as usize));
    ///         Ok(FileBytes::new(all[..keep].to_vec(), 10, keep < all.len()))
    ///     }
    ///     // Everything else is refused: the file is read-only and alone.
    /// #   fn workspace_root(&self) -> &Path { Path::new("/ws") }
    /// #   fn resolve(&self, path: &Path, _: Access) -> Result<PathBuf, CapabilityError> { Ok(path.into()) }
    /// #   async fn list(&self, p: &Path) -> Result<Vec<Metadata>, CapabilityError> { Err(refused(p)) }
    /// #   async fn metadata(&self, p: &Path) -> Result<Metadata, CapabilityError> { Err(refused(p)) }
    /// }
    /// # fn refused(p: &Path) -> CapabilityError {
    /// #     CapabilityError::refused(p, "a one-file example")
    /// # }
    ///
    /// # futures::executor::block_on(async {
    /// let log = Path::new("log.txt");
    /// // The middle of the file: bytes remain after it.
    /// let middle = OneFile.read_at(log, 3, 4).await?;
    /// assert_eq!((&middle.bytes[..], middle.total_size, middle.truncated), (&b"3456"[..], 10, true));
    /// // The end: a short range, nothing after it.
    /// let end = OneFile.read_at(log, 8, 4).await?;
    /// assert_eq!((&end.bytes[..], end.truncated), (&b"89"[..], false));
    /// // Past the end: empty, not an error.
    /// let past = OneFile.read_at(log, 50, 4).await?;
    /// assert_eq!((past.bytes.len(), past.total_size, past.truncated), (0, 10, false));
    /// # Ok::<(), CapabilityError>(())
    /// # }).unwrap();
    /// ```
    async fn read_at(
        &self,
        path: &Path,
        offset: u64,
        limit: u64,
    ) -> Result<FileBytes, CapabilityError> {
        let prefix = self.read(path, Some(offset.saturating_add(limit))).await?;
        Ok(drop_prefix(prefix, offset))
    }

    /// Replaces (or creates) the file atomically with `contents`: all of
    /// them are written, or none (the file keeps its old contents).
    ///
    /// Returns whether the file was created:
    ///
    /// - If the file did not exist, `true` is returned.
    /// - If it existed, `false` is returned, and its contents are replaced.
    ///
    /// The default refuses: a file system that does not override `write`,
    /// [`create_dir_all`](Self::create_dir_all) and [`remove`](Self::remove)
    /// is read-only, and every change is [`CapabilityError::Refused`] with a reason
    /// naming the method to implement. A file system that can write must
    /// override all three.
    ///
    /// # Errors
    ///
    /// The default: always [`CapabilityError::Refused`].
    async fn write(&self, path: &Path, contents: &[u8]) -> Result<bool, CapabilityError> {
        let _ = contents;
        Err(read_only(path, "write"))
    }

    /// Lists a directory, sorted by name: every entry with the fields
    /// [`metadata`](Self::metadata) fills, named by its file name in the
    /// directory. A symbolic link is not followed: its entry is an
    /// [`EntryKind::Symlink`] with the link's own size and time, and
    /// `writable` says whether a write to its path (which goes to the
    /// link's target) is allowed.
    async fn list(&self, path: &Path) -> Result<Vec<Metadata>, CapabilityError>;

    /// Metadata of one path, named by the path's last component (see
    /// [`Metadata::name`]).
    async fn metadata(&self, path: &Path) -> Result<Metadata, CapabilityError>;

    /// Creates a directory and its missing parents.
    ///
    /// The default refuses, as for [`write`](Self::write).
    ///
    /// # Errors
    ///
    /// The default: always [`CapabilityError::Refused`].
    async fn create_dir_all(&self, path: &Path) -> Result<(), CapabilityError> {
        Err(read_only(path, "create_dir_all"))
    }

    /// Removes a file, or a directory (with its contents when `recursive`).
    ///
    /// The default refuses, as for [`write`](Self::write).
    ///
    /// # Errors
    ///
    /// The default: always [`CapabilityError::Refused`].
    async fn remove(&self, path: &Path, recursive: bool) -> Result<(), CapabilityError> {
        let _ = recursive;
        Err(read_only(path, "remove"))
    }

    /// Reads a whole file as UTF-8 text.
    ///
    /// # Errors
    ///
    /// Those of [`read`](Self::read), and [`CapabilityError::NotUtf8`].
    async fn read_to_string(&self, path: &Path) -> Result<String, CapabilityError> {
        let file = self.read(path, None).await?;
        String::from_utf8(file.bytes).map_err(|e| CapabilityError::NotUtf8 {
            path: path.display().to_string(),
            valid_up_to: e.utf8_error().valid_up_to(),
        })
    }
}

/// The bytes of `prefix` (a read of a file's first `offset + limit` bytes)
/// from `offset` on: the range `read_at(offset, limit)` asks for. Whether
/// bytes remain after the range is what the prefix read said: both end at
/// the same byte.
/// The refusal of the default write methods of a read-only [`FileSystem`].
fn read_only(path: &Path, method: &str) -> CapabilityError {
    let reason =
        format!("this file system is read-only (it does not implement `FileSystem::{method}`)");
    CapabilityError::refused(path, reason)
}

fn drop_prefix(prefix: FileBytes, offset: u64) -> FileBytes {
    let FileBytes {
        mut bytes,
        total_size,
        truncated,
    } = prefix;
    let from = usize::try_from(offset).map_or(bytes.len(), |o| o.min(bytes.len()));
    bytes.drain(..from);
    FileBytes::new(bytes, total_size, truncated)
}

impl fmt::Debug for dyn FileSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileSystem")
            .field("workspace_root", &self.workspace_root())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A file system that implements only the required methods.
    struct Empty;

    #[async_trait]
    impl FileSystem for Empty {
        fn workspace_root(&self) -> &Path {
            Path::new("/ws")
        }
        fn resolve(&self, path: &Path, _: Access) -> Result<PathBuf, CapabilityError> {
            Ok(path.into())
        }
        async fn read(&self, path: &Path, _: Option<u64>) -> Result<FileBytes, CapabilityError> {
            Err(CapabilityError::NotFound {
                path: path.display().to_string(),
            })
        }
        async fn list(&self, _: &Path) -> Result<Vec<Metadata>, CapabilityError> {
            Ok(Vec::new())
        }
        async fn metadata(&self, path: &Path) -> Result<Metadata, CapabilityError> {
            Err(CapabilityError::NotFound {
                path: path.display().to_string(),
            })
        }
    }

    #[test]
    fn a_file_system_without_write_methods_refuses_every_change() {
        futures::executor::block_on(async {
            let path = Path::new("notes.txt");
            let refusals = [
                Empty.write(path, b"x").await.map(|_| ()),
                Empty.create_dir_all(path).await,
                Empty.remove(path, true).await,
            ];
            for (refusal, method) in refusals
                .into_iter()
                .zip(["write", "create_dir_all", "remove"])
            {
                let error = refusal.unwrap_err();
                assert_eq!(error.kind_name(), "EACCES");
                let CapabilityError::Refused { path, reason } = &error else {
                    panic!("{error}");
                };
                assert_eq!(path, "notes.txt");
                assert!(reason.contains("read-only"), "{reason}");
                assert!(
                    reason.contains(&format!("`FileSystem::{method}`")),
                    "{reason}"
                );
            }
        });
    }

    /// `read` of the first `limit` bytes of `contents`, as an implementation
    /// of the trait returns it.
    fn prefix(contents: &[u8], limit: u64) -> FileBytes {
        let keep = contents
            .len()
            .min(usize::try_from(limit).unwrap_or(usize::MAX));
        FileBytes::new(
            contents[..keep].to_vec(),
            contents.len() as u64,
            keep < contents.len(),
        )
    }

    fn range(contents: &[u8], offset: u64, limit: u64) -> (Vec<u8>, u64, bool) {
        let got = drop_prefix(prefix(contents, offset.saturating_add(limit)), offset);
        (got.bytes, got.total_size, got.truncated)
    }

    #[test]
    fn a_range_is_cut_from_the_prefix_read() {
        let file = b"0123456789";
        assert_eq!(range(file, 0, 4), (b"0123".to_vec(), 10, true));
        assert_eq!(range(file, 3, 4), (b"3456".to_vec(), 10, true));
        assert_eq!(range(file, 6, 4), (b"6789".to_vec(), 10, false));
        assert_eq!(range(file, 8, 4), (b"89".to_vec(), 10, false));
        assert_eq!(range(file, 0, 10), (file.to_vec(), 10, false));
    }

    #[test]
    fn a_range_at_or_past_the_end_is_empty() {
        let file = b"0123456789";
        assert_eq!(range(file, 10, 4), (Vec::new(), 10, false));
        assert_eq!(range(file, 11, 4), (Vec::new(), 10, false));
        assert_eq!(range(file, u64::MAX, u64::MAX), (Vec::new(), 10, false));
        assert_eq!(range(b"", 0, 4), (Vec::new(), 0, false));
    }

    #[test]
    fn an_empty_range_says_whether_bytes_follow() {
        let file = b"0123456789";
        assert_eq!(range(file, 4, 0), (Vec::new(), 10, true));
        assert_eq!(range(file, 10, 0), (Vec::new(), 10, false));
    }

    proptest::proptest! {
        #[test]
        fn every_range_is_the_slice_of_the_file(
            file in proptest::collection::vec(proptest::num::u8::ANY, 0..64),
            offset in 0u64..80,
            limit in 0u64..80,
        ) {
            let (bytes, total, truncated) = range(&file, offset, limit);
            let from = (offset as usize).min(file.len());
            let to = (offset + limit).min(file.len() as u64) as usize;
            proptest::prop_assert_eq!(&bytes[..], &file[from..to.max(from)]);
            proptest::prop_assert_eq!(total, file.len() as u64);
            proptest::prop_assert_eq!(truncated, offset + limit < file.len() as u64);
        }
    }
}
