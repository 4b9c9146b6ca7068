//! Why a capability did not do what was asked.

use std::path::Path;

use super::{CapabilityKind, ClientRequestKind};

/// Why a capability did not do what was asked: the one error of the
/// [`FileSystem`](super::FileSystem), [`Shell`](super::Shell) and
/// [`ClientChannel`](super::ClientChannel) traits, and of a capability the
/// host did not install. Each variant says which capability produces it;
/// every message names what failed (the path as the caller gave it, the
/// command, the client) and says what to do.
///
/// A tool body returns it with `?`: it becomes a
/// [`ToolError`](crate::model::ToolError) whose `kind` is
/// [`kind_name`](Self::kind_name).
///
/// ```
/// use tack_core::capability::CapabilityError;
/// let err = CapabilityError::Missing { capability: "fs" };
/// assert!(err.to_string().contains("tack-sandbox"));
/// assert_eq!(err.kind_name(), "capability_missing");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CapabilityError {
    /// No provider is installed for this capability (from
    /// [`ToolRunContext`](crate::context::ToolRunContext)'s accessors, such
    /// as [`fs`](crate::context::ToolRunContext::fs)).
    #[error(
        "no `{capability}` capability is installed in this host: install a plugin that provides it (the sandbox plugin, tack-sandbox, provides `fs` and `shell`)"
    )]
    Missing {
        /// Which capability: `fs`, `shell`, `approval`, `dispatcher` or
        /// `client`.
        capability: &'static str,
    },
    /// Filesystem: nothing exists at the path.
    #[error("no such file or directory: {path}")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// Filesystem: the policy refuses the path (outside the workspace,
    /// read-only, denied).
    #[error("access to {path} refused: {reason}")]
    Refused {
        /// The path as given.
        path: String,
        /// Why, e.g. "path resolves outside the workspace via symlink src/link -> /etc".
        reason: String,
    },
    /// Filesystem: a file was expected, a directory found.
    #[error("{path} is a directory, not a file: list it instead")]
    IsADirectory {
        /// The path as given.
        path: String,
    },
    /// Filesystem: a directory was expected, something else found.
    #[error("{path} is not a directory")]
    NotADirectory {
        /// The path as given.
        path: String,
    },
    /// Filesystem: the path exists and the operation needs it not to.
    #[error("{path} already exists")]
    AlreadyExists {
        /// The path as given.
        path: String,
    },
    /// Filesystem: the file is larger than the operation's limit.
    #[error("{path} is {size} bytes, over the limit of {limit} bytes: read it in pages")]
    TooLarge {
        /// The path as given.
        path: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Filesystem: the file is not valid UTF-8 text.
    #[error("{path} is not UTF-8 text (invalid byte at offset {valid_up_to}); it may be binary")]
    NotUtf8 {
        /// The path as given.
        path: String,
        /// Bytes of valid UTF-8 before the first invalid one.
        valid_up_to: usize,
    },
    /// Filesystem: any other I/O failure on a path.
    #[error("I/O error on {path}: {message}")]
    Io {
        /// The path as given.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// Shell: the policy refuses to run the command (e.g. OS isolation
    /// required but unavailable, a working directory outside the workspace).
    #[error("command refused: {reason}")]
    CommandRefused {
        /// Why.
        reason: String,
    },
    /// Shell: the command line is empty.
    #[error("the command is empty: pass the command line to run")]
    EmptyCommand,
    /// Shell: the process could not be started.
    #[error("could not start the command: {message}")]
    Spawn {
        /// The operating system's message.
        message: String,
    },
    /// Shell: the caller cancelled; the process group was killed.
    #[error("the command was cancelled and its processes were killed")]
    Cancelled,
    /// Shell: any other I/O failure while running the command.
    #[error("I/O error while running the command: {message}")]
    CommandIo {
        /// The operating system's message.
        message: String,
    },
    /// Client channel: the call did not come from a client that can be
    /// asked.
    #[error(
        "no client can be asked during this call: only a tool served to a client (tack mcp serve) can ask it for sampling, elicitation or roots"
    )]
    NoClient,
    /// Client channel: the client did not declare the capability the
    /// question needs.
    #[error("the client did not declare the `{kind}` capability, so it cannot be asked for {kind}")]
    Unsupported {
        /// What was asked for.
        kind: ClientRequestKind,
    },
    /// Client channel: the client will answer when it sends the call again
    /// (MCP 2026-07-28's `input_required` round trip): the body should
    /// return this error at once; it runs again with the answers.
    #[error(
        "the client's answers are needed: the call is sent back to the client, which calls again with them"
    )]
    InputRequired,
    /// Client channel: the client answered with an error, or the request
    /// could not be sent.
    #[error("the client did not answer: {message}")]
    ClientFailed {
        /// What went wrong.
        message: String,
    },
}

