//! Warm environments: bubblewrap's namespaces built once and reused,
//! command after command.
//!
//! Building the namespaces is most of what a confined command costs under
//! bubblewrap. A warm environment is one bubblewrap sandbox whose first
//! process (its PID 1) is a small supervisor in the commands' shell. It
//! reads one request at a time from the host (a working directory and a
//! command), forks the command with the call's resource limits (under
//! bash, without starting bash again; see [`RUN_BASH`]), waits for it,
//! kills every other
//! process of the PID namespace (`kill -9 -1`, which spares only PID 1),
//! waits until none of them runs, and answers with the exit status.
//!
//! Reuse keeps each call isolated from the others:
//! * one command at a time per environment: idle environments wait in a
//!   pool, and calls that run at the same time get one each;
//! * nothing of a command outlives it: the supervisor kills the
//!   namespace's other processes, and the host then checks from outside
//!   (`/proc/<supervisor>/task/<supervisor>/children`) that the supervisor
//!   has no child left, not even a zombie;
//! * an environment a command left anything in (a file in its private
//!   `/tmp` or `/dev/shm`, a System V IPC object, a process) is thrown away,
//!   never reused;
//! * its mounts are those a fresh bubblewrap would get: the environment is
//!   keyed by bubblewrap's arguments (which protected and hidden paths
//!   exist, which sockets are covered) and the command's environment
//!   variables, and a command whose key differs gets a fresh one;
//! * a timeout, a cancellation or anything unexpected in the supervisor's
//!   answers ends the environment: killing its PID 1 makes the kernel kill
//!   every process of the namespace.
//!
//! The supervisor's answers carry a nonce the command never sees, and the
//! host does not take the supervisor's word that the namespace is clean: it
//! looks itself.

use std::ffi::OsString;
use std::hash::{BuildHasher, RandomState};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::isolation::pids::{CallCgroup, hierarchy};
use crate::isolation::{BwrapPlan, SpawnerLease};

use super::PrivateTempDir;

/// How long a new environment's supervisor may take to say it is ready.
const READY_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// How many idle environments a shell keeps.
const IDLE_LIMIT: usize = 4;

/// How many rounds the supervisor waits for killed processes to be gone
/// before it answers anyway (the host then throws the environment away).
const SETTLE_ROUNDS: u32 = 10_000;

/// The supervisor: `$1` is the environment's directory (the `out` and
/// `err` FIFOs, the `in` file), `$2` on the floor the `cgroup.procs` file of
/// the call's cgroup. It runs in the shell commands run in. `@RUN@` runs one
/// command (see [`supervisor_script`]) and sets `r` to its status;
/// `@CLEANUP@` makes sure nothing of it runs on; `@TRAPS@` sets the
/// supervisor's signal traps.
///
/// It first answers `ready`. A request is: the nonce, `f` (run the command
/// in a forked subshell) or `e` (in a shell started anew), the working
/// directory, each line of the command prefixed with `>`, then `+` (stdin
/// from `in`) or `-` (none).
/// The answers: `started <nonce>` as the command is forked, then
/// `exit <nonce> <status> <ipc> <busy>`, where `ipc` is 1 when System V IPC
/// objects are left and `busy` non-empty when processes still ran after
/// the settling rounds.
const SUPERVISOR: &str = r#"d=$1 j=$2 p=
@TRAPS@
echo ready
while IFS= read -r n && IFS= read -r m && IFS= read -r w; do
  c= s=
  while IFS= read -r l; do
    case $l in
      '>'*) c="$c$s${l#?}"; s='
';;
      *) break;;
    esac
  done
  case $l in '+') i=$d/in;; *) i=/dev/null;; esac
  exec 3>"$d/out" 4>"$d/err"
@RUN@
@CLEANUP@
  echo "exit $n $r $v $b"
done
"#;

