//! The confined shell capability.

mod capture;
mod env;
mod limits;
mod notes;
mod sweep;
mod tempdir;

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
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

use crate::isolation::{Launch, spawn};
use crate::path::Confinement;
use crate::policy::SandboxPolicy;
use crate::status::CommandAdmission;
use capture::{Captured, Shared, capture, take};
use env::scrubbed_env;
use sweep::SweepGuard;

/// How long output readers may take after the process group was killed
/// (a process that left the group could still hold a pipe open); then they
/// stop and what they read is returned with a note.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// The shell that runs the resource-limit wrapper (which then `exec`s the
/// command's shell).
const WRAPPER_SHELL: &str = "/bin/sh";

/// [`Shell`] confined by a sandbox policy. Obtained from
/// [`Sandbox::shell`](crate::Sandbox::shell).
#[derive(Debug)]
pub(crate) struct SandboxShell {
    pub(crate) confinement: Arc<Confinement>,
    pub(crate) policy: SandboxPolicy,
    pub(crate) admission: CommandAdmission,
    pub(crate) launch: Launch,
    pub(crate) tmpdir: Option<Arc<PrivateTempDir>>,
    pub(crate) wrapper: String,
    /// The seccomp filter refuses Unix sockets: a command whose output
    /// shows the refusal gets a note saying why.
    pub(crate) unix_refused: bool,
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

/// Waits (bounded) for a reader to reach the end of its stream, then takes
/// what it read; a reader still waiting is stopped and its output marked.
async fn collect(task: tokio::task::JoinHandle<()>, shared: &Shared) -> Captured {
    let abort = task.abort_handle();
    let finished = tokio::time::timeout(DRAIN_GRACE, task).await.is_ok();
    if !finished {
        abort.abort();
    }
    let mut captured = take(shared);
    captured.unfinished = !finished;
    captured
}

impl SandboxShell {
    /// The shell and its arguments: the limits wrapper, then the command.
    fn shell_args(&self, request: &CommandRequest) -> (PathBuf, Vec<OsString>) {
        let args = vec![
            "-c".into(),
            self.wrapper.clone().into(),
            "sh".into(),
            request.command.clone().into(),
        ];
        (PathBuf::from(WRAPPER_SHELL), args)
    }

    /// Builds the process for `program args`, with the command's
    /// environment, working directory and pipes.
    fn command_builder(
        &self,
        request: &CommandRequest,
        cwd: &Path,
    ) -> impl FnOnce(&Path, Vec<OsString>) -> tokio::process::Command + Send + 'static {
        let env = scrubbed_env(
            std::env::vars_os(),
            self.policy.extra_env(),
            self.tmpdir.as_ref().map(|t| t.path().as_os_str()),
        );
        let cwd = cwd.to_path_buf();
        let stdin = request.stdin.is_some();
        move |program, args| {
            let mut command = tokio::process::Command::new(program);
            command
                .args(args)
                .current_dir(cwd)
                .env_clear()
                .envs(env)
                .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .kill_on_drop(true);
            command
        }
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
        let mut protected = SweepGuard::start(self.confinement.clone()).await;
        let (program, args) = self.shell_args(&request);
        let make = self.command_builder(&request, &resolved.path);
        // The lease keeps the spawning thread (the parent bubblewrap's
        // `--die-with-parent` watches) alive until this run is over.
        let (mut child, lease) = spawn(
            &self.launch,
            &program,
            args,
            &resolved.path,
            protected.mountable(),
            make,
            self.policy.os_isolation_required(),
        )
        .await?;
        // The group is led by the watchdog on the floor; otherwise
        // `process_group(0)` made the child's pid the group id.
        let mut group = GroupKiller(
            lease
                .group()
                .or(child.id())
                .and_then(|id| i32::try_from(id).ok())
                .map(Pid::from_raw),
        );
        protected.watch(group.0.map(Pid::as_raw));

        if let (Some(text), Some(mut stdin)) = (request.stdin.clone(), child.stdin.take()) {
            tokio::spawn(async move {
                // A command that does not read its stdin closes the pipe: fine.
                let _ = stdin.write_all(text.as_bytes()).await;
            });
        }
        let limit = request
            .output_limit
            .unwrap_or(self.policy.default_output_limit());
        let (out_buf, err_buf) = (Shared::default(), Shared::default());
        let stdout = child
            .stdout
            .take()
            .map(|s| tokio::spawn(capture(s, limit, out_buf.clone())));
        let stderr = child
            .stderr
            .take()
            .map(|s| tokio::spawn(capture(s, limit, err_buf.clone())));

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
                let note = protected.finish().await;
                if !note.is_empty() {
                    tracing::warn!(%note, "a cancelled command created protected paths");
                }
                return Err(ShellError::Cancelled);
            }
        };
        let status = status.map_err(|e| ShellError::Io {
            message: e.to_string(),
        })?;

        let mut output = CommandOutput::default();
        let read = |task: Option<tokio::task::JoinHandle<()>>, shared: Shared| async move {
            match task {
                Some(task) => collect(task, &shared).await.into_text(),
                None => (String::new(), false),
            }
        };
        let ((out, out_cut), (mut err, err_cut)) =
            tokio::join!(read(stdout, out_buf), read(stderr, err_buf));
        let mut note = protected.finish().await;
        if let Some(unix) = self
            .unix_refused
            .then(|| notes::unix_socket_note(&out, &err))
            .flatten()
        {
            if !note.is_empty() && !note.ends_with('\n') {
                note.push('\n');
            }
            note.push_str(unix);
        }
        if !note.is_empty() {
            if !err.is_empty() && !err.ends_with('\n') {
                err.push('\n');
            }
            err.push_str(&note);
        }
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
