//! OS isolation for commands, applied without `unsafe`.
//!
//! Two ways to start a confined command:
//!
//! * **bubblewrap** (when present and not disabled): `bwrap` builds new
//!   PID, network, IPC, UTS and mount namespaces, drops every capability
//!   and loads the floor's seccomp filter (handed over in memory file
//!   descriptors) just before it runs the command.
//! * **the floor** (always otherwise): a dedicated thread starts the
//!   command's watchdog (the leader of its process group, see [`Watchdog`]),
//!   drops every capability, sets `no_new_privs`, restricts itself with
//!   Landlock and loads the seccomp filter, then spawns the command into the
//!   watchdog's group; the command inherits all of it (capabilities,
//!   `no_new_privs`, Landlock domains and seccomp filters are per thread and
//!   survive `fork` and `exec`). The runtime's other threads are never
//!   restricted.
//!
//! In both cases the spawning thread lives as long as the command:
//! bubblewrap's `--die-with-parent` fires when the *thread* that spawned it
//! ends, so the thread ending early would kill the command, and its living on
//! until the host dies is what makes a killed host take the command with it.

pub(crate) mod bwrap;
pub(crate) mod capabilities;
pub(crate) mod carve;
pub(crate) mod landlock;
pub(crate) mod pids;
mod ready;
pub(crate) mod seccomp;
pub(crate) mod sockets;

use std::ffi::OsString;
use std::io::{Seek, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ::landlock::RulesetStatus;
use seccompiler::BpfProgram;
use tack_core::capability::CapabilityError;
use tokio::process::{Child, Command};

use self::seccomp::FilterSpec;

pub(crate) use self::bwrap::{BwrapPlan, KernelBwrap};
pub(crate) use self::landlock::{KernelLandlock, LandlockRules};

/// How one sandbox starts its commands.
#[derive(Clone, Debug)]
pub(crate) enum Launch {
    /// No restriction at all (full-access with the network allowed).
    Plain,
    /// The floor, applied on the spawning thread.
    Floor {
        /// Drop every capability.
        drop_capabilities: bool,
        /// Landlock rules, when any apply.
        landlock: Option<LandlockRules>,
        /// The seccomp filter, compiled for each command (its process group
        /// is part of it), when the kernel takes filters.
        seccomp: Option<FilterSpec>,
        /// Lead each command's process group with a watchdog.
        watchdog: bool,
        /// The next command's spawning thread, prepared ahead.
        ready: Arc<ready::Ready>,
        /// The per-call process limit, applied through a `pids` cgroup
        /// where one can be made.
        processes: Option<u64>,
    },
    /// bubblewrap, which applies the filter itself.
    Bwrap {
        /// Mounts and namespaces.
        plan: BwrapPlan,
        /// The seccomp programs as bytes.
        seccomp: Arc<Vec<Vec<u8>>>,
        /// The per-call process limit, applied through a `pids` cgroup
        /// where one can be made.
        processes: Option<u64>,
    },
}

/// Keeps the spawning thread alive; dropping it lets the thread end (and
/// disarms the watchdog first).
#[derive(Debug)]
pub(crate) struct SpawnerLease {
    _alive: Option<std::sync::mpsc::Sender<()>>,
    watchdog: Option<Watchdog>,
    group: Option<u32>,
    /// The call's `pids` cgroup, removed once its processes are gone.
    _cgroup: Option<pids::CallCgroup>,
}

impl SpawnerLease {
    /// The command's process group, when it is not the command's own pid.
    pub(crate) fn group(&self) -> Option<u32> {
        self.group
    }

    /// Kills the watchdog (once the command's group was killed) and waits
    /// until it is gone, so that nothing of the group is left, not even
    /// the watchdog as a zombie.
    pub(crate) async fn end(&mut self) {
        if let Some(mut watchdog) = self.watchdog.take() {
            let _ = watchdog.child.start_kill();
            let _ = watchdog.child.wait().await;
            drop(watchdog.pipe.take());
        }
    }
}

/// On the floor, the leader of the command's process group: a small shell
/// that waits for the end of a pipe whose other end only the host holds.
/// The kernel closes that end when the host dies, by any signal (`SIGKILL`
/// included); the watchdog then reads the end of the file and kills its
/// group, the command's. The command joins the group with
/// `setpgid(0, group)`, the only `setpgid` the floor's filter then allows,
/// and `setsid` is refused: no process of the command can leave the group,
/// so killing the group reaches all of them, after the call and after the
/// host. A run that ends kills the group, the watchdog with it.
#[derive(Debug)]
struct Watchdog {
    child: Child,
    pipe: Option<tokio::process::ChildStdin>,
}

/// What the watchdog runs: its own pid is the group's id.
const WATCHDOG_SCRIPT: &str = "read _; kill -s KILL -- \"-$$\"";

impl Drop for SpawnerLease {
    fn drop(&mut self) {
        if let Some(mut watchdog) = self.watchdog.take() {
            // Killed before its pipe closes, so it never fires for a run
            // that ended.
            let _ = watchdog.child.start_kill();
            drop(watchdog.pipe.take());
        }
    }
}

/// Starts a watchdog leading a new process group.
fn start_watchdog() -> Result<(Watchdog, u32), String> {
    let mut child = Command::new("/bin/sh")
        .args(["-c", WATCHDOG_SCRIPT, "tack-sandbox-watchdog"])
        .env_clear()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("the watchdog of the command's processes could not start: {e}"))?;
    let group = child
        .id()
        .ok_or("the watchdog of the command's processes ended at once")?;
    let pipe = child.stdin.take();
    Ok((Watchdog { child, pipe }, group))
}