/// Inside a PID namespace, after each command: kills every process of the
/// namespace but the supervisor (`kill -9 -1` spares PID 1), waits until
/// none runs (`b` is non-empty when some still ran after the settling
/// rounds), and sets `v` to 1 when System V IPC objects are left.
const CLEANUP_NAMESPACE: &str = r#"  kill -9 -1 2>/dev/null
  k=0
  while :; do
    b=
    for f in /proc/[0-9]*; do
      [ "$f" = /proc/1 ] && continue
      IFS= read -r t 2>/dev/null <"$f/stat" || continue
      t=${t##*) }
      case $t in Z*|X*) ;; *) b=1; break;; esac
    done
    [ -z "$b" ] && break
    k=$((k+1))
    [ $k -ge @ROUNDS@ ] && break
    kill -9 -1 2>/dev/null
  done
  v=0
  for f in /proc/sysvipc/shm /proc/sysvipc/sem /proc/sysvipc/msg; do
    { IFS= read -r t && IFS= read -r t && v=1; } 2>/dev/null <"$f"
  done"#;

/// On the floor the host empties the command's cgroup itself (see
/// [`WarmEnv::end`]); there is no IPC namespace of the call's own to check.
const CLEANUP_FLOOR: &str = "  v=0 b=";

/// On the floor, the first thing a command's subshell does: move itself
/// into the call's cgroup (`$j`, its `cgroup.procs`), where everything it
/// starts is born and from where nothing can leave. A subshell that cannot
/// does not run the command.
const JOIN_FLOOR: &str = r#"    echo 0 >"$j" || exit 126"#;

/// Under bash, a command runs in a subshell the supervisor forks, not in a
/// bash started anew (`f` requests): starting bash is most of what a
/// command costs, and forking a bash that already started costs a fraction
/// of it. The subshell is made to look like a bash started for the
/// command: no variable of the supervisor's, `$0` the shell, `SECONDS`
/// from zero, `SIGINT` and `SIGQUIT` not ignored (a shell without job
/// control starts background jobs with both ignored), and the call's limits
/// set by `@IN_PLACE@`, the in-place wrapper. What a subshell still shows
/// of its parent — `$$` and `$PPID` name the supervisor's, and `kill $$`
/// reaches the command only through the supervisor, a little later — a
/// command that could look at it runs in a bash started anew (`e`
/// requests, `@STARTED@` ends with `exec <shell> -c "$1"`; see
/// [`runs_forked`]). A signal sent to the supervisor while a command runs
/// is passed on to the command's shell.
const RUN_BASH: &str = r#"  case $m in
    f) (
@JOIN@
    trap - INT QUIT
    cd -- "$w" || exit 126
    set -- "$c"
    unset d j n m w c s l i r k b f t v g p
@CLEAN@
@IN_PLACE@
  ) <"$i" >&3 2>&4 3>&- 4>&- & ;;
    *) (
@JOIN@
    trap - INT QUIT
    cd -- "$w" || exit 126
    unset OLDPWD
    set -- "$c"
@STARTED@
  ) <"$i" >&3 2>&4 3>&- 4>&- & ;;
  esac
  p=$!
  exec 3>&- 4>&-
  echo "started $n"
  while :; do g=; wait "$p"; r=$?; [ -z "$g" ] && break; done
  p="#;

/// Whether `command` can run in a forked subshell (see [`RUN_BASH`]):
/// nothing in its text could tell that subshell from a shell started for
/// it. Text that names the shell's own process (`$$`, `${$}`, `PPID`,
/// `BASHPID`, `SHLVL`, `BASH_SUBSHELL`), signals processes (`kill`, which
/// may mean the shell's group) or runs other text in the same shell
/// (`eval`, `source`, `.`, `trap`) runs in a shell started anew.
pub(crate) fn runs_forked(command: &str) -> bool {
    const TELLING: [&str; 10] = [
        "$$",
        "${$",
        "PPID",
        "BASHPID",
        "SHLVL",
        "BASH_SUBSHELL",
        "kill",
        "eval",
        "source",
        "trap",
    ];
    if TELLING.iter().any(|word| command.contains(word)) {
        return false;
    }
    // The `.` command: a dot standing alone as a word where a command
    // starts.
    let bytes = command.as_bytes();
    !bytes.iter().enumerate().any(|(at, &b)| {
        b == b'.'
            && (at == 0 || b" \t\n;&|(){}`!".contains(&bytes[at - 1]))
            && bytes.get(at + 1).is_none_or(|next| b" \t\n".contains(next))
            && starts_a_command(&command[..at])
    })
}

