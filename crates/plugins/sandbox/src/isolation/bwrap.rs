//! The namespace layer: bubblewrap (`bwrap`), the launcher Linux agent
//! sandboxes use.
//!
//! Inside it the root filesystem is read-only, the writable roots are bound
//! read-write, `/tmp` is a private tmpfs, `/dev` a minimal one and `/proc`
//! the new PID namespace's; the network namespace is new while the network
//! is off; IPC and UTS namespaces are new; the command runs in a new session
//! with every capability dropped and the floor's seccomp filter loaded by
//! bubblewrap after its own setup (which needs the calls the filter refuses).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// The Debian/Ubuntu/Fedora package that provides `bwrap`.
pub(crate) const PACKAGE: &str = "bubblewrap";

/// A working bubblewrap, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum KernelBwrap {
    /// Found and checked: it started a command in new namespaces.
    Available {
        /// The executable.
        path: PathBuf,
        /// `bwrap --version`.
        version: String,
    },
    /// Not usable, and why.
    Unavailable(String),
}

/// Where `bwrap` is: the first in the host's `PATH`, else the usual places.
fn find() -> Option<PathBuf> {
    let from_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default();
    from_path
        .into_iter()
        .chain(["/usr/bin", "/bin", "/usr/local/bin"].map(PathBuf::from))
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("bwrap"))
        .find(|candidate| candidate.is_file())
}

