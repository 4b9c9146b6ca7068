//! A workspace next to an "outside" directory holding a secret.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tack_core::capability::{CommandOutput, CommandRequest};
use tack_sandbox::{CommandAdmission, Namespaces, Sandbox, SandboxError, SandboxPolicy};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

pub const SECRET: &str = "top secret, outside the workspace\n";

pub struct Fixture {
    pub ws: TempDir,
    pub outside: TempDir,
}

impl Fixture {
    pub fn new() -> Self {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), SECRET).unwrap();
        Self { ws, outside }
    }

    /// The canonical workspace path.
    pub fn ws(&self) -> PathBuf {
        self.ws.path().canonicalize().unwrap()
    }

    /// The canonical outside path.
    pub fn outside(&self) -> PathBuf {
        self.outside.path().canonicalize().unwrap()
    }

    pub fn workspace_write(&self) -> Sandbox {
        sandbox(SandboxPolicy::workspace_write(self.ws.path())).unwrap()
    }

    pub fn link(&self, name: &str, target: impl AsRef<Path>) {
        std::os::unix::fs::symlink(target, self.ws.path().join(name)).unwrap();
    }

    /// Every path under the outside directory with its contents (dirs: None).
    pub fn outside_snapshot(&self) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        snapshot(self.outside.path())
    }
}

pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut all = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                pending.push(path.clone());
                all.insert(path, None);
            } else if kind.is_file() {
                all.insert(path.clone(), Some(std::fs::read(&path).unwrap()));
            } else {
                all.insert(path, None);
            }
        }
    }
    all
}

/// Runs `command` through the sandbox's shell (at most 60 seconds).
pub async fn run_command(sb: &Sandbox, command: &str) -> CommandOutput {
    sb.shell()
        .run(
            CommandRequest::new(command).with_timeout(Duration::from_secs(60)),
            CancellationToken::new(),
        )
        .await
        .unwrap()
}

/// The git binary, where one is installed.
pub fn git_binary() -> Option<PathBuf> {
    ["/usr/bin/git", "/usr/local/bin/git", "/bin/git"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// Whether this sandbox runs commands here; prints why not when it does not.
pub fn runs_commands(sandbox: &Sandbox, test: &str) -> bool {
    let status = sandbox.status();
    match status.policy.map(|p| p.commands) {
        Some(CommandAdmission::Refused { reason }) => {
            println!("{test}: skipped, this kernel cannot confine commands: {reason}");
            false
        }
        _ => true,
    }
}

/// Whether this run tests the kernel-only floor: `TACK_SANDBOX_FLOOR_ONLY=1`
/// turns the namespace layer (bubblewrap) off for every sandbox the tests
/// build, so CI runs the whole table once with it and once without.
pub fn floor_only() -> bool {
    std::env::var_os("TACK_SANDBOX_FLOOR_ONLY").is_some_and(|v| v == "1")
}

/// `policy` with the namespace layer this run tests.
pub fn layered(policy: SandboxPolicy) -> SandboxPolicy {
    if floor_only() {
        policy.with_namespaces(Namespaces::Disabled)
    } else {
        policy
    }
}

/// Builds a sandbox with the namespace layer this run tests.
pub fn sandbox(policy: SandboxPolicy) -> Result<Sandbox, SandboxError> {
    Sandbox::new(layered(policy))
}

/// Whether this sandbox's commands run inside bubblewrap.
pub fn in_bwrap(sandbox: &Sandbox) -> bool {
    sandbox
        .status()
        .policy
        .is_some_and(|p| p.namespaces == tack_sandbox::Enforcement::Enforced)
}

/// Whether this sandbox's commands start in warm environments (inside
/// bubblewrap, or on the floor with a cgroup for the calls).
pub fn warm(sandbox: &Sandbox) -> bool {
    sandbox.status().policy.is_some_and(|p| p.warm)
}

static NEXT_MARKER: AtomicU64 = AtomicU64::new(1);

/// A `sleep` duration no other process uses: `sleep <marker>` sleeps
/// about 1000 s and can be found in the host's process table by its
/// command line, whatever PID namespace it runs in.
pub fn marker() -> String {
    format!(
        "1000.{}{:04}",
        std::process::id(),
        NEXT_MARKER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Live (not zombie) host processes whose command line holds `marker`.
pub fn live_with_marker(marker: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if !String::from_utf8_lossy(&cmdline).contains(marker) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .unwrap_or("Z");
        if state != "Z" && state != "X" {
            found.push(pid);
        }
    }
    found
}

/// How many `sleep <marker>` processes run (not the shells or launchers
/// whose command lines also hold the marker).
fn sleeping(marker: &str) -> usize {
    let prefix = format!("sleep\0{marker}");
    live_with_marker(marker)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.starts_with(prefix.as_bytes()))
        })
        .count()
}

/// Waits until `count` `sleep <marker>` processes run (at most 10 s).
pub async fn wait_for_marker(marker: &str, count: usize) {
    let start = Instant::now();
    while sleeping(marker) < count {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the command's {count} processes never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until no process with `marker` is left (at most 5 s) and returns
/// the survivors.
pub async fn survivors(marker: &str) -> Vec<i32> {
    let start = Instant::now();
    loop {
        let left = live_with_marker(marker);
        if left.is_empty() || start.elapsed() > Duration::from_secs(5) {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A scratch directory outside `/tmp`, so that the namespace layer's
/// private `/tmp` does not hide it by itself (an unprivileged run gets a
/// `TMPDIR` outside `/tmp`).
pub fn scratch_outside_tmp() -> TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .or_else(|_| tempfile::tempdir())
        .unwrap()
}

/// The system's Python 3, when installed (not a shim under a home
/// directory another user cannot enter).
pub fn python() -> Option<&'static str> {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
}