/// Whether a word right after `before` is in command position: at the
/// start, after an operator, or after a keyword that a command follows.
fn starts_a_command(before: &str) -> bool {
    let before = before.trim_end_matches([' ', '\t']);
    let Some(last) = before.chars().last() else {
        return true;
    };
    if "\n;&|(){}`!".contains(last) {
        return true;
    }
    let word = before
        .rsplit(|c: char| c.is_whitespace() || ";&|(){}`".contains(c))
        .next()
        .unwrap_or_default();
    ["then", "do", "else", "elif", "time", "if", "while", "until"].contains(&word)
}

/// The signals a command can send its own shell through `$$`.
const PASSED_ON: [&str; 8] = ["HUP", "INT", "QUIT", "ABRT", "USR1", "USR2", "ALRM", "TERM"];

/// Under another shell, the subshell runs in the foreground and starts the
/// shell anew (`@LIMITS@` ends with `exec <shell> -c "$1"`).
const RUN_STARTED: &str = r#"  echo "started $n"
  (
@JOIN@
    cd -- "$w" || exit 126
    set -- "$c"
@LIMITS@
  ) <"$i" >&3 2>&4 3>&- 4>&-
  r=$?
  exec 3>&- 4>&-"#;

/// The supervisor's script for commands run in `shell`, given the limits
/// wrapper that runs the command in place (`in_place`) and the one that
/// starts the shell anew (`started`); see
/// [`ResourceLimits::wrapper_script`](super::ResourceLimits). `floor`: the
/// environment is a supervisor on the floor (commands join the call's
/// cgroup, the host cleans up), not a PID namespace of its own.
pub(crate) fn supervisor_script(
    shell: &Path,
    in_place: &str,
    started: &str,
    floor: bool,
) -> String {
    let (run, traps) = if shell.file_name().is_some_and(|n| n == "bash") {
        let clean = format!(
            "    BASH_ARGV0={}; SECONDS=0; unset OLDPWD",
            shell_quoted(&shell.to_string_lossy())
        );
        let traps = PASSED_ON
            .iter()
            .map(|signal| {
                format!("trap 'g=1; [ -z \"$p\" ] || kill -s {signal} \"$p\" 2>/dev/null' {signal}")
            })
            .collect::<Vec<_>>()
            .join("\n");
        (
            RUN_BASH
                .replace("@CLEAN@", &clean)
                .replace("@IN_PLACE@", in_place.trim_end())
                .replace("@STARTED@", started.trim_end()),
            traps,
        )
    } else {
        (
            RUN_STARTED.replace("@LIMITS@", started.trim_end()),
            String::new(),
        )
    };
    let (cleanup, join) = if floor {
        (CLEANUP_FLOOR, JOIN_FLOOR)
    } else {
        (CLEANUP_NAMESPACE, "    :")
    };
    SUPERVISOR
        .replace("@TRAPS@", &traps)
        .replace("@RUN@", &run.replace("@JOIN@", join))
        .replace(
            "@CLEANUP@",
            &cleanup.replace("@ROUNDS@", &SETTLE_ROUNDS.to_string()),
        )
}

/// `text` in single quotes, for a shell.
fn shell_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// What makes two environments interchangeable: bubblewrap's arguments
/// (mounts, namespaces), or on the floor what the Landlock ruleset lets
/// commands read, and the command's environment variables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EnvKey {
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, OsString)>,
}