fn spawn_error(program: &Path, e: std::io::Error) -> CapabilityError {
    CapabilityError::Spawn {
        message: format!("{}: {e}", program.display()),
    }
}

/// Applies the floor to the calling thread; the first layer that fails
/// stops it, with what failed.
fn apply_floor(
    drop_capabilities: bool,
    landlock: Option<&LandlockRules>,
    seccomp: Option<&[BpfProgram]>,
) -> Result<(), String> {
    if drop_capabilities {
        capabilities::drop_all()?;
    }
    nix::sys::prctl::set_no_new_privs()
        .map_err(|e| format!("no_new_privs could not be set: {e}"))?;
    if let Some(rules) = landlock {
        match self::landlock::restrict_current_thread(rules) {
            Ok(status) if status.ruleset != RulesetStatus::NotEnforced => {}
            Ok(_) => return Err("the kernel enforced none of the Landlock rules".to_owned()),
            Err(e) => return Err(format!("Landlock could not be applied: {e}")),
        }
    }
    if let Some(programs) = seccomp {
        self::seccomp::apply(programs)?;
    }
    Ok(())
}

/// A memory file holding `bytes`, inheritable by the next spawned process
/// (bubblewrap reads it and closes it). Another thread spawning a process at
/// the same moment inherits a copy too: it holds a seccomp program, nothing
/// secret.
pub(crate) fn inheritable_memfd(bytes: &[u8]) -> Result<OwnedFd, String> {
    let fd = nix::sys::memfd::memfd_create(c"tack-seccomp", nix::sys::memfd::MFdFlags::empty())
        .map_err(|e| format!("could not create a memory file for the seccomp filter: {e}"))?;
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes)
        .and_then(|()| file.rewind())
        .map_err(|e| format!("could not write the seccomp filter: {e}"))?;
    Ok(OwnedFd::from(file))
}

/// What the spawning thread produces.
type Spawned = Result<Started, CapabilityError>;

/// A started command on its way to its caller. Dropped before the caller
/// takes it (the caller stopped waiting), it kills the command's whole
/// process group, not just the process it spawned.
struct Started {
    child: Option<Child>,
    watchdog: Option<Watchdog>,
    group: Option<u32>,
    cgroup: Option<pids::CallCgroup>,
}

impl Started {
    fn new(
        child: Child,
        watchdog: Option<Watchdog>,
        group: Option<u32>,
        cgroup: Option<pids::CallCgroup>,
    ) -> Self {
        Self {
            group: group.or(child.id()),
            child: Some(child),
            watchdog,
            cgroup,
        }
    }
}

