//! Running one hook command: `sh -c`, JSON on stdin, bounded output, a
//! timeout that kills the whole process group.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use crate::config::HookCommand;

/// The most bytes of stdout or stderr kept from one hook (the rest is read
/// and dropped, so the hook never blocks on a full pipe).
pub const MAX_OUTPUT_BYTES: usize = 256 * 1024;

/// How a hook command ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HookExit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
    /// It ran past its timeout; its process group was killed.
    TimedOut(Duration),
    /// It could not be started.
    SpawnFailed(String),
    /// The host's check before running it ([`PreRun`]) refused it: it did
    /// not run, and this blocks whatever `failClosed` says.
    Refused(String),
}

/// A host's check right before a hook command runs (e.g. that the files it
/// runs are still the ones the user reviewed): `Err(why)` and the command
/// does not run; the hook blocks as if it had failed closed, and `why` is
/// reported.
pub type PreRun = std::sync::Arc<dyn Fn(&HookCommand) -> Result<(), String> + Send + Sync>;

/// The run of `hook` that a [`PreRun`] check refused.
pub(crate) fn refused(hook: &HookCommand, why: String) -> HookRun {
    HookRun {
        command: hook.command.clone(),
        exit: HookExit::Refused(why),
        stdout: String::new(),
        stderr: String::new(),
        truncated: false,
        elapsed: Duration::ZERO,
        fail_closed: true,
    }
}

/// What one hook command did.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HookRun {
    /// The command line.
    pub command: String,
    /// How it ended.
    pub exit: HookExit,
    /// Its stdout (at most [`MAX_OUTPUT_BYTES`], lossily UTF-8).
    pub stdout: String,
    /// Its stderr (likewise).
    pub stderr: String,
    /// Whether stdout or stderr was cut at [`MAX_OUTPUT_BYTES`].
    pub truncated: bool,
    /// How long it ran.
    pub elapsed: Duration,
    /// Whether its errors block (`failClosed`).
    pub fail_closed: bool,
}

/// Kills the process group when dropped (a cancelled call, a timeout).
struct Group(Option<Pid>);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            let _ = killpg(pid, Signal::SIGKILL);
        }
    }
}

async fn read_capped<R: AsyncRead + Unpin>(reader: Option<R>) -> (Vec<u8>, bool) {
    let Some(mut reader) = reader else {
        return (Vec::new(), false);
    };
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    let mut truncated = false;
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_OUTPUT_BYTES.saturating_sub(kept.len());
                if n > room {
                    truncated = true;
                }
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    (kept, truncated)
}

/// Runs `hook` with `input` on stdin, in `cwd`, with `env` added.
pub(crate) async fn run(
    hook: &HookCommand,
    input: &[u8],
    cwd: &Path,
    env: &[(&str, String)],
) -> HookRun {
    let started = Instant::now();
    let done = |exit, stdout: Vec<u8>, stderr: Vec<u8>, truncated| HookRun {
        command: hook.command.clone(),
        exit,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        truncated,
        elapsed: started.elapsed(),
        fail_closed: hook.fail_closed,
    };
    let mut command = match &hook.args {
        // Claude Code's exec form: no shell; the project directory is still
        // filled in.
        Some(args) => {
            let fill = |text: &str| {
                env.iter().fold(text.to_owned(), |text, (key, value)| {
                    text.replace(&format!("${{{key}}}"), value)
                        .replace(&format!("${key}"), value)
                })
            };
            let mut command = Command::new(fill(&hook.command));
            command.args(args.iter().map(|a| fill(a)));
            command
        }
        None => {
            let mut command = Command::new(hook.shell.as_deref().unwrap_or("sh"));
            command.arg("-c").arg(&hook.command);
            command
        }
    };
    command
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return done(
                HookExit::SpawnFailed(match &hook.args {
                    Some(_) => format!("cannot start `{}`: {e}", hook.command),
                    None => format!(
                        "cannot start `{} -c`: {e}",
                        hook.shell.as_deref().unwrap_or("sh")
                    ),
                }),
                Vec::new(),
                Vec::new(),
                false,
            );
        }
    };
    let mut group = Group(
        child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw),
    );
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let input = input.to_vec();
    let feed = async move {
        if let Some(mut stdin) = stdin {
            // A hook that does not read its input closes the pipe: fine.
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        }
    };
    let work = async {
        let ((), (out, cut_out), (err, cut_err), status) =
            tokio::join!(feed, read_capped(stdout), read_capped(stderr), child.wait());
        (out, err, cut_out || cut_err, status)
    };
    match tokio::time::timeout(hook.timeout, work).await {
        Ok((out, err, truncated, status)) => {
            let exit = match status {
                Ok(status) => match (status.code(), unix_signal(&status)) {
                    (Some(code), _) => HookExit::Code(code),
                    (None, Some(signal)) => HookExit::Signal(signal),
                    (None, None) => HookExit::SpawnFailed("no exit status".into()),
                },
                Err(e) => HookExit::SpawnFailed(format!("cannot wait for the hook: {e}")),
            };
            // Stragglers it left in its group go with it.
            drop(group);
            done(exit, out, err, truncated)
        }
        Err(_) => {
            if let Some(pid) = group.0.take() {
                let _ = killpg(pid, Signal::SIGKILL);
            }
            let _ = child.wait().await;
            done(
                HookExit::TimedOut(hook.timeout),
                Vec::new(),
                Vec::new(),
                false,
            )
        }
    }
}

fn unix_signal(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}