/// Finds bubblewrap and checks that it can build the namespaces the sandbox
/// asks for here (a container may forbid them).
pub(crate) fn probe() -> KernelBwrap {
    let Some(path) = find() else {
        return KernelBwrap::Unavailable(format!(
            "bwrap was not found (install the `{PACKAGE}` package)"
        ));
    };
    let version = std::process::Command::new(&path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_default();
    // The same kind of filter commands get, handed over the same way, so a
    // bubblewrap too old for `--add-seccomp-fd` is found here.
    let filters = crate::isolation::seccomp::compile(crate::isolation::seccomp::FilterSpec {
        network: true,
        unix: true,
        floor: true,
        deny_metadata: false,
        deny_setsid: false,
        group: None,
    })
    .unwrap_or_default();
    let fds = match filters
        .iter()
        .map(|p| crate::isolation::inheritable_memfd(&crate::isolation::seccomp::to_bytes(p)))
        .collect::<Result<Vec<_>, String>>()
    {
        Ok(fds) => fds,
        Err(e) => return KernelBwrap::Unavailable(e),
    };
    let mut seccomp_args = Vec::new();
    for fd in &fds {
        seccomp_args.push("--add-seccomp-fd".to_owned());
        seccomp_args.push(std::os::fd::AsRawFd::as_raw_fd(fd).to_string());
    }
    let checked = std::process::Command::new(&path)
        .args(seccomp_args)
        .args([
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--",
            "/bin/sh",
            "-c",
            "exit 0",
        ])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    drop(fds);
    match checked {
        Ok(out) if out.status.success() => KernelBwrap::Available { path, version },
        Ok(out) => KernelBwrap::Unavailable(format!(
            "{} cannot create namespaces here: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => KernelBwrap::Unavailable(format!("{} could not be run: {e}", path.display())),
    }
}

/// The mounts and namespaces of one sandbox's commands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BwrapPlan {
    /// The executable.
    pub(crate) path: PathBuf,
    /// Bound read-only after `/tmp` is replaced (roots may live in `/tmp`).
    pub(crate) readable: Vec<PathBuf>,
    /// Bound read-write.
    pub(crate) writable: Vec<PathBuf>,
    /// A new network namespace (no network at all, loopback included).
    pub(crate) unshare_net: bool,
    /// `/tmp` and `/dev` read-only too (read-only mode).
    pub(crate) read_only: bool,
    /// The size of the private `/tmp` and `/dev/shm` (memory-backed).
    pub(crate) tmpfs_bytes: Option<u64>,
    /// Hidden paths: those that exist when a command starts are covered,
    /// a directory by an empty read-only tmpfs, anything else by
    /// `/dev/null`.
    pub(crate) hidden: Vec<PathBuf>,
    /// `Some` when Unix sockets are allowed (the seccomp filter lets them
    /// be created): these are bound in, and every other socket under
    /// [`SOCKET_DIRS`](super::sockets::SOCKET_DIRS) is covered by
    /// `/dev/null`. `None`: the filter refuses them, nothing to mount.
    pub(crate) unix_sockets: Option<Vec<PathBuf>>,
    /// Where sockets to cover are looked for
    /// ([`SOCKET_DIRS`](super::sockets::SOCKET_DIRS)).
    pub(crate) socket_dirs: Vec<PathBuf>,
}

impl BwrapPlan {
    /// bubblewrap's arguments up to the command: `seccomp_fds` are the file
    /// descriptors holding the filter programs; `cwd` is where the command
    /// starts; `protected` are bound read-only over the writable roots where
    /// they exist (not as a symlink) when the command starts. With
    /// `supervisor`, the command is a warm environment's supervisor: it is
    /// the namespace's PID 1 and that directory (its FIFOs) is bound
    /// read-only.
    pub(crate) fn args(
        &self,
        seccomp_fds: &[i32],
        cwd: &Path,
        protected: &[PathBuf],
        supervisor: Option<&Path>,
    ) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        let mut push = |items: &[&str]| args.extend(items.iter().map(OsString::from));
        push(&[
            "--die-with-parent",
            "--new-session",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--cap-drop",
            "ALL",
        ]);
        if self.unshare_net {
            push(&["--unshare-net"]);
        }
        if supervisor.is_some() {
            push(&["--as-pid-1"]);
        }
        // A writable root of `/` (a workspace at the filesystem root) makes
        // the root mount writable; binding it again later would cover the
        // private `/dev`, `/proc` and `/tmp`.
        let root = Path::new("/");
        let root_writable = self.writable.iter().any(|p| p == root);
        push(&[
            if root_writable { "--bind" } else { "--ro-bind" },
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
        ]);
        // Memory-backed: each gets a size, or it could hold half the
        // host's memory, counted by no limit.
        for dir in ["/tmp", "/dev/shm"] {
            if let Some(bytes) = self.tmpfs_bytes {
                args.push("--size".into());
                args.push(bytes.to_string().into());
            }
            args.push("--tmpfs".into());
            args.push(dir.into());
        }
        for (flag, paths) in [("--ro-bind", &self.readable), ("--bind", &self.writable)] {
            for path in paths.iter().filter(|p| p.as_path() != root) {
                args.push(flag.into());
                args.push(path.into());
                args.push(path.into());
            }
        }
        for path in protected {
            let exists = std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_symlink());
            if exists {
                args.push("--ro-bind".into());
                args.push(path.into());
                args.push(path.into());
            }
        }
        if let Some(dir) = supervisor {
            args.push("--ro-bind".into());
            args.push(dir.into());
            args.push(dir.into());
        }
        // Hidden paths last, so that they are hidden inside the writable
        // roots and the protected paths too; only existing ones (a mount
        // point made in a writable root would be made on the host).
        let mut emptied = Vec::new();
        for path in &self.hidden {
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                continue;
            };
            if meta.is_dir() {
                args.extend(["--perms".into(), "0111".into(), "--tmpfs".into()]);
                args.push(path.into());
                emptied.push(path);
            } else if !meta.file_type().is_symlink() {
                args.extend(["--ro-bind".into(), "/dev/null".into()]);
                args.push(path.into());
            }
        }
        if let Some(allowed) = &self.unix_sockets {
            let allowed = crate::isolation::sockets::allowed_now(allowed);
            for socket in crate::isolation::sockets::sockets_under(&self.socket_dirs) {
                let own = self.writable.iter().any(|w| socket.starts_with(w));
                if !allowed.contains(&socket) && !own {
                    args.extend(["--ro-bind".into(), "/dev/null".into()]);
                    args.push(socket.into());
                }
            }
            // After the private /tmp and the hidden paths, which may hold them.
            for socket in allowed {
                args.push("--bind".into());
                args.push(socket.clone().into());
                args.push(socket.into());
            }
        }
        for path in emptied {
            args.push("--remount-ro".into());
            args.push(path.into());
        }
        if self.read_only {
            args.extend(
                [
                    "--remount-ro",
                    "/tmp",
                    "--remount-ro",
                    "/dev/shm",
                    "--remount-ro",
                    "/dev",
                ]
                .map(OsString::from),
            );
        }
        for fd in seccomp_fds {
            args.push("--add-seccomp-fd".into());
            args.push(fd.to_string().into());
        }
        args.push("--chdir".into());
        args.push(cwd.into());
        args.push("--".into());
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_bound_after_the_private_tmp_and_read_only_remounts_last() {
        let plan = BwrapPlan {
            path: PathBuf::from("/usr/bin/bwrap"),
            readable: vec![PathBuf::from("/tmp/docs")],
            writable: vec![PathBuf::from("/tmp/ws")],
            unshare_net: true,
            read_only: true,
            tmpfs_bytes: Some(1 << 20),
            hidden: Vec::new(),
            unix_sockets: None,
            socket_dirs: Vec::new(),
        };
        let args: Vec<String> = plan
            .args(
                &[7],
                Path::new("/tmp/ws/sub"),
                &[PathBuf::from("/"), PathBuf::from("/nonexistent/.git")],
                None,
            )
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        let joined = args.join(" ");
        let tmpfs = joined.find("--size 1048576 --tmpfs /tmp").unwrap();
        assert!(
            joined.contains("--size 1048576 --tmpfs /dev/shm"),
            "{joined}"
        );
        let ro = joined.find("--ro-bind /tmp/docs /tmp/docs").unwrap();
        let rw = joined.find("--bind /tmp/ws /tmp/ws").unwrap();
        let protected = joined.find("--ro-bind / / --remount").unwrap();
        let remount = joined.find("--remount-ro /tmp").unwrap();
        assert!(
            tmpfs < ro && ro < rw && rw < protected && protected < remount,
            "{joined}"
        );
        assert!(!joined.contains("nonexistent"), "{joined}");
        assert!(joined.contains("--unshare-net"), "{joined}");
        assert!(
            joined.ends_with("--add-seccomp-fd 7 --chdir /tmp/ws/sub --"),
            "{joined}"
        );
    }

    #[test]
    fn a_writable_filesystem_root_is_the_root_mount_not_a_bind_over_dev() {
        let plan = BwrapPlan {
            path: PathBuf::from("/usr/bin/bwrap"),
            readable: vec![],
            writable: vec![PathBuf::from("/")],
            unshare_net: false,
            read_only: false,
            tmpfs_bytes: None,
            hidden: Vec::new(),
            unix_sockets: None,
            socket_dirs: Vec::new(),
        };
        let joined = plan
            .args(&[], Path::new("/"), &[], None)
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(joined.contains("--bind / / --dev /dev"), "{joined}");
        assert_eq!(joined.matches(" / /").count(), 1, "{joined}");
    }

    /// With an allowed socket, another socket under the socket directories
    /// is covered by `/dev/null` (connecting is refused) and the allowed one
    /// reaches its listener: real bubblewrap, real listeners.
    #[test]
    fn other_sockets_are_covered_and_the_allowed_one_is_bound() {
        let KernelBwrap::Available { path, .. } = crate::status::kernel().bwrap.clone() else {
            println!("skipped: no working bubblewrap here");
            return;
        };
        let Some(python) = ["/usr/bin/python3", "/usr/local/bin/python3"]
            .into_iter()
            .find(|p| Path::new(p).is_file())
        else {
            println!("skipped: no python3");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("run/docker")).unwrap();
        let docker = base.join("run/docker/docker.sock");
        let agent = base.join("run/agent.sock");
        let docker_listener = std::os::unix::net::UnixListener::bind(&docker).unwrap();
        docker_listener.set_nonblocking(true).unwrap();
        let agent_listener = std::os::unix::net::UnixListener::bind(&agent).unwrap();
        let plan = BwrapPlan {
            path,
            readable: vec![base.clone()],
            writable: vec![],
            unshare_net: true,
            read_only: false,
            tmpfs_bytes: None,
            hidden: vec![],
            unix_sockets: Some(vec![agent.clone()]),
            socket_dirs: vec![base.join("run")],
        };
        let script = "import socket, sys\n\
                      for p in sys.argv[1:]:\n\
                      \x20   s = socket.socket(socket.AF_UNIX)\n\
                      \x20   try:\n\
                      \x20       s.connect(p); s.sendall(b'hi'); print('ok')\n\
                      \x20   except OSError as e:\n\
                      \x20       print('refused', e.errno)\n";
        let mut args = plan.args(&[], &base, &[], None);
        args.extend([python.into(), "-c".into(), script.into()]);
        args.extend([docker.clone().into_os_string(), agent.into_os_string()]);
        let out = std::process::Command::new(&plan.path)
            .args(args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            stdout,
            "refused 111\nok\n",
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            docker_listener.accept().is_err(),
            "the covered socket was reached"
        );
        assert!(agent_listener.accept().is_ok());
        assert!(docker.exists(), "the host's socket was touched");
    }
}