impl EnvKey {
    /// The key of commands started now under `plan` with `protected`
    /// mounted read-only and `env` set.
    pub(crate) fn now(
        plan: &BwrapPlan,
        protected: &[PathBuf],
        env: Vec<(OsString, OsString)>,
    ) -> Self {
        Self {
            args: plan.args(&[], Path::new("/"), protected, None),
            env,
        }
    }

    /// The key of commands started now on the floor, whose ruleset makes
    /// `readable` readable, with `env` set.
    pub(crate) fn on_floor(readable: Vec<PathBuf>, env: Vec<(OsString, OsString)>) -> Self {
        Self {
            args: readable.into_iter().map(PathBuf::into_os_string).collect(),
            env,
        }
    }
}

/// One environment with its supervisor: a bubblewrap sandbox, or a
/// supervisor on the floor.
pub(crate) struct WarmEnv {
    key: EnvKey,
    /// What the host spawned: bubblewrap (outside the namespaces), or the
    /// supervisor itself on the floor.
    child: Child,
    /// The supervisor, as the host sees it.
    supervisor: Pid,
    requests: ChildStdin,
    answers: Lines<BufReader<ChildStdout>>,
    dir: PrivateTempDir,
    /// Under bubblewrap, what the private `/tmp` and `/dev/shm` held when
    /// the environment started (the mount points of the roots bound inside
    /// them); `None` on the floor, which has no private ones.
    memory: Option<Vec<PathBuf>>,
    /// Under bubblewrap, the `pids` cgroup the supervisor and every command
    /// it starts count in (one call at a time: the limit is per call). On
    /// the floor, the call's cgroup: each command moves into it first, the
    /// supervisor stays outside, and the host empties it after each command.
    cgroup: Option<CallCgroup>,
    /// On the floor, the process group of the environment (led by its
    /// watchdog): the supervisor and every command's process are in it, and
    /// none can leave it.
    group: Option<Pid>,
    /// Keeps the spawning thread (bubblewrap's `--die-with-parent`, the
    /// floor's watchdog) alive.
    _lease: SpawnerLease,
}

impl std::fmt::Debug for WarmEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarmEnv")
            .field("supervisor", &self.supervisor)
            .field("dir", &self.dir.path())
            .finish_non_exhaustive()
    }
}

impl Drop for WarmEnv {
    fn drop(&mut self) {
        self.kill();
    }
}

/// How a command in a warm environment ended.
pub(crate) enum WarmEnd {
    /// It exited (the shell's status: 128 + N for a signal N), and whether
    /// the environment can run another command.
    Exited { status: i32, reusable: bool },
    /// The supervisor's answer was missing or wrong; the environment is
    /// gone, and the command with it.
    Broken(String),
}

/// The nonce of one request: unpredictable to the command.
fn nonce() -> u64 {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    RandomState::new().hash_one(COUNT.fetch_add(1, Ordering::Relaxed))
}

impl WarmEnv {
    /// An environment from a spawned bubblewrap running the supervisor,
    /// once the supervisor said it is ready; with `processes`, the
    /// supervisor is moved into a `pids` cgroup allowing that many
    /// processes besides itself, where one can be made.
    pub(crate) async fn new(
        key: EnvKey,
        mut bwrap: Child,
        lease: SpawnerLease,
        dir: PrivateTempDir,
        processes: Option<u64>,
    ) -> Result<Self, String> {
        let (requests, answers) = ready(&mut bwrap).await?;
        let Some(bwrap_pid) = bwrap.id() else {
            return Err("bubblewrap ended at once".to_owned());
        };
        let supervisor = supervisor_of(bwrap_pid)?;
        let memory = memory_filesystems(supervisor)
            .ok_or("the namespace's /tmp and /dev/shm are not visible from outside")?;
        let cgroup = match processes {
            Some(max) if hierarchy().is_some() => {
                match CallCgroup::create(max.saturating_add(1))
                    .and_then(|c| c.add_process(supervisor.as_raw()).map(|()| c))
                {
                    Ok(cgroup) => Some(cgroup),
                    Err(reason) => {
                        tracing::warn!(%reason, "commands run without their process-count cgroup");
                        None
                    }
                }
            }
            _ => None,
        };
        Ok(Self {
            cgroup,
            key,
            child: bwrap,
            supervisor,
            requests,
            answers,
            dir,
            memory: Some(memory),
            group: None,
            _lease: lease,
        })
    }

