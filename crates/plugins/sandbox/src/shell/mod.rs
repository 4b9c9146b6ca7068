//! The confined shell capability.

mod capture;
mod env;
mod limits;
mod tempdir;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tack_core::capability::{Access, CommandOutput, CommandRequest, Shell, ShellError};
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

pub use env::{ALLOWED_ENV, SECRET_SUFFIXES, is_secret_name};
pub use limits::ResourceLimits;
pub(crate) use tempdir::PrivateTempDir;

use crate::isolation::{LandlockRules, spawn_confined};
use crate::path::Confinement;
use crate::policy::SandboxPolicy;
use crate::status::CommandAdmission;
use capture::{Captured, capture};
use env::scrubbed_env;

/// How long output readers may take after the process group was killed
/// (a process that left the group could still hold a pipe open).
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// [`Shell`] confined by a sandbox policy. Obtained from
/// [`Sandbox::shell`](crate::Sandbox::shell).
#[derive(Debug)]
pub(crate) struct SandboxShell {
    pub(crate) confinement: Arc<Confinement>,
    pub(crate) policy: SandboxPolicy,
    pub(crate) admission: CommandAdmission,
    pub(crate) rules: Option<LandlockRules>,
    pub(crate) tmpdir: Option<Arc<PrivateTempDir>>,
    pub(crate) wrapper: String,
}

enum Ended {
    Exited(std::io::Result<ExitStatus>),
    TimedOut,
    Cancelled,
}

/// Kills the command's process group when told to, or when dropped: a caller
/// that abandons [`Shell::run`] (a timeout wrapper dropping the future) still
/// leaves no process of the command behind.
struct GroupKiller(Option<Pid>);

impl GroupKiller {
    /// Kills every process of the group (once); a group that is already
    /// gone is fine.
    fn kill(&mut self) {
        if let Some(group) = self.0.take() {
            let _ = killpg(group, Signal::SIGKILL);
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn deadline(timeout: Option<Duration>) {
    match timeout {
        Some(timeout) => tokio::time::sleep(timeout).await,
        None => std::future::pending().await,
    }
}

async fn collect(task: tokio::task::JoinHandle<Captured>) -> Captured {
    let abort = task.abort_handle();
    match tokio::time::timeout(DRAIN_GRACE, task).await {
        Ok(Ok(captured)) => captured,
        Ok(Err(_)) => Captured::default(),
        Err(_) => {
            abort.abort();
            Captured::default()
        }
    }
}

impl SandboxShell {
    fn command(&self, request: &CommandRequest, cwd: &Path) -> tokio::process::Command {
        let tmpdir = self.tmpdir.as_ref().map(|t| t.path().as_os_str());
        let mut command = tokio::process::Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(&self.wrapper)
            .arg("sh")
            .arg(&request.command)
            .current_dir(cwd)
            .env_clear()
            .envs(scrubbed_env(
                std::env::vars_os(),
                self.policy.extra_env(),
                tmpdir,
            ))
            .stdin(if request.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        command
    }
}

#[async_trait]
impl Shell for SandboxShell {
    async fn run(
        &self,
        request: CommandRequest,
        cancel: CancellationToken,
    ) -> Result<CommandOutput, ShellError> {
        if request.command.trim().is_empty() {
            return Err(ShellError::EmptyCommand);
        }
        match &self.admission {
            CommandAdmission::Refused { reason } => {
                return Err(ShellError::Refused {
                    reason: reason.clone(),
                });
            }
            CommandAdmission::RunWithWarning { missing } => {
                tracing::warn!(%missing, command = %request.command, "running a command without full OS isolation");
            }
            CommandAdmission::Run => {}
        }
        let cwd = request.cwd.as_deref().unwrap_or(Path::new("."));
        let resolved =
            self.confinement
                .check(cwd, Access::Read)
                .map_err(|e| ShellError::Refused {
                    reason: format!("working directory: {e}"),
                })?;
        if !resolved.path.is_dir() {
            return Err(ShellError::Refused {
                reason: format!(
                    "working directory {} is not an existing directory in the workspace",
                    cwd.display()
                ),
            });
        }
        if cancel.is_cancelled() {
            return Err(ShellError::Cancelled);
        }

        let started = Instant::now();
        let command = self.command(&request, &resolved.path);
        let mut child = spawn_confined(
            command,
            self.rules.clone(),
            self.policy.os_isolation_required(),
        )
        .await?;
        // `process_group(0)`: the group id is the child's pid.
        let mut group = GroupKiller(
            child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .map(Pid::from_raw),
        );

        if let (Some(text), Some(mut stdin)) = (request.stdin.clone(), child.stdin.take()) {
            tokio::spawn(async move {
                // A command that does not read its stdin closes the pipe: fine.
                let _ = stdin.write_all(text.as_bytes()).await;
            });
        }
        let limit = request
            .output_limit
            .unwrap_or(self.policy.default_output_limit());
        let stdout = child.stdout.take().map(|s| tokio::spawn(capture(s, limit)));
        let stderr = child.stderr.take().map(|s| tokio::spawn(capture(s, limit)));

        let ended = tokio::select! {
            status = child.wait() => Ended::Exited(status),
            () = deadline(request.timeout) => Ended::TimedOut,
            () = cancel.cancelled() => Ended::Cancelled,
        };
        // Whatever happened, nothing of the command outlives it: background
        // children left in the group are killed too.
        group.kill();
        let (status, timed_out) = match ended {
            Ended::Exited(status) => (status, false),
            Ended::TimedOut => (child.wait().await, true),
            Ended::Cancelled => {
                let _ = child.wait().await;
                for task in [stdout, stderr].into_iter().flatten() {
                    task.abort();
                }
                return Err(ShellError::Cancelled);
            }
        };
        let status = status.map_err(|e| ShellError::Io {
            message: e.to_string(),
        })?;

        let mut output = CommandOutput::default();
        let (out, out_cut) = match stdout {
            Some(task) => collect(task).await.into_text(),
            None => (String::new(), false),
        };
        let (err, err_cut) = match stderr {
            Some(task) => collect(task).await.into_text(),
            None => (String::new(), false),
        };
        output.exit_code = status.code();
        output.signal = status.signal();
        output.stdout = out;
        output.stderr = err;
        output.truncated = out_cut || err_cut;
        output.timed_out = timed_out;
        output.duration = started.elapsed();
        Ok(output)
    }
}
