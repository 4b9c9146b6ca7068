//! The floor's spawning threads, prepared ahead.
//!
//! Starting a command on the floor means: a thread, the command's watchdog
//! (a process), the seccomp filter compiled for the watchdog's group, and
//! capabilities, `no_new_privs`, Landlock and the filter applied to the
//! thread. None of it depends on the command, so threads for the next
//! commands are prepared while one starts (two wait, so that commands run
//! back to back or together in one turn find one ready), and a command's
//! start is one `fork` and `exec` from a thread that was ready. Each command still
//! gets a thread, a watchdog, a process group and a filter of its own: a
//! prepared thread serves exactly one command.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use tack_core::capability::CapabilityError;
use tokio::process::Command;

use super::{FloorParts, Spawned, Started, prepare_floor, spawn_error};

/// Builds the command from a program and its leading arguments.
pub(super) type MakeCommand = Box<dyn FnOnce(&Path, Vec<OsString>) -> Command + Send>;

/// What a prepared thread needs to start its command.
pub(super) struct Job {
    pub(super) shell: PathBuf,
    pub(super) shell_args: Vec<OsString>,
    pub(super) make: MakeCommand,
    pub(super) reply: tokio::sync::oneshot::Sender<Spawned>,
    /// The lease's channel: the thread lives until it closes.
    pub(super) alive: std::sync::mpsc::Receiver<()>,
}

/// A thread with the floor applied (or the reason it could not be),
/// waiting for its command.
#[derive(Debug)]
pub(super) struct Prepared {
    jobs: std::sync::mpsc::Sender<Job>,
}

impl Prepared {
    /// Starts preparing a thread for `parts`. Dropped without a job, the
    /// thread ends and its watchdog with it.
    pub(super) fn start(
        parts: FloorParts,
        required: bool,
        runtime: tokio::runtime::Handle,
    ) -> Result<Self, CapabilityError> {
        let (jobs, waiting) = std::sync::mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("tack-sandbox-spawn".to_owned())
            .spawn(move || {
                let _runtime = runtime.enter();
                let prepared = prepare_floor(&parts, required);
                let Ok(job) = waiting.recv() else {
                    return;
                };
                let result = prepared.and_then(|prepared| {
                    let mut command = (job.make)(&job.shell, job.shell_args);
                    let group = prepared.group;
                    if let Some(group) = group.and_then(|g| i32::try_from(g).ok()) {
                        command.process_group(group);
                    }
                    let child = command.spawn().map_err(|e| spawn_error(&job.shell, e))?;
                    Ok(Started::new(
                        child,
                        prepared.watchdog,
                        group,
                        prepared.cgroup,
                    ))
                });
                // Live as long as the command: until the lease is dropped.
                if job.reply.send(result).is_ok() {
                    while job.alive.recv().is_ok() {}
                }
            })
            .map_err(|e| CapabilityError::Spawn {
                message: format!("could not start the spawning thread: {e}"),
            })?;
        Ok(Self { jobs })
    }

    /// Hands the command to the thread; a thread that ended hands it back.
    pub(super) fn run(self, job: Job) -> Result<(), Job> {
        self.jobs.send(job).map_err(|unsent| unsent.0)
    }
}

/// How many prepared threads a sandbox keeps waiting: two, so that commands
/// started back to back, or together in one turn, find one ready.
const KEPT: usize = 2;

/// The prepared threads of one sandbox's floor.
#[derive(Debug, Default)]
pub(crate) struct Ready {
    next: Mutex<Vec<Prepared>>,
}

impl Ready {
    /// A prepared thread, if one is waiting, and how many more to prepare
    /// so that [`KEPT`] wait again.
    pub(super) fn take(&self) -> (Option<Prepared>, usize) {
        let mut next = self.next.lock().unwrap_or_else(PoisonError::into_inner);
        let taken = next.pop();
        (taken, KEPT.saturating_sub(next.len()))
    }

    /// Keeps `prepared` for a later command (unless enough wait already).
    pub(super) fn keep(&self, prepared: Prepared) {
        let mut next = self.next.lock().unwrap_or_else(PoisonError::into_inner);
        if next.len() < KEPT {
            next.push(prepared);
        }
    }
}
