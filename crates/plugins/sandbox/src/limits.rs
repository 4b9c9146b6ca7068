//! Resource limits for commands, applied by the shell itself (`ulimit`)
//! before it runs the command, so no code runs in the forked child before
//! `exec` (the workspace forbids `unsafe`, which `pre_exec` needs).

use std::fmt::Write as _;

use nix::sys::resource::{Resource, getrlimit};

/// Per-command resource limits (`RLIMIT_*`). `None` leaves the host's limit.
///
/// Limits are set as both soft and hard limits, so a command cannot raise
/// them, and are clamped to the host's hard limits. `RLIMIT_NPROC` counts
/// every process of the user, and the kernel does not enforce it for root.
///
/// ```
/// use tack_sandbox::ResourceLimits;
/// let limits = ResourceLimits::default().with_file_size_bytes(Some(1 << 20));
/// assert_eq!(limits.file_size_bytes, Some(1 << 20));
/// assert_eq!(limits.cpu_seconds, Some(600));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceLimits {
    /// CPU time in seconds (`ulimit -t`; the kernel sends `SIGXCPU`, then `SIGKILL`). Default 600.
    pub cpu_seconds: Option<u64>,
    /// Address space in bytes (`ulimit -v`; allocations fail). Default 8 GiB.
    pub address_space_bytes: Option<u64>,
    /// Largest file a command may write, in bytes (`ulimit -f`; `SIGXFSZ`). Default 4 GiB.
    pub file_size_bytes: Option<u64>,
    /// Processes of the user (`ulimit -u`; `fork` fails). Default 4096.
    pub processes: Option<u64>,
    /// Size of each memory-backed filesystem a command gets inside
    /// bubblewrap (its private `/tmp` and `/dev/shm`), in bytes: what they
    /// hold is host memory that no other limit counts. Default 1 GiB;
    /// `None` leaves the kernel's default (half the host's memory each).
    pub tmpfs_bytes: Option<u64>,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        Self {
            cpu_seconds: Some(600),
            address_space_bytes: Some(8 << 30),
            file_size_bytes: Some(4 << 30),
            processes: Some(4096),
            tmpfs_bytes: Some(1 << 30),
        }
    }
}

impl ResourceLimits {
    /// No limits beyond the host's.
    pub fn none() -> Self {
        Self {
            cpu_seconds: None,
            address_space_bytes: None,
            file_size_bytes: None,
            processes: None,
            tmpfs_bytes: None,
        }
    }

    /// Sets the CPU-time limit.
    pub fn with_cpu_seconds(mut self, seconds: Option<u64>) -> Self {
        self.cpu_seconds = seconds;
        self
    }

    /// Sets the address-space limit.
    pub fn with_address_space_bytes(mut self, bytes: Option<u64>) -> Self {
        self.address_space_bytes = bytes;
        self
    }

    /// Sets the file-size limit.
    pub fn with_file_size_bytes(mut self, bytes: Option<u64>) -> Self {
        self.file_size_bytes = bytes;
        self
    }

    /// Sets the size of each private memory-backed filesystem (`/tmp`,
    /// `/dev/shm`) inside bubblewrap.
    pub fn with_tmpfs_bytes(mut self, bytes: Option<u64>) -> Self {
        self.tmpfs_bytes = bytes;
        self
    }

    /// Sets the process-count limit.
    pub fn with_processes(mut self, count: Option<u64>) -> Self {
        self.processes = count;
        self
    }

    /// The script, run by `shell`, that sets the limits and then runs the
    /// command `"$1"`: with `exec <shell> -c "$1"`, or, with `in_place`,
    /// with `eval` in the same process, which saves an `exec` (`$1` is
    /// cleared first, and the one variable the script sets is unset before
    /// the command runs). Values are in `ulimit` units (seconds, KiB, blocks
    /// of the running shell) and clamped to the host's hard limits.
    ///
    /// It first closes every descriptor but stdin, stdout and stderr: one
    /// the host inherited without close-on-exec (from whatever started it)
    /// would otherwise reach the command.
    pub(crate) fn wrapper_script(&self, shell: &std::path::Path, in_place: bool) -> String {
        let mut script = close_inherited(shell);
        let mut limit = |flags: &str,
                         what: &str,
                         value: Option<u64>,
                         resource: Resource,
                         unit: u64| {
            if let Some(value) = value {
                let hard = getrlimit(resource)
                    .map(|(_, hard)| hard)
                    .unwrap_or(u64::MAX);
                let value = value.min(hard) / unit;
                // `ulimit -u` is `ulimit -p` in dash; try both.
                let set = flags
                    .split('|')
                    .map(|flag| format!("ulimit {flag} {value} 2>/dev/null"))
                    .collect::<Vec<_>>()
                    .join(" || ");
                let _ = writeln!(
                    script,
                    "{{ {set}; }} || {{ echo 'tack-sandbox: could not set the {what} limit' >&2; exit 126; }}"
                );
            }
        };
        limit("-t", "CPU time", self.cpu_seconds, Resource::RLIMIT_CPU, 1);
        limit(
            "-v",
            "address space",
            self.address_space_bytes,
            Resource::RLIMIT_AS,
            1024,
        );
        // The shell running this script counts `ulimit -f` in its own
        // blocks: bash in 1024 bytes, dash (POSIX) in 512.
        let runner_is_bash = shell.file_name().is_some_and(|n| n == "bash");
        limit(
            "-f",
            "file size",
            self.file_size_bytes,
            Resource::RLIMIT_FSIZE,
            if runner_is_bash { 1024 } else { 512 },
        );
        limit(
            "-u|-p",
            "process count",
            self.processes,
            Resource::RLIMIT_NPROC,
            1,
        );
        if in_place {
            script.push_str(
                "__tack_command=$1; set --; eval \"unset __tack_command; $__tack_command\"\n",
            );
        } else {
            let _ = writeln!(script, "exec {} -c \"$1\"", shell.display());
        }
        script
    }
}