    /// An environment on the floor from a spawned supervisor, once it said
    /// it is ready: its commands join `call` (the call's cgroup), and the
    /// lease's watchdog leads the group every process of it is in.
    pub(crate) async fn on_floor(
        key: EnvKey,
        mut supervisor: Child,
        lease: SpawnerLease,
        dir: PrivateTempDir,
        call: CallCgroup,
    ) -> Result<Self, String> {
        let group = lease
            .group()
            .and_then(|g| i32::try_from(g).ok())
            .map(Pid::from_raw)
            .ok_or("the supervisor has no watchdog leading its group")?;
        let (requests, answers) = ready(&mut supervisor).await?;
        let pid = supervisor
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .ok_or("the supervisor ended at once")?;
        Ok(Self {
            key,
            child: supervisor,
            supervisor: Pid::from_raw(pid),
            requests,
            answers,
            dir,
            memory: None,
            cgroup: Some(call),
            group: Some(group),
            _lease: lease,
        })
    }

    /// The directory of the FIFOs.
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Kills the supervisor (under bubblewrap the kernel then kills every
    /// process of the namespace) and bubblewrap; on the floor, the
    /// environment's whole process group.
    pub(crate) fn kill(&mut self) {
        if let Some(group) = self.group {
            let _ = killpg(group, Signal::SIGKILL);
        }
        let _ = kill(self.supervisor, Signal::SIGKILL);
        let _ = self.child.start_kill();
    }

    /// Waits for bubblewrap (the supervisor on the floor) to be gone after
    /// [`kill`](Self::kill); its status (killed by `SIGKILL`).
    pub(crate) async fn reap(&mut self) -> std::io::Result<std::process::ExitStatus> {
        self.kill();
        let status = self.child.wait().await;
        if self.group.is_some() {
            if let Some(cgroup) = &self.cgroup {
                cgroup.clear().await;
            }
        }
        status
    }

    /// Sends a request and waits for the supervisor to have forked it.
    pub(crate) async fn start(
        &mut self,
        cwd: &Path,
        command: &str,
        stdin: bool,
    ) -> Result<u64, String> {
        let nonce = nonce();
        let mode = if runs_forked(command) { 'f' } else { 'e' };
        let mut request = format!("{nonce}\n{mode}\n");
        request.push_str(&cwd.to_string_lossy());
        request.push('\n');
        for line in command.split('\n') {
            request.push('>');
            request.push_str(line);
            request.push('\n');
        }
        request.push_str(if stdin { "+\n" } else { "-\n" });
        self.requests
            .write_all(request.as_bytes())
            .await
            .map_err(|e| format!("the supervisor does not take requests: {e}"))?;
        match self.answers.next_line().await {
            Ok(Some(line)) if line == format!("started {nonce}") => Ok(nonce),
            Ok(Some(line)) => Err(format!("unexpected answer from the supervisor: {line:?}")),
            Ok(None) => Err("the supervisor ended".to_owned()),
            Err(e) => Err(format!("no answer from the supervisor: {e}")),
        }
    }

    /// Waits for the end of the command started with `nonce`.
    pub(crate) async fn end(&mut self, nonce: u64) -> WarmEnd {
        let line = match self.answers.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => return WarmEnd::Broken("the supervisor ended".to_owned()),
            Err(e) => return WarmEnd::Broken(format!("no answer from the supervisor: {e}")),
        };
        let mut fields = line.split(' ');
        let parsed = (|| {
            (fields.next()? == "exit").then_some(())?;
            (fields.next()?.parse::<u64>().ok()? == nonce).then_some(())?;
            let status = fields.next()?.parse::<i32>().ok()?;
            let ipc_left = fields.next()? != "0";
            let busy = fields.next().is_some_and(|b| !b.is_empty());
            Some((status, ipc_left, busy))
        })();
        match parsed {
            Some((status, ipc_left, busy)) => {
                // On the floor the host empties the call's cgroup: nothing
                // the command started runs on.
                let emptied = match (&self.group, &self.cgroup) {
                    (Some(_), Some(call)) => call.clear().await,
                    _ => true,
                };
                WarmEnd::Exited {
                    status,
                    reusable: emptied && !ipc_left && !busy && self.is_clean(),
                }
            }
            None => WarmEnd::Broken(format!("unexpected answer from the supervisor: {line:?}")),
        }
    }