/// A `pids` cgroup allowing `max` processes (plus `extra` the sandbox
/// itself puts there), entered by the calling thread: what it forks next is
/// born inside. `None` where no cgroup v1 hierarchy allows it (a warning
/// says why when one should have worked).
fn enter_call_cgroup(max: Option<u64>, extra: u64) -> Option<pids::CallCgroup> {
    let max = max?;
    if !pids::hierarchy().is_some_and(|h| h.threads) {
        return None;
    }
    let entered = pids::CallCgroup::create(max.saturating_add(extra))
        .and_then(|cgroup| cgroup.enter_this_thread().map(|()| cgroup));
    match entered {
        Ok(cgroup) => Some(cgroup),
        Err(reason) => {
            tracing::warn!(%reason, "the command runs without its process-count cgroup");
            None
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if self.child.is_some() {
            if let Some(group) = self.group.and_then(|id| i32::try_from(id).ok()) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(group),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }
}

/// Spawns `shell` with `shell_args` under `launch`, from a dedicated thread
/// that stays alive until the returned lease is dropped. `make` builds the
/// command from a program and its leading arguments. With `required`, a
/// command whose isolation could not be applied is not started.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn spawn(
    launch: &Launch,
    shell: &Path,
    shell_args: Vec<OsString>,
    cwd: &Path,
    protected: Vec<PathBuf>,
    make: impl FnOnce(&Path, Vec<OsString>) -> Command + Send + 'static,
    required: bool,
    supervisor: Option<PathBuf>,
) -> Result<(Child, SpawnerLease), CapabilityError> {
    if let Launch::Plain = launch {
        let mut command = make(shell, shell_args);
        let child = command.spawn().map_err(|e| spawn_error(shell, e))?;
        return Ok((
            child,
            SpawnerLease {
                _alive: None,
                watchdog: None,
                group: None,
                _cgroup: None,
            },
        ));
    }
    if let Launch::Floor {
        drop_capabilities,
        landlock,
        seccomp,
        watchdog,
        ready,
        processes,
    } = launch
    {
        let parts = FloorParts {
            drop_capabilities: *drop_capabilities,
            landlock: landlock.clone(),
            seccomp: *seccomp,
            watchdog: *watchdog,
            processes: *processes,
        };
        return spawn_on_floor(parts, ready, shell, shell_args, make, required).await;
    }
    let launch = launch.clone();
    let shell = shell.to_path_buf();
    let cwd = cwd.to_path_buf();
    let runtime = tokio::runtime::Handle::current();
    let (send, receive) = tokio::sync::oneshot::channel::<Spawned>();
    let (alive, released) = std::sync::mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("tack-sandbox-spawn".to_owned())
        .spawn(move || {
            let result = spawn_on_this_thread(
                &launch,
                &shell,
                shell_args,
                &cwd,
                &protected,
                make,
                &runtime,
                supervisor.as_deref(),
            );
            // Live as long as the command: until the lease is dropped. (A
            // caller that stopped waiting drops what was started, which
            // kills its group.)
            if send.send(result).is_ok() {
                while released.recv().is_ok() {}
            }
        })
        .map_err(|e| CapabilityError::Spawn {
            message: format!("could not start the spawning thread: {e}"),
        })?;
    leased(receive, alive).await
}

/// The floor as one command's spawning thread applies it.
#[derive(Clone, Debug)]
struct FloorParts {
    drop_capabilities: bool,
    landlock: Option<LandlockRules>,
    seccomp: Option<FilterSpec>,
    watchdog: bool,
    processes: Option<u64>,
}

/// Starts the watchdog, compiles the filter for its group and applies the
/// floor to the calling thread: what the command spawned next from this
/// thread inherits. With `required`, a layer that fails is an error;
/// otherwise a warning.
fn prepare_floor(parts: &FloorParts, required: bool) -> Result<PreparedFloor, CapabilityError> {
    // The cgroup before anything is forked: the watchdog (1) and this
    // thread (1) count in it too.
    let cgroup = enter_call_cgroup(parts.processes, 2);
    // The watchdog first: it leads the group the command joins, and is
    // started before this thread is restricted.
    let (watchdog, group) = if parts.watchdog {
        match start_watchdog() {
            Ok((watchdog, group)) => (Some(watchdog), Some(group)),
            Err(reason) if required => return Err(refused(&reason)),
            Err(reason) => {
                tracing::warn!(%reason, "running a command WITHOUT its watchdog");
                (None, None)
            }
        }
    } else {
        (None, None)
    };
    let programs = match parts.seccomp.map(|spec| {
        self::seccomp::compile(FilterSpec {
            group: group.or(spec.group),
            ..spec
        })
    }) {
        Some(Ok(programs)) => Some(programs),
        Some(Err(reason)) if required => return Err(refused(&reason)),
        Some(Err(reason)) => {
            tracing::warn!(%reason, "running a command WITHOUT its seccomp filter");
            None
        }
        None => None,
    };
    if let Err(reason) = apply_floor(
        parts.drop_capabilities,
        parts.landlock.as_ref(),
        programs.as_deref(),
    ) {
        if required {
            return Err(refused(&reason));
        }
        tracing::warn!(%reason, "running a command WITHOUT full OS isolation");
    }
    Ok(PreparedFloor {
        watchdog,
        group,
        cgroup,
    })
}

/// A thread ready to spawn a command on the floor.
struct PreparedFloor {
    watchdog: Option<Watchdog>,
    group: Option<u32>,
    cgroup: Option<pids::CallCgroup>,
}

/// Starts the command from a prepared thread of the floor (preparing one
/// now when none waits), and prepares those of later commands.
async fn spawn_on_floor(
    parts: FloorParts,
    ready: &ready::Ready,
    shell: &Path,
    shell_args: Vec<OsString>,
    make: impl FnOnce(&Path, Vec<OsString>) -> Command + Send + 'static,
    required: bool,
) -> Result<(Child, SpawnerLease), CapabilityError> {
    let runtime = tokio::runtime::Handle::current();
    let (send, receive) = tokio::sync::oneshot::channel::<Spawned>();
    let (alive, released) = std::sync::mpsc::channel::<()>();
    let mut job = Some(ready::Job {
        shell: shell.to_path_buf(),
        shell_args,
        make: Box::new(make),
        reply: send,
        alive: released,
    });
    // A prepared thread that ended (its runtime went away) hands the job
    // back; a fresh one then takes it.
    let (prepared, missing) = ready.take();
    if let Some(prepared) = prepared {
        if let Some(taken) = job.take() {
            if let Err(back) = prepared.run(taken) {
                job = Some(back);
            }
        }
    }
    if let Some(job) = job {
        ready::Prepared::start(parts.clone(), required, runtime.clone())?
            .run(job)
            .map_err(|_| CapabilityError::Spawn {
                message: "the spawning thread ended before its command".to_owned(),
            })?;
    }
    for _ in 0..missing {
        match ready::Prepared::start(parts.clone(), required, runtime.clone()) {
            Ok(next) => ready.keep(next),
            Err(e) => tracing::debug!(%e, "could not prepare a later command's thread"),
        }
    }
    leased(receive, alive).await
}

/// Starts a warm environment's supervisor on the floor (`launch` must be
/// the floor): from a thread prepared for it alone, whose Landlock ruleset
/// also lets it (and so its commands) write `grant` (the environment's
/// FIFOs, the call cgroup's `cgroup.procs`). The supervisor leads no call
/// cgroup of its own; its commands join the call's.
pub(crate) async fn spawn_floor_supervisor(
    launch: &Launch,
    shell: &Path,
    shell_args: Vec<OsString>,
    make: impl FnOnce(&Path, Vec<OsString>) -> Command + Send + 'static,
    required: bool,
    grant: Vec<PathBuf>,
) -> Result<(Child, SpawnerLease), CapabilityError> {
    let Launch::Floor {
        drop_capabilities,
        landlock: Some(landlock),
        seccomp,
        watchdog: true,
        ..
    } = launch
    else {
        return Err(CapabilityError::Spawn {
            message: "a supervisor on the floor needs Landlock and a watchdog".to_owned(),
        });
    };
    let mut landlock = landlock.clone();
    let Some(writable) = landlock.writable.as_mut() else {
        return Err(CapabilityError::Spawn {
            message: "a supervisor on the floor needs a Landlock ruleset that limits writes"
                .to_owned(),
        });
    };
    writable.extend(grant);
    let parts = FloorParts {
        drop_capabilities: *drop_capabilities,
        landlock: Some(landlock),
        seccomp: *seccomp,
        watchdog: true,
        processes: None,
    };
    let runtime = tokio::runtime::Handle::current();
    let (send, receive) = tokio::sync::oneshot::channel::<Spawned>();
    let (alive, released) = std::sync::mpsc::channel::<()>();
    let job = ready::Job {
        shell: shell.to_path_buf(),
        shell_args,
        make: Box::new(make),
        reply: send,
        alive: released,
    };
    ready::Prepared::start(parts, required, runtime)?
        .run(job)
        .map_err(|_| CapabilityError::Spawn {
            message: "the spawning thread ended before the supervisor".to_owned(),
        })?;
    leased(receive, alive).await
}

/// The command a spawning thread started, with the lease that keeps the
/// thread alive (`alive`) for as long as the command runs.
async fn leased(
    receive: tokio::sync::oneshot::Receiver<Spawned>,
    alive: std::sync::mpsc::Sender<()>,
) -> Result<(Child, SpawnerLease), CapabilityError> {
    let mut started = receive.await.map_err(|_| CapabilityError::Spawn {
        message: "the spawning thread ended without a result".to_owned(),
    })??;
    let child = started.child.take().ok_or_else(|| CapabilityError::Spawn {
        message: "the spawning thread returned no process".to_owned(),
    })?;
    Ok((
        child,
        SpawnerLease {
            _alive: Some(alive),
            watchdog: started.watchdog.take(),
            group: started.group,
            _cgroup: started.cgroup.take(),
        },
    ))
}

fn refused(reason: &str) -> CapabilityError {
    CapabilityError::CommandRefused {
        reason: format!(
            "{reason}; the command was not started (set require_os_isolation(false) to run commands without full isolation)"
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn spawn_on_this_thread(
    launch: &Launch,
    shell: &Path,
    shell_args: Vec<OsString>,
    cwd: &Path,
    protected: &[PathBuf],
    make: impl FnOnce(&Path, Vec<OsString>) -> Command,
    runtime: &tokio::runtime::Handle,
    supervisor: Option<&Path>,
) -> Spawned {
    let _runtime = runtime.enter();
    match launch {
        Launch::Plain => {
            let mut command = make(shell, shell_args);
            let child = command.spawn().map_err(|e| spawn_error(shell, e))?;
            Ok(Started::new(child, None, None, None))
        }
        Launch::Floor { .. } => Err(CapabilityError::Spawn {
            message: "the floor starts commands from a prepared thread".to_owned(),
        }),
        Launch::Bwrap {
            plan,
            seccomp,
            processes,
        } => {
            // bubblewrap, its PID 1 and this thread count too. (A warm
            // environment's supervisor is moved into a cgroup of its own
            // instead.)
            let cgroup = supervisor
                .is_none()
                .then(|| enter_call_cgroup(*processes, 3))
                .flatten();
            let fds = seccomp
                .iter()
                .map(|program| inheritable_memfd(program))
                .collect::<Result<Vec<OwnedFd>, String>>()
                .map_err(|reason| refused(&reason))?;
            let raw: Vec<i32> = fds.iter().map(AsRawFd::as_raw_fd).collect();
            let mut args = plan.args(&raw, cwd, protected, supervisor);
            args.push(shell.into());
            args.extend(shell_args);
            let mut command = make(&plan.path, args);
            let spawned = command.spawn().map_err(|e| spawn_error(&plan.path, e));
            drop(fds);
            Ok(Started::new(spawned?, None, None, cgroup))
        }
    }
}