/// The script, run by `shell`, that closes every descriptor above 2 (those
/// listed in `/proc/self/fd`, the shell's own). A POSIX `sh` such as dash
/// can only name descriptors 0 to 9 in a redirection, so under it those
/// above 9 stay open (commands run in bash wherever it exists).
fn close_inherited(shell: &std::path::Path) -> String {
    let (pattern, close) = if shell.file_name().is_some_and(|n| n == "bash") {
        ("[3-9]|[1-9][0-9]*", "{ exec {__tack_fd}>&-; } 2>/dev/null")
    } else {
        ("[3-9]", "{ eval \"exec $__tack_fd>&-\"; } 2>/dev/null")
    };
    format!(
        "for __tack_fd in /proc/self/fd/*; do __tack_fd=${{__tack_fd##*/}}; \
         case $__tack_fd in {pattern}) {close};; esac; done; unset __tack_fd\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_sets_each_limit_in_ulimit_units() {
        let limits = ResourceLimits::none()
            .with_file_size_bytes(Some(1024))
            .with_address_space_bytes(Some(1 << 30));
        let script = limits.wrapper_script(std::path::Path::new("/bin/sh"), false);
        assert!(script.contains("ulimit -f 2 2>/dev/null"), "{script}");
        assert!(script.contains("ulimit -v 1048576 2>/dev/null"), "{script}");
        assert!(!script.contains("ulimit -t"), "{script}");
        assert!(script.ends_with("exec /bin/sh -c \"$1\"\n"));
    }

    #[test]
    fn no_limits_is_closing_and_the_exec() {
        let script =
            ResourceLimits::none().wrapper_script(std::path::Path::new("/bin/bash"), false);
        assert!(
            script.starts_with("for __tack_fd in /proc/self/fd/*"),
            "{script}"
        );
        assert!(script.ends_with("\nexec /bin/bash -c \"$1\"\n"), "{script}");
    }

    /// A descriptor the host holds without close-on-exec never reaches the
    /// command, in place or started anew (bash: a POSIX `sh` can close only
    /// descriptors 3 to 9, and the test's may be higher).
    #[test]
    fn inherited_descriptors_are_closed() {
        use std::os::fd::AsFd;
        let file = tempfile::tempfile().unwrap();
        nix::fcntl::fcntl(
            file.as_fd(),
            nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
        )
        .unwrap();
        let shell = "/bin/bash";
        if !std::path::Path::new(shell).exists() {
            return;
        }
        for in_place in [true, false] {
            let script =
                ResourceLimits::none().wrapper_script(std::path::Path::new(shell), in_place);
            let output = std::process::Command::new(shell)
                .args(["-c", &script, shell, "ls /proc/self/fd"])
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&output.stdout),
                "0\n1\n2\n3\n",
                "in place: {in_place}"
            );
        }
        drop(file);
    }

    /// In place, the command runs in the wrapper's own shell: it sees no
    /// positional parameter and no variable of the wrapper's, and `$$` is
    /// the process the host started.
    #[test]
    fn in_place_the_command_sees_nothing_of_the_wrapper() {
        for shell in ["/bin/sh", "/bin/bash"] {
            if !std::path::Path::new(shell).exists() {
                continue;
            }
            let script = ResourceLimits::none()
                .with_file_size_bytes(Some(1 << 20))
                .wrapper_script(std::path::Path::new(shell), true);
            let child = std::process::Command::new(shell)
                .args(["-c", &script, shell])
                .arg("echo \"[$#][$1][${__tack_command-unset}]\"; ulimit -f; echo $$; exit 7")
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let pid = child.id();
            let output = child.wait_with_output().unwrap();
            assert_eq!(
                String::from_utf8_lossy(&output.stdout),
                // 1 MiB in the shell's own blocks.
                format!(
                    "[0][][unset]\n{}\n{pid}\n",
                    if shell.ends_with("bash") { 1024 } else { 2048 }
                ),
                "{shell}"
            );
            assert_eq!(output.status.code(), Some(7));
        }
    }
}
