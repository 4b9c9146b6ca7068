//! Why a sandbox could not be built.

use std::path::PathBuf;

/// Why [`Sandbox::new`](crate::Sandbox::new) refused a policy.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// A configured root does not exist.
    #[error(
        "sandbox root {path} does not exist: create it, or point the sandbox at an existing directory"
    )]
    RootNotFound {
        /// The root as configured.
        path: PathBuf,
    },
    /// A configured root exists but is not a directory.
    #[error("sandbox root {path} is not a directory: roots must be directories")]
    RootNotADirectory {
        /// The root as configured.
        path: PathBuf,
    },
    /// A configured root could not be resolved or read.
    #[error("sandbox root {path} cannot be used: {message}")]
    RootUnreadable {
        /// The root as configured.
        path: PathBuf,
        /// The operating system's message.
        message: String,
    },
    /// A denied glob does not parse.
    #[error("denied path pattern `{glob}` is invalid: {message}")]
    InvalidGlob {
        /// The glob as configured.
        glob: String,
        /// What is wrong with it.
        message: String,
    },
    /// A hidden entry is neither absolute nor under the home directory.
    #[error(
        "hidden path `{entry}` is neither absolute nor under the home directory: name it as /path or ~/path"
    )]
    InvalidHidden {
        /// The entry as configured.
        entry: String,
    },
    /// The private temporary directory for commands could not be created.
    #[error("could not create the sandbox's private temporary directory under {parent}: {message}")]
    TempDir {
        /// Where it was to be created.
        parent: PathBuf,
        /// The operating system's message.
        message: String,
    },
    /// The isolation for commands could not be prepared.
    #[error("could not prepare the isolation for commands: {message}")]
    Isolation {
        /// What failed.
        message: String,
    },
}