impl CapabilityError {
    /// [`CapabilityError::Missing`]: no provider of `kind` is installed.
    pub(crate) fn missing(kind: CapabilityKind) -> Self {
        CapabilityError::Missing {
            capability: kind.name(),
        }
    }

    /// [`CapabilityError::NotFound`] for `path` as given.
    ///
    /// ```
    /// # use std::path::Path;
    /// # use tack_core::capability::CapabilityError;
    /// let error = CapabilityError::not_found(Path::new("notes.txt"));
    /// assert_eq!(error.kind_name(), "ENOENT");
    /// assert!(error.to_string().contains("notes.txt"));
    /// ```
    pub fn not_found(path: &Path) -> Self {
        CapabilityError::NotFound {
            path: path.display().to_string(),
        }
    }

    /// [`CapabilityError::Refused`] for `path` as given, with the reason the
    /// caller reads.
    pub fn refused(path: &Path, reason: impl Into<String>) -> Self {
        CapabilityError::Refused {
            path: path.display().to_string(),
            reason: reason.into(),
        }
    }

    /// [`CapabilityError::NotADirectory`] for `path` as given.
    pub fn not_a_directory(path: &Path) -> Self {
        CapabilityError::NotADirectory {
            path: path.display().to_string(),
        }
    }

    /// [`CapabilityError::IsADirectory`] for `path` as given.
    pub fn is_a_directory(path: &Path) -> Self {
        CapabilityError::IsADirectory {
            path: path.display().to_string(),
        }
    }

    /// A short name for the error, used as the tool error's `kind`:
    /// POSIX-style for the filesystem's (`ENOENT`, `EACCES` …), and
    /// `capability_missing`, `refused`, `empty_command`, `spawn_failed`,
    /// `cancelled`, `io`, `no_client`, `client_unsupported`,
    /// `input_required` or `client_failed` for the others.
    pub fn kind_name(&self) -> &'static str {
        match self {
            CapabilityError::Missing { .. } => "capability_missing",
            CapabilityError::NotFound { .. } => "ENOENT",
            CapabilityError::Refused { .. } => "EACCES",
            CapabilityError::IsADirectory { .. } => "EISDIR",
            CapabilityError::NotADirectory { .. } => "ENOTDIR",
            CapabilityError::AlreadyExists { .. } => "EEXIST",
            CapabilityError::TooLarge { .. } => "EFBIG",
            CapabilityError::NotUtf8 { .. } => "EILSEQ",
            CapabilityError::Io { .. } => "EIO",
            CapabilityError::CommandRefused { .. } => "refused",
            CapabilityError::EmptyCommand => "empty_command",
            CapabilityError::Spawn { .. } => "spawn_failed",
            CapabilityError::Cancelled => "cancelled",
            CapabilityError::CommandIo { .. } => "io",
            CapabilityError::NoClient => "no_client",
            CapabilityError::Unsupported { .. } => "client_unsupported",
            CapabilityError::InputRequired => "input_required",
            CapabilityError::ClientFailed { .. } => "client_failed",
        }
    }
}
