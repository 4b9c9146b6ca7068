//! The filesystem capability: every file a tool touches goes through it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

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

/// One entry of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DirEntry {
    /// The entry's file name.
    pub name: String,
    /// What it is.
    pub kind: EntryKind,
    /// Its size in bytes (0 for directories).
    pub size: u64,
}

impl DirEntry {
    /// An entry.
    pub fn new(name: impl Into<String>, kind: EntryKind, size: u64) -> Self {
        Self {
            name: name.into(),
            kind,
            size,
        }
    }
}

/// Metadata of one path.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Metadata {
    /// What it is.
    pub kind: EntryKind,
    /// Its size in bytes.
    pub size: u64,
    /// When it was last modified, where the platform says.
    pub modified: Option<SystemTime>,
    /// Whether the caller may write it under the current policy.
    pub writable: bool,
}

impl Metadata {
    /// Metadata from its parts.
    pub fn new(kind: EntryKind, size: u64, modified: Option<SystemTime>, writable: bool) -> Self {
        Self {
            kind,
            size,
            modified,
            writable,
        }
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

/// What a write did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WriteReport {
    /// Bytes written.
    pub bytes_written: u64,
    /// `true` when the file did not exist before.
    pub created: bool,
}

impl WriteReport {
    /// A report from its parts.
    pub fn new(bytes_written: u64, created: bool) -> Self {
        Self {
            bytes_written,
            created,
        }
    }
}

/// Why a filesystem operation failed. Every variant names the path as the
/// caller gave it and says what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FsError {
    /// Nothing exists at the path.
    #[error("no such file or directory: {path}")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// The policy refuses the path (outside the workspace, read-only, denied).
    #[error("access to {path} refused: {reason}")]
    Refused {
        /// The path as given.
        path: String,
        /// Why, e.g. "path resolves outside the workspace via symlink src/link -> /etc".
        reason: String,
    },
    /// A file was expected, a directory found.
    #[error("{path} is a directory, not a file: list it instead")]
    IsADirectory {
        /// The path as given.
        path: String,
    },
    /// A directory was expected, something else found.
    #[error("{path} is not a directory")]
    NotADirectory {
        /// The path as given.
        path: String,
    },
    /// The path exists and the operation needs it not to.
    #[error("{path} already exists")]
    AlreadyExists {
        /// The path as given.
        path: String,
    },
    /// The file is larger than the operation's limit.
    #[error("{path} is {size} bytes, over the limit of {limit} bytes: read it in pages")]
    TooLarge {
        /// The path as given.
        path: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The file is not valid UTF-8 text.
    #[error("{path} is not UTF-8 text (invalid byte at offset {valid_up_to}); it may be binary")]
    NotUtf8 {
        /// The path as given.
        path: String,
        /// Bytes of valid UTF-8 before the first invalid one.
        valid_up_to: usize,
    },
    /// Any other I/O failure.
    #[error("I/O error on {path}: {message}")]
    Io {
        /// The path as given.
        path: String,
        /// The operating system's message.
        message: String,
    },
}

impl FsError {
    /// A POSIX-style short name for the error (`ENOENT`, `EACCES` …), used as
    /// the outcome's `kind`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            FsError::NotFound { .. } => "ENOENT",
            FsError::Refused { .. } => "EACCES",
            FsError::IsADirectory { .. } => "EISDIR",
            FsError::NotADirectory { .. } => "ENOTDIR",
            FsError::AlreadyExists { .. } => "EEXIST",
            FsError::TooLarge { .. } => "EFBIG",
            FsError::NotUtf8 { .. } => "EILSEQ",
            FsError::Io { .. } => "EIO",
        }
    }
}

/// Confined file access. Builtin tools do all their file I/O through this
/// trait (never `std::fs`), so whichever implementation the host installs —
/// the sandbox plugin's, or a test double — applies to every tool.
///
/// Paths are as the model wrote them: relative to the workspace, or absolute.
/// An implementation resolves and confines them, and reports refusals as
/// [`FsError::Refused`] with the reason.
#[async_trait]
pub trait FileSystem: Send + Sync + 'static {
    /// The directory relative paths are resolved against.
    fn workspace_root(&self) -> &Path;

    /// Resolves `path` for `access` and returns the confined absolute path, for
    /// tools that hand a directory to a walker (glob, grep).
    ///
    /// # Errors
    ///
    /// [`FsError::Refused`] when the path escapes the policy.
    fn resolve(&self, path: &Path, access: Access) -> Result<PathBuf, FsError>;

    /// Reads at most `limit` bytes (all of them when `None`).
    async fn read(&self, path: &Path, limit: Option<u64>) -> Result<FileBytes, FsError>;

    /// Replaces (or creates) the file atomically with `contents`.
    async fn write(&self, path: &Path, contents: &[u8]) -> Result<WriteReport, FsError>;

    /// Lists a directory, sorted by name.
    async fn list(&self, path: &Path) -> Result<Vec<DirEntry>, FsError>;

    /// Metadata of one path.
    async fn metadata(&self, path: &Path) -> Result<Metadata, FsError>;

    /// Creates a directory and its missing parents.
    async fn create_dir_all(&self, path: &Path) -> Result<(), FsError>;

    /// Removes a file, or a directory (with its contents when `recursive`).
    async fn remove(&self, path: &Path, recursive: bool) -> Result<(), FsError>;

    /// Reads a whole file as UTF-8 text.
    ///
    /// # Errors
    ///
    /// Those of [`read`](Self::read), and [`FsError::NotUtf8`].
    async fn read_to_string(&self, path: &Path) -> Result<String, FsError> {
        let file = self.read(path, None).await?;
        String::from_utf8(file.bytes).map_err(|e| FsError::NotUtf8 {
            path: path.display().to_string(),
            valid_up_to: e.utf8_error().valid_up_to(),
        })
    }
}

impl fmt::Debug for dyn FileSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileSystem")
            .field("workspace_root", &self.workspace_root())
            .finish_non_exhaustive()
    }
}
