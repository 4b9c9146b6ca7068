//! The confined shell capability.

mod capture;
mod env;
mod notes;
mod sweep;
mod tempdir;
mod warm;

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tack_core::capability::{Access, CapabilityError, CommandOutput, CommandRequest, Shell};
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

pub use env::{ALLOWED_ENV, SECRET_SUFFIXES, is_secret_name};
pub(crate) use tempdir::PrivateTempDir;

use crate::isolation::pids::CallCgroup;
use crate::isolation::{Launch, spawn, spawn_floor_supervisor};
use crate::path::Confinement;
use crate::policy::SandboxPolicy;
use crate::status::CommandAdmission;
use capture::{Captured, Shared, capture, take};
use env::scrubbed_env;
use sweep::SweepGuard;
use warm::{EnvKey, WarmEnd, WarmEnv, make_fifos};
pub(crate) use warm::{WarmPool, supervisor_script};

/// The most processes a call's cgroup allows when the policy sets no limit
/// (the kernel's own ceiling on process ids).
const PID_MAX_LIMIT: u64 = 4_194_304;

/// How long output readers may take after the process group was killed
/// (a process that left the group could still hold a pipe open); then they
/// stop and what they read is returned with a note.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// [`Shell`] confined by a sandbox policy. Obtained from
/// [`Sandbox::shell`](crate::Sandbox::shell).
#[derive(Debug)]
pub(crate) struct SandboxShell {
    pub(crate) confinement: Arc<Confinement>,
    pub(crate) policy: SandboxPolicy,
    pub(crate) admission: CommandAdmission,
    pub(crate) launch: Launch,
    pub(crate) tmpdir: Option<Arc<PrivateTempDir>>,
    /// The resource-limit wrapper, run by `shell` itself, which then runs
    /// the command in place.
    pub(crate) wrapper: String,
    /// The shell commands run in.
    pub(crate) shell: PathBuf,
    /// The seccomp filter refuses Unix sockets: a command whose output
    /// shows the refusal gets a note saying why.
    pub(crate) unix_refused: bool,
    /// Idle warm environments (bubblewrap only).
    pub(crate) warm: WarmPool,
    /// The warm environments' supervisor script.
    pub(crate) supervisor: String,
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
    /// The shell and its arguments: the limits wrapper, then the command
    /// (in the same process; `$0` is the shell, as with `shell -c`).
    fn shell_args(&self, request: &CommandRequest) -> (PathBuf, Vec<OsString>) {
        let args = vec![
            "-c".into(),
            self.wrapper.clone().into(),
            self.shell.clone().into(),
            request.command.clone().into(),
        ];
        (self.shell.clone(), args)
    }

    /// Builds the process for `program args`, with the command's
    /// environment, working directory and pipes.
    fn command_builder(
        &self,
        request: &CommandRequest,
        cwd: &Path,
        env: Vec<(OsString, OsString)>,
    ) -> impl FnOnce(&Path, Vec<OsString>) -> tokio::process::Command + Send + 'static {
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
    ) -> Result<CommandOutput, CapabilityError> {
        if request.command.trim().is_empty() {
            return Err(CapabilityError::EmptyCommand);
        }
        match &self.admission {
            CommandAdmission::Refused { reason } => {
                return Err(CapabilityError::CommandRefused {
                    reason: reason.clone(),
                });
            }
            CommandAdmission::RunWithWarning { missing } => {
                tracing::warn!(%missing, command = %request.command, "running a command without full OS isolation");
            }
            CommandAdmission::Run => {}
        }
        let cwd = request.cwd.as_deref().unwrap_or(Path::new("."));
        let resolved = self.confinement.check(cwd, Access::Read).map_err(|e| {
            CapabilityError::CommandRefused {
                reason: format!("working directory: {e}"),
            }
        })?;
        if !resolved.path.is_dir() {
            return Err(CapabilityError::CommandRefused {
                reason: format!(
                    "working directory {} is not an existing directory in the workspace",
                    cwd.display()
                ),
            });
        }
        if cancel.is_cancelled() {
            return Err(CapabilityError::Cancelled);
        }

        let started = Instant::now();
        // Inside bubblewrap the existing protected entries are mounted
        // read-only; elsewhere what a command changes in them is put back
        // when it ends.
        let keep = !matches!(self.launch, Launch::Bwrap { .. });
        let mut protected = SweepGuard::start(self.confinement.clone(), keep).await;
        // A newline in the directory, or a NUL byte anywhere (which the
        // supervisor's `read` would drop, running other text than the
        // command's), take the classic way, which refuses a NUL.
        let fits =
            !resolved.path.to_string_lossy().contains('\n') && !request.command.contains('\0');
        if self.warm.enabled() && fits {
            if let Some(key) = self.env_key(&protected) {
                if let Some(result) = self
                    .run_warm(key, &request, &resolved.path, &cancel, &mut protected)
                    .await
                {
                    return result.map(|mut output| {
                        output.duration = started.elapsed();
                        output
                    });
                }
            }
        }
        let (program, args) = self.shell_args(&request);
        let make = self.command_builder(&request, &resolved.path, self.env());
        // The lease keeps the spawning thread (the parent bubblewrap's
        // `--die-with-parent` watches) alive until this run is over.
        let (mut child, mut lease) = spawn(
            &self.launch,
            &program,
            args,
            &resolved.path,
            protected.mountable(),
            make,
            self.policy.os_isolation_required(),
            None,
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
        let readers = Readers::start(child.stdout.take(), child.stderr.take(), limit);

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
                lease.end().await;
                readers.abort();
                warn_cancelled(protected.finish().await);
                return Err(CapabilityError::Cancelled);
            }
        };
        lease.end().await;
        let status = status.map_err(|e| CapabilityError::CommandIo {
            message: e.to_string(),
        })?;
        let mut output = self
            .output(readers, protected, status.code(), status.signal())
            .await;
        output.timed_out = timed_out;
        output.duration = started.elapsed();
        Ok(output)
    }
}