    /// Whether, seen from outside, the namespace holds nothing of the last
    /// command: the supervisor has no child (not even a zombie), and the
    /// private `/tmp` and `/dev/shm` hold what they held at the start.
    fn is_clean(&self) -> bool {
        let pid = self.supervisor.as_raw();
        let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"));
        if !children.is_ok_and(|c| c.trim().is_empty()) {
            return false;
        }
        match &self.memory {
            Some(memory) => memory_filesystems(self.supervisor).is_some_and(|now| &now == memory),
            None => true,
        }
    }

    /// Whether the environment serves commands keyed `key`.
    pub(crate) fn serves(&self, key: &EnvKey) -> bool {
        &self.key == key
    }
}

/// The pipes to and from a new environment's supervisor, once it said it
/// is ready (the process is killed otherwise).
async fn ready(child: &mut Child) -> Result<(ChildStdin, Lines<BufReader<ChildStdout>>), String> {
    let requests = child.stdin.take().ok_or("no pipe to the supervisor")?;
    let answers = child.stdout.take().ok_or("no pipe from the supervisor")?;
    let mut answers = BufReader::new(answers).lines();
    let ready = tokio::time::timeout(READY_LIMIT, answers.next_line()).await;
    if !matches!(&ready, Ok(Ok(Some(line))) if line == "ready") {
        let _ = child.start_kill();
        return Err(format!("the supervisor did not start: {ready:?}"));
    }
    Ok((requests, answers))
}

/// Every entry of the namespace's memory-backed `/tmp` and `/dev/shm`, seen
/// through the supervisor's root, not descending into what is mounted on
/// them (the roots and directories bound in); `None` when unreadable.
fn memory_filesystems(supervisor: Pid) -> Option<Vec<PathBuf>> {
    use std::os::unix::fs::MetadataExt;
    let root = PathBuf::from(format!("/proc/{}/root", supervisor.as_raw()));
    let mut found = Vec::new();
    for top in ["tmp", "dev/shm"] {
        let start = root.join(top);
        let device = std::fs::symlink_metadata(&start).ok()?.dev();
        let mut pending = vec![start];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).ok()? {
                let entry = entry.ok()?;
                let meta = entry.metadata().ok()?;
                let path = entry.path();
                if meta.is_dir() && meta.dev() == device {
                    pending.push(path.clone());
                }
                found.push(path);
            }
        }
    }
    found.sort();
    Some(found)
}

/// The supervisor's pid: bubblewrap's only child.
fn supervisor_of(bwrap: u32) -> Result<Pid, String> {
    let children = std::fs::read_to_string(format!("/proc/{bwrap}/task/{bwrap}/children"))
        .map_err(|e| format!("the supervisor's process is not visible: {e}"))?;
    let mut pids = children.split_whitespace();
    match (pids.next().map(str::parse::<i32>), pids.next()) {
        (Some(Ok(pid)), None) => Ok(Pid::from_raw(pid)),
        _ => Err(format!(
            "bubblewrap has not exactly one child: {children:?}"
        )),
    }
}

