//! A per-call process limit through the kernel's `pids` cgroup controller.
//!
//! `RLIMIT_NPROC` counts every process of the user and the kernel does not
//! enforce it for root, so a command run as root could start processes
//! until the host starves. Where the host may create cgroups under its own
//! in the `pids` hierarchy (root on a cgroup v1 `pids` hierarchy, or a
//! cgroup v2 tree with `pids` delegated to the host's cgroup), each call
//! gets a cgroup of its own with `pids.max` set, and every process of the
//! call is born in it:
//! * on the floor (cgroup v1 only, where a single thread can change
//!   cgroup), the thread that spawns the command moves itself in first, so
//!   the watchdog and the command are forked inside;
//! * a warm bubblewrap environment's supervisor is moved in before it
//!   starts any command (the environment runs one call at a time, and
//!   nothing of a call outlives it).
//!
//! Elsewhere the limit is `RLIMIT_NPROC` alone, and the status says so.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

/// Where this process may create `pids` cgroups, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PidsHierarchy {
    /// The host's own cgroup in the `pids` hierarchy: calls' cgroups are
    /// made below it.
    base: PathBuf,
    /// cgroup v1: one thread can be moved (`tasks`).
    pub(crate) threads: bool,
}

/// The hierarchy, probed once per process: `None` where no cgroup can be
/// made.
pub(crate) fn hierarchy() -> Option<&'static PidsHierarchy> {
    static PROBED: OnceLock<Option<PidsHierarchy>> = OnceLock::new();
    PROBED.get_or_init(probe).as_ref()
}

fn probe() -> Option<PidsHierarchy> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let found = find(&cgroups, &mountinfo)?;
    remove_stale(&found.base);
    // Check that a cgroup can really be made, limited and removed here.
    let probe = CallCgroup::create_in(&found, 8).ok()?;
    drop(probe);
    Some(found)
}

/// The `pids` hierarchy from `/proc/self/cgroup` and `/proc/self/mountinfo`:
/// a v1 hierarchy with the `pids` controller first, else the v2 tree when
/// the host's cgroup delegates `pids` to its children.
fn find(cgroups: &str, mountinfo: &str) -> Option<PidsHierarchy> {
    let mut v2 = None;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if controllers.split(',').any(|c| c == "pids") {
            let (root, mount) = mount_of(mountinfo, |fstype, options| {
                fstype == "cgroup" && options.split(',').any(|o| o == "pids")
            })?;
            return Some(PidsHierarchy {
                base: below(&mount, &root, path)?,
                threads: true,
            });
        }
        if controllers.is_empty() {
            v2 = Some(path.to_owned());
        }
    }
    let path = v2?;
    let (root, mount) = mount_of(mountinfo, |fstype, _| fstype == "cgroup2")?;
    let base = below(&mount, &root, &path)?;
    let delegated = std::fs::read_to_string(base.join("cgroup.subtree_control"))
        .is_ok_and(|c| c.split_whitespace().any(|c| c == "pids"));
    delegated.then_some(PidsHierarchy {
        base,
        threads: false,
    })
}

/// The (root within the filesystem, mount point) of the first mount whose
/// filesystem type and super options match.
fn mount_of(mountinfo: &str, matches: impl Fn(&str, &str) -> bool) -> Option<(String, PathBuf)> {
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mut left = left.split(' ');
        let root = left.nth(3)?;
        let mount = left.next()?;
        let mut right = right.split(' ');
        let fstype = right.next()?;
        let options = right.nth(1)?;
        matches(fstype, options).then(|| (root.to_owned(), PathBuf::from(mount)))
    })
}

/// Where cgroup `path` is, for a hierarchy whose `root` is mounted at
/// `mount`.
fn below(mount: &Path, root: &str, path: &str) -> Option<PathBuf> {
    let inside = if root == "/" {
        path
    } else {
        path.strip_prefix(root)?
    };
    Some(mount.join(inside.trim_start_matches('/')))
}