/// The readers of a command's two output streams.
struct Readers {
    stdout: Option<tokio::task::JoinHandle<()>>,
    stderr: Option<tokio::task::JoinHandle<()>>,
    out: Shared,
    err: Shared,
}

impl Readers {
    /// Starts reading both streams, each kept up to `limit` bytes.
    fn start(
        stdout: Option<impl tokio::io::AsyncRead + Unpin + Send + 'static>,
        stderr: Option<impl tokio::io::AsyncRead + Unpin + Send + 'static>,
        limit: usize,
    ) -> Self {
        let (out, err) = (Shared::default(), Shared::default());
        Self {
            stdout: stdout.map(|s| tokio::spawn(capture(s, limit, out.clone()))),
            stderr: stderr.map(|s| tokio::spawn(capture(s, limit, err.clone()))),
            out,
            err,
        }
    }

    /// Stops both readers.
    fn abort(self) {
        for task in [self.stdout, self.stderr].into_iter().flatten() {
            task.abort();
        }
    }

    /// Both texts, each with whether it was cut.
    async fn texts(self) -> ((String, bool), (String, bool)) {
        let read = |task: Option<tokio::task::JoinHandle<()>>, shared: Shared| async move {
            match task {
                Some(task) => collect(task, &shared).await.into_text(),
                None => (String::new(), false),
            }
        };
        tokio::join!(read(self.stdout, self.out), read(self.stderr, self.err))
    }
}

fn warn_cancelled(note: String) {
    if !note.is_empty() {
        tracing::warn!(%note, "a cancelled command created or changed protected paths");
    }
}

impl SandboxShell {
    /// The output of a command that ended: both streams, then the notes
    /// (protected paths it created, a refused Unix socket) on stderr.
    async fn output(
        &self,
        readers: Readers,
        protected: SweepGuard,
        exit_code: Option<i32>,
        signal: Option<i32>,
    ) -> CommandOutput {
        let ((out, out_cut), (mut err, err_cut)) = readers.texts().await;
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
        let mut output = CommandOutput::default();
        output.exit_code = exit_code;
        output.signal = signal;
        output.stdout = out;
        output.stderr = err;
        output.truncated = out_cut || err_cut;
        output
    }

    /// The environment of a command started now.
    fn env(&self) -> Vec<(OsString, OsString)> {
        scrubbed_env(
            std::env::vars_os(),
            self.policy.extra_env(),
            self.tmpdir.as_ref().map(|t| t.path().as_os_str()),
        )
    }

    /// The key of a warm environment for a command started now, or `None`
    /// when commands start the classic way here: under bubblewrap, and on
    /// the floor where Landlock limits writes, a watchdog leads the
    /// commands' group and the host can make the call's `pids` cgroup (which
    /// the host empties after each command; without one, nothing would find
    /// what a command left running outside the group's reach).
    fn env_key(&self, protected: &SweepGuard) -> Option<EnvKey> {
        match &self.launch {
            Launch::Bwrap { plan, .. } => {
                Some(EnvKey::now(plan, &protected.mountable(), self.env()))
            }
            Launch::Floor {
                landlock: Some(rules),
                watchdog: true,
                ..
            } if rules.writable.is_some() && crate::isolation::pids::hierarchy().is_some() => {
                Some(EnvKey::on_floor(
                    crate::isolation::carve::readable_around(&rules.hidden),
                    self.env(),
                ))
            }
            _ => None,
        }
    }