/// Idle environments of one shell.
#[derive(Debug, Default)]
pub(crate) struct WarmPool {
    idle: Mutex<Vec<WarmEnv>>,
    /// Set once starting an environment failed: commands then start the
    /// classic way (a fresh bubblewrap each).
    disabled: AtomicBool,
}

impl WarmPool {
    /// Whether warm environments are tried at all.
    pub(crate) fn enabled(&self) -> bool {
        !self.disabled.load(Ordering::Relaxed)
    }

    /// Stops trying warm environments (one could not start here).
    pub(crate) fn disable(&self, reason: &str) {
        if !self.disabled.swap(true, Ordering::Relaxed) {
            tracing::info!(%reason, "warm sandbox environments are off; each command starts its own bubblewrap");
        }
    }

    /// An idle environment serving `key`; those keyed otherwise are ended.
    pub(crate) fn take(&self, key: &EnvKey) -> Option<WarmEnv> {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        idle.retain(|env| env.serves(key));
        idle.pop()
    }

    /// Keeps an environment for the next command.
    pub(crate) fn put(&self, env: WarmEnv) {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < IDLE_LIMIT {
            idle.push(env);
        }
    }
}

/// Makes the FIFOs of a new environment's directory.
pub(crate) fn make_fifos(dir: &Path) -> Result<(), String> {
    for name in ["out", "err"] {
        nix::unistd::mkfifo(
            &dir.join(name),
            nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
        )
        .map_err(|e| format!("could not make the FIFO {name}: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_holds_the_limits_inside_the_commands_subshell() {
        for (shell, floor) in [
            ("/bin/bash", false),
            ("/bin/sh", false),
            ("/bin/bash", true),
            ("/bin/sh", true),
        ] {
            let script = supervisor_script(
                Path::new(shell),
                "ulimit -t 5 2>/dev/null\neval \"$1\"\n",
                "ulimit -t 6 2>/dev/null\nexec /bin/sh -c \"$1\"\n",
                floor,
            );
            // On the floor the subshell joins the call's cgroup before it
            // does anything else; the namespace's kill loop is not there.
            assert_eq!(script.contains(JOIN_FLOOR), floor, "{script}");
            assert_eq!(script.contains("kill -9 -1"), !floor, "{script}");
            if floor {
                let subshell = script.find("(\n").unwrap();
                assert!(
                    script[subshell..]
                        .trim_start_matches("(\n")
                        .starts_with(JOIN_FLOOR)
                );
            }
            let limit = if shell == "/bin/bash" {
                "ulimit -t 5"
            } else {
                "ulimit -t 6"
            };
            let subshell = script.find("set -- \"$c\"").unwrap();
            let limits = script.find(limit).unwrap();
            let close = script.find(") <\"$i\"").unwrap();
            assert!(subshell < limits && limits < close, "{script}");
            assert!(!script.contains('@'), "{script}");
        }
    }

    #[test]
    fn commands_that_could_tell_a_subshell_run_in_a_shell_started_anew() {
        for forked in [
            "true",
            "ls -la ./src && cat ../x.txt",
            "echo a.b; cd .. && make",
            "find . -name '*.rs'",
            "git log --oneline -3",
        ] {
            assert!(runs_forked(forked), "{forked}");
        }
        for started in [
            "echo $$",
            "kill -TERM ${$}",
            "echo $PPID",
            "pkill sleep",
            "eval \"$x\"",
            "source env.sh",
            ". ./env.sh",
            "x=1; . env.sh",
            "if true; then . env.sh; fi",
            "trap 'echo bye' EXIT",
            "echo $SHLVL",
        ] {
            assert!(!runs_forked(started), "{started}");
        }
    }
}