/// Removes the (empty) cgroups of hosts that are gone: a host killed by
/// `SIGKILL` cannot remove its own.
fn remove_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        if crate::stale::left_by_gone_host(&entry.file_name()) {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Cgroups of ended calls that still held a process (or the thread that
/// spawned it) when they were dropped: removed by a later call.
static LEFT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Tries again to remove the cgroups left earlier.
fn remove_left() {
    let mut left = LEFT.lock().unwrap_or_else(PoisonError::into_inner);
    left.retain(|dir| std::fs::remove_dir(dir).is_err() && dir.exists());
}

/// One call's cgroup; removed when dropped (or by a later call, once the
/// last process in it is gone).
#[derive(Debug)]
pub(crate) struct CallCgroup {
    dir: PathBuf,
}

impl CallCgroup {
    /// A new cgroup allowing at most `max` processes, in the probed
    /// hierarchy.
    pub(crate) fn create(max: u64) -> Result<Self, String> {
        let hierarchy = hierarchy().ok_or("no pids cgroup hierarchy here")?;
        Self::create_in(hierarchy, max)
    }

    fn create_in(hierarchy: &PidsHierarchy, max: u64) -> Result<Self, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        remove_left();
        let dir = hierarchy
            .base
            .join(crate::stale::name(NEXT.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir(&dir)
            .map_err(|e| format!("could not create the cgroup {}: {e}", dir.display()))?;
        let cgroup = Self { dir };
        cgroup.write("pids.max", max)?;
        Ok(cgroup)
    }

    fn write(&self, file: &str, value: impl std::fmt::Display) -> Result<(), String> {
        let path = self.dir.join(file);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| f.write_all(value.to_string().as_bytes()))
            .map_err(|e| format!("could not write {}: {e}", path.display()))
    }

    /// Moves the calling thread in (cgroup v1 only): what it forks from
    /// now on is born inside.
    pub(crate) fn enter_this_thread(&self) -> Result<(), String> {
        self.write("tasks", nix::unistd::gettid())
    }

    /// Moves process `pid` in (with every thread it has).
    pub(crate) fn add_process(&self, pid: i32) -> Result<(), String> {
        self.write("cgroup.procs", pid)
    }

    /// The file a process writes `0` to, to move itself in.
    pub(crate) fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// Kills every process in the cgroup and waits until the cgroup holds
    /// none, not even a zombie (`pids.current` is 0); false when that did
    /// not happen within [`CLEAR_LIMIT`].
    ///
    /// Race-free without freezing: a process can only be born in the cgroup
    /// of a process in it, and none can leave it (the processes in it cannot
    /// write any other cgroup's files), so once the count is 0 nothing can
    /// appear again. Processes forked while a round kills show up in the
    /// next round.
    pub(crate) async fn clear(&self) -> bool {
        let started = std::time::Instant::now();
        loop {
            let Ok(current) = std::fs::read_to_string(self.dir.join("pids.current")) else {
                return false;
            };
            if current.trim() == "0" {
                return true;
            }
            if started.elapsed() > CLEAR_LIMIT {
                return false;
            }
            let procs = std::fs::read_to_string(self.procs_file()).unwrap_or_default();
            for pid in procs
                .split_whitespace()
                .filter_map(|p| p.parse::<i32>().ok())
            {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            if procs.trim().is_empty() {
                // Only zombies, waiting for their parent (or init) to reap
                // them.
                tokio::time::sleep(std::time::Duration::from_micros(200)).await;
            }
        }
    }
}

/// How long [`CallCgroup::clear`] waits for a cgroup to be empty.
const CLEAR_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

impl Drop for CallCgroup {
    fn drop(&mut self) {
        if std::fs::remove_dir(&self.dir).is_err() && self.dir.exists() {
            LEFT.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(self.dir.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
35 24 0:30 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,pids
36 24 0:31 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory
37 24 0:32 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw
";

    #[test]
    fn a_v1_pids_hierarchy_is_found_below_its_mount() {
        let found = find("8:pids:/user.slice\n4:memory:/x\n0::/\n", MOUNTINFO).unwrap();
        assert_eq!(found.base, PathBuf::from("/sys/fs/cgroup/pids/user.slice"));
        assert!(found.threads);
        let found = find("8:pids:/\n", MOUNTINFO).unwrap();
        assert_eq!(found.base, PathBuf::from("/sys/fs/cgroup/pids/"));
    }

    #[test]
    fn a_mount_of_part_of_the_hierarchy_is_accounted_for() {
        let mountinfo = "35 24 0:30 /docker/abc /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n";
        let found = find("8:pids:/docker/abc/sub\n", mountinfo).unwrap();
        assert_eq!(found.base, PathBuf::from("/sys/fs/cgroup/pids/sub"));
        assert_eq!(find("8:pids:/elsewhere\n", mountinfo), None);
    }

    #[test]
    fn without_a_pids_controller_there_is_nothing() {
        assert_eq!(find("4:memory:/x\n", MOUNTINFO), None);
        assert_eq!(find("", MOUNTINFO), None);
    }
}