    /// Runs the command in a warm environment (see [`warm`]) keyed `key`;
    /// `None` when none could be had, and the command was not started.
    async fn run_warm(
        &self,
        key: EnvKey,
        request: &CommandRequest,
        cwd: &Path,
        cancel: &CancellationToken,
        protected: &mut SweepGuard,
    ) -> Option<Result<CommandOutput, CapabilityError>> {
        let mountable = protected.mountable();
        let mut warm = match self.warm.take(&key) {
            Some(warm) => warm,
            None => match self.start_env(key, mountable).await {
                Ok(warm) => warm,
                Err(reason) => {
                    self.warm.disable(&reason);
                    return None;
                }
            },
        };
        let io = |e: std::io::Error| CapabilityError::CommandIo {
            message: format!("the command's environment: {e}"),
        };
        if let Some(text) = &request.stdin {
            if let Err(e) = std::fs::write(warm.dir().join("in"), text) {
                return Some(Err(io(e)));
            }
        }
        let open = |name: &str| {
            tokio::net::unix::pipe::OpenOptions::new().open_receiver(warm.dir().join(name))
        };
        let (stdout, stderr) = match (open("out"), open("err")) {
            (Ok(out), Ok(err)) => (out, err),
            (Err(e), _) | (_, Err(e)) => return Some(Err(io(e))),
        };
        // A supervisor that does not take the request has not started the
        // command: the classic way runs it.
        let nonce = match warm
            .start(cwd, &request.command, request.stdin.is_some())
            .await
        {
            Ok(nonce) => nonce,
            Err(reason) => {
                tracing::debug!(%reason, "a warm environment failed; starting the command the classic way");
                return None;
            }
        };
        protected.watch(None);
        let limit = request
            .output_limit
            .unwrap_or(self.policy.default_output_limit());
        let readers = Readers::start(Some(stdout), Some(stderr), limit);
        let ended = tokio::select! {
            end = warm.end(nonce) => Some(end),
            () = deadline(request.timeout) => None,
            () = cancel.cancelled() => {
                let _ = warm.reap().await;
                readers.abort();
                warn_cancelled(std::mem::replace(protected, SweepGuard::empty(self.confinement.clone())).finish().await);
                return Some(Err(CapabilityError::Cancelled));
            }
        };
        let protected = std::mem::replace(protected, SweepGuard::empty(self.confinement.clone()));
        let (code, signal, timed_out) = match ended {
            Some(WarmEnd::Exited { status, reusable }) => {
                if reusable {
                    let output = self.output(readers, protected, Some(status), None).await;
                    self.warm.put(warm);
                    return Some(Ok(output));
                }
                let _ = warm.reap().await;
                (Some(status), None, false)
            }
            Some(WarmEnd::Broken(reason)) => {
                let _ = warm.reap().await;
                readers.abort();
                let _ = protected.finish().await;
                return Some(Err(CapabilityError::CommandIo {
                    message: format!("the command's sandbox failed: {reason}"),
                }));
            }
            None => {
                let status = warm.reap().await.ok();
                (
                    status.and_then(|s| s.code()),
                    status.map_or(Some(9), |s| s.signal()),
                    true,
                )
            }
        };
        let mut output = self.output(readers, protected, code, signal).await;
        output.timed_out = timed_out;
        Some(Ok(output))
    }

    /// Starts a warm environment for commands keyed `key`.
    async fn start_env(&self, key: EnvKey, mountable: Vec<PathBuf>) -> Result<WarmEnv, String> {
        let dir = PrivateTempDir::create().map_err(|e| e.to_string())?;
        make_fifos(dir.path())?;
        let mut args = vec![
            OsString::from("-c"),
            self.supervisor.clone().into(),
            "tack-sandbox-supervisor".into(),
            dir.path().into(),
        ];
        // On the floor: the call's cgroup, which each command joins.
        let call = match &self.launch {
            Launch::Floor { .. } => {
                let max = self.policy.limits().processes.unwrap_or(PID_MAX_LIMIT);
                let call = CallCgroup::create(max)?;
                args.push(call.procs_file().into());
                Some(call)
            }
            _ => None,
        };
        let vars = key.env.clone();
        let make = move |program: &Path, args: Vec<OsString>| {
            let mut command = tokio::process::Command::new(program);
            command
                .args(args)
                .current_dir("/")
                .env_clear()
                .envs(vars)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .process_group(0)
                .kill_on_drop(true);
            command
        };
        if let Some(call) = call {
            // The FIFOs themselves, not their directory: a command can create
            // nothing there for the next one to find.
            let grant = vec![
                dir.path().join("out"),
                dir.path().join("err"),
                call.procs_file(),
            ];
            let (child, lease) = spawn_floor_supervisor(
                &self.launch,
                &self.shell,
                args,
                make,
                self.policy.os_isolation_required(),
                grant,
            )
            .await
            .map_err(|e| e.to_string())?;
            return WarmEnv::on_floor(key, child, lease, dir, call).await;
        }
        let (child, lease) = spawn(
            &self.launch,
            &self.shell,
            args,
            Path::new("/"),
            mountable,
            make,
            self.policy.os_isolation_required(),
            Some(dir.path().to_path_buf()),
        )
        .await
        .map_err(|e| e.to_string())?;
        WarmEnv::new(key, child, lease, dir, self.policy.limits().processes).await
    }
}
