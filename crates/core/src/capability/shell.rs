//! The shell capability: every command a tool runs goes through it.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::CapabilityError;

/// A command to run.
///
/// ```
/// use std::time::Duration;
/// use tack_core::capability::CommandRequest;
/// let req = CommandRequest::new("git status").with_timeout(Duration::from_secs(5));
/// assert_eq!(req.command, "git status");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommandRequest {
    /// The command line, run by the implementation's shell (`sh -c` on Unix).
    pub command: String,
    /// The working directory (relative to the workspace); the workspace root when `None`.
    pub cwd: Option<PathBuf>,
    /// A deadline for the command, after which it is killed.
    pub timeout: Option<Duration>,
    /// The most bytes kept of stdout and of stderr each; the implementation's default when `None`.
    pub output_limit: Option<usize>,
    /// Text written to the command's stdin (empty stdin when `None`).
    pub stdin: Option<String>,
}

impl CommandRequest {
    /// A command with the implementation's defaults.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            cwd: None,
            timeout: None,
            output_limit: None,
            stdin: None,
        }
    }

    /// Sets the working directory.
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Sets the deadline.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the output cap.
    pub fn with_output_limit(mut self, bytes: usize) -> Self {
        self.output_limit = Some(bytes);
        self
    }

    /// Sets stdin.
    pub fn with_stdin(mut self, stdin: impl Into<String>) -> Self {
        self.stdin = Some(stdin.into());
        self
    }
}

/// What a finished (or killed) command produced.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CommandOutput {
    /// The exit code, when the command exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Captured stdout (lossy UTF-8), cut at the limit.
    pub stdout: String,
    /// Captured stderr (lossy UTF-8), cut at the limit.
    pub stderr: String,
    /// Whether stdout or stderr was cut.
    pub truncated: bool,
    /// Whether the request's deadline killed it.
    pub timed_out: bool,
    /// How long it ran.
    pub duration: Duration,
}

/// Runs commands, confined. Builtin tools run every command through this trait
/// (never `std::process`), so the sandbox plugin's confinement applies to them.
#[async_trait]
pub trait Shell: Send + Sync + 'static {
    /// Runs `request` until it exits, its deadline passes, or `cancel` fires
    /// (then the whole process group is killed and
    /// [`CapabilityError::Cancelled`] returned).
    ///
    /// A command that ran and failed is a [`CommandOutput`] with a non-zero
    /// exit code, not an error.
    ///
    /// # Errors
    ///
    /// Why the command could not be run: [`CapabilityError::CommandRefused`],
    /// [`CapabilityError::EmptyCommand`], [`CapabilityError::Spawn`],
    /// [`CapabilityError::Cancelled`] or [`CapabilityError::CommandIo`].
    async fn run(
        &self,
        request: CommandRequest,
        cancel: CancellationToken,
    ) -> Result<CommandOutput, CapabilityError>;
}

impl fmt::Debug for dyn Shell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shell").finish_non_exhaustive()
    }
}
