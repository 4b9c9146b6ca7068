//! What the kernel offers and what a sandbox applies, reported honestly.

use std::fmt;
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::isolation::{KernelBwrap, KernelLandlock};
use crate::policy::{Namespaces, SandboxMode, SandboxPolicy};

/// The first Landlock ABI that restricts TCP bind and connect.
const TCP_ABI: u32 = 4;
/// The first Landlock ABI with every filesystem right the sandbox asks for.
const FULL_FS_ABI: u32 = 5;
/// The first Landlock ABI that scopes signals and abstract Unix sockets.
const SCOPE_ABI: u32 = 6;

/// Whether one kind of restriction applies to commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Enforcement {
    /// It applies to every command.
    Enforced,
    /// It applies, but not completely; the field's documentation says what
    /// is left out (for Landlock: before ABI 3 truncating a file outside the
    /// writable roots is not restricted, before ABI 5 device ioctls are not).
    Partial,
    /// The policy does not ask for it.
    NotRequested,
    /// The policy asks for it and this machine cannot apply it.
    Unavailable,
}

impl fmt::Display for Enforcement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Enforcement::Enforced => "enforced",
            Enforcement::Partial => "partially enforced",
            Enforcement::NotRequested => "not requested",
            Enforcement::Unavailable => "UNAVAILABLE",
        })
    }
}

/// Whether commands run at all under a sandbox.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum CommandAdmission {
    /// Commands run with everything the policy asks for.
    Run,
    /// Commands run without some of it (`require_os_isolation(false)`); each
    /// run logs a warning.
    RunWithWarning {
        /// What is not applied.
        missing: String,
    },
    /// Every command is refused with this reason.
    Refused {
        /// Why, and how to allow unconfined commands.
        reason: String,
    },
}

/// What one sandbox applies to its commands, layer by layer.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[non_exhaustive]
pub struct PolicyIsolation {
    /// The policy's mode.
    pub mode: SandboxMode,
    /// The namespace layer (bubblewrap): a read-only root filesystem with the
    /// writable roots bound read-write, a private `/tmp`, new PID, IPC and
    /// UTS namespaces, a new network namespace while the network is off.
    /// `Unavailable` under [`Namespaces::Auto`]
    /// means commands run on the floor alone, which that setting allows;
    /// under `Required` it refuses commands.
    pub namespaces: Enforcement,
    /// Writes outside the writable roots: by the read-only mounts of the
    /// namespace layer (metadata included), else by Landlock (contents only:
    /// `chmod`, `chown` and `touch` on files the user owns are not stopped).
    pub filesystem: Enforcement,
    /// The network: a new network namespace, else the seccomp filter
    /// refusing AF_INET and AF_INET6 sockets (TCP and UDP alike); `Partial`
    /// when only Landlock applies (TCP bind and connect only).
    pub network: Enforcement,
    /// Signals, `ptrace`, `prlimit` and friends aimed at processes outside
    /// the command: a PID namespace hides them, else Landlock (ABI 6+)
    /// scopes signals and the seccomp filter refuses the others.
    pub signals: Enforcement,
    /// The seccomp filter (raw and packet sockets, mount, namespaces,
    /// keyrings, BPF, perf, kexec, modules, the clock, the host name, reboot,
    /// ptrace, io_uring, calls aimed at other processes).
    pub seccomp: Enforcement,
    /// Every capability dropped (ambient, inheritable, effective, permitted;
    /// on the floor the bounding set too, where the host may drop it; inside
    /// bubblewrap run as root the bounding set is kept), with
    /// `no_new_privs`, so root loses its privileges and cannot regain them.
    pub capabilities: Enforcement,
    /// Every process of a command ends with its call, and with the host (a
    /// host killed in the first milliseconds of a command's start aside):
    /// `Enforced` with a PID namespace; on the floor `Enforced` too when the
    /// seccomp filter applies (no process can leave the command's process
    /// group: `setsid` and every other `setpgid` are refused) and Landlock
    /// scopes signals (ABI 6+, so the command cannot stop the watchdog that
    /// kills the group when the host dies); `Partial` otherwise.
    pub lifetime: Enforcement,
    /// The protected paths ([`SandboxPolicy::protected`]) kept from
    /// commands: `Enforced` inside bubblewrap (those that exist when a
    /// command starts, at any depth, are mounted read-only, and one the
    /// command creates is removed when it ends); `Partial` on the floor,
    /// whose Landlock rules cannot make part of a writable root read-only:
    /// a command can change them while it runs, and what it changed is put
    /// back once its processes are gone (git's data inside a `.git` aside)
    /// and what it created removed. The fs capability refuses writes to them
    /// in every case, and this alone never refuses commands.
    pub protected: Enforcement,
    /// Unix sockets ([`SandboxPolicy::with_unix_socket`]): `Enforced` when
    /// the seccomp filter refuses to create them (`EAFNOSUPPORT`, named in
    /// the command's output), which keeps every path-named and abstract
    /// socket out of reach (`socketpair` stays allowed); `Partial` when the
    /// host allows some: inside bubblewrap the others under `/run`,
    /// `/var/run` and LXD's directories are covered when a command starts
    /// and sockets elsewhere stay reachable; on the floor every path-named
    /// socket is reachable and only abstract sockets are kept out (Landlock
    /// ABI 6+).
    pub unix_sockets: Enforcement,
    /// The process limit ([`ResourceLimits::processes`](crate::ResourceLimits::processes)):
    /// `Enforced` when each call's processes (threads included) are counted
    /// in a `pids` cgroup of their own, which holds for root too: where the
    /// host can make cgroups in a cgroup v1 `pids` hierarchy, or on cgroup
    /// v2 with `pids` delegated to the host's cgroup for commands inside
    /// bubblewrap; `Partial` otherwise for a user other than root
    /// (`RLIMIT_NPROC`, which counts every process of the user);
    /// `Unavailable` for root without such a cgroup (the kernel does not
    /// apply `RLIMIT_NPROC` to root).
    pub processes: Enforcement,
    /// The hidden paths ([`SandboxPolicy::hidden`]) kept from commands:
    /// `Enforced` inside bubblewrap (each existing one covered by an empty
    /// unreadable directory or `/dev/null`); `Partial` on the floor, where
    /// Landlock grants read around them: the directories on the way to a
    /// hidden path cannot be listed, and hidden paths inside a sandbox root
    /// are not hidden from commands (the fs capability refuses them in
    /// every case).
    pub hidden: Enforcement,
    /// Whether commands start in warm environments: one confined shell
    /// (inside bubblewrap, or on the floor with Landlock and a `pids`
    /// cgroup for the calls) started once and reused command after command,
    /// so that a command's start costs about one `fork`. Each command is
    /// still on its own: one at a time per environment, everything it
    /// started killed when it ends (a PID namespace's processes, or on the
    /// floor every process of the call's cgroup, which none can leave), and
    /// an environment it left anything in is thrown away. `false`: each
    /// command starts a confined shell of its own.
    pub warm: bool,
    /// Whether commands run.
    pub commands: CommandAdmission,
}

/// What the machine offers for isolation and, for a [`Sandbox`](crate::Sandbox),
/// what it applies to every command. Nothing here claims more than was
/// verified: Landlock and seccomp are probed by restricting a throwaway
/// thread, bubblewrap by starting a command in new namespaces, and each
/// command's restrictions are checked again when it is spawned. If one then
/// fails, the command is not started (isolation required) or runs with a
/// logged warning (not required).
///
/// ```
/// let status = tack_sandbox::probe_isolation();
/// println!("{status}");
/// assert!(status.policy.is_none());
/// if status.landlock_abi.is_none() {
///     assert!(status.landlock_unavailable.is_some());
/// }
/// assert_eq!(status.bwrap.is_some(), status.bwrap_unavailable.is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[non_exhaustive]
pub struct IsolationStatus {
    /// The kernel's Landlock ABI version, when Landlock works.
    pub landlock_abi: Option<u32>,
    /// Why Landlock does not work, when it does not.
    pub landlock_unavailable: Option<String>,
    /// Whether the kernel can restrict TCP bind and connect (Landlock ABI 4+).
    pub tcp_restriction: bool,
    /// Whether the kernel takes seccomp filters.
    pub seccomp: bool,
    /// Why seccomp filters cannot be used, when they cannot.
    pub seccomp_unavailable: Option<String>,
    /// bubblewrap, when it works here: its path and version.
    pub bwrap: Option<String>,
    /// Why bubblewrap cannot be used, when it cannot.
    pub bwrap_unavailable: Option<String>,
    /// The shell that runs commands: `/bin/bash` when present, else `/bin/sh`.
    pub shell: PathBuf,
    /// What a sandbox applies; `None` from [`probe_isolation`].
    pub policy: Option<PolicyIsolation>,
}

/// Everything probed about this machine, once per process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Kernel {
    pub(crate) landlock: KernelLandlock,
    pub(crate) seccomp: Result<(), String>,
    pub(crate) bwrap: KernelBwrap,
    pub(crate) shell: PathBuf,
    /// A `pids` cgroup hierarchy where calls' cgroups can be made: `true`
    /// for cgroup v1 (a thread can move), `false` for v2; `None`: none.
    pub(crate) pids: Option<bool>,
    /// The host runs as root (for whom `RLIMIT_NPROC` does not hold).
    pub(crate) root: bool,
}

impl Kernel {
    /// The Landlock ABI, when Landlock works.
    pub(crate) fn landlock_abi(&self) -> Option<u32> {
        match self.landlock {
            KernelLandlock::Available(abi) => Some(abi),
            KernelLandlock::Unavailable(_) => None,
        }
    }
}

static KERNEL: OnceLock<Kernel> = OnceLock::new();

/// The shell commands run in.
fn shell() -> PathBuf {
    let bash = PathBuf::from("/bin/bash");
    if bash.is_file() {
        bash
    } else {
        PathBuf::from("/bin/sh")
    }
}

/// What this machine offers, probed on first use and cached.
pub(crate) fn kernel() -> &'static Kernel {
    KERNEL.get_or_init(|| Kernel {
        landlock: crate::isolation::landlock::probe(),
        seccomp: crate::isolation::seccomp::probe(),
        bwrap: crate::isolation::bwrap::probe(),
        shell: shell(),
        pids: crate::isolation::pids::hierarchy().map(|h| h.threads),
        root: nix::unistd::geteuid().is_root(),
    })
}

/// What this machine offers for isolating commands: the Landlock ABI version
/// (or why there is none), whether TCP can be restricted, seccomp,
/// bubblewrap, and the shell. Probed once per process and cached.
pub fn probe_isolation() -> IsolationStatus {
    kernel_status(kernel())
}

fn kernel_status(kernel: &Kernel) -> IsolationStatus {
    let (landlock_abi, landlock_unavailable) = match &kernel.landlock {
        KernelLandlock::Available(abi) => (Some(*abi), None),
        KernelLandlock::Unavailable(reason) => (None, Some(reason.clone())),
    };
    let (bwrap, bwrap_unavailable) = match &kernel.bwrap {
        KernelBwrap::Available { path, version } => {
            (Some(format!("{} ({version})", path.display())), None)
        }
        KernelBwrap::Unavailable(reason) => (None, Some(reason.clone())),
    };
    IsolationStatus {
        landlock_abi,
        landlock_unavailable,
        tcp_restriction: landlock_abi.is_some_and(|abi| abi >= TCP_ABI),
        seccomp: kernel.seccomp.is_ok(),
        seccomp_unavailable: kernel.seccomp.clone().err(),
        bwrap,
        bwrap_unavailable,
        shell: kernel.shell.clone(),
        policy: None,
    }
}

/// Whether the namespace layer is used for `policy` on `kernel`.
pub(crate) fn uses_bwrap(policy: &SandboxPolicy, kernel: &Kernel) -> bool {
    policy.mode() != SandboxMode::FullAccess
        && policy.namespaces() != Namespaces::Disabled
        && matches!(kernel.bwrap, KernelBwrap::Available { .. })
}

fn applied(e: Enforcement) -> bool {
    matches!(e, Enforcement::Enforced | Enforcement::Partial)
}

/// What `policy` gets on `kernel`.
pub(crate) fn plan(policy: &SandboxPolicy, kernel: &Kernel) -> IsolationStatus {
    let mut status = kernel_status(kernel);
    let abi = status.landlock_abi.unwrap_or(0);
    let full_access = policy.mode() == SandboxMode::FullAccess;
    let bwrap_used = uses_bwrap(policy, kernel);
    let bwrap = if full_access || policy.namespaces() == Namespaces::Disabled {
        Enforcement::NotRequested
    } else if bwrap_used {
        Enforcement::Enforced
    } else {
        Enforcement::Unavailable
    };
    let seccomp_ok = kernel.seccomp.is_ok();
    let seccomp = if full_access && policy.network_allowed() {
        Enforcement::NotRequested
    } else if !seccomp_ok {
        Enforcement::Unavailable
    } else if full_access {
        // Only the socket rules.
        Enforcement::Partial
    } else {
        Enforcement::Enforced
    };
    let filesystem = if full_access {
        Enforcement::NotRequested
    } else if bwrap_used || abi >= FULL_FS_ABI {
        Enforcement::Enforced
    } else if abi >= 1 {
        Enforcement::Partial
    } else {
        Enforcement::Unavailable
    };
    let network = if policy.network_allowed() {
        Enforcement::NotRequested
    } else if bwrap_used || seccomp_ok {
        Enforcement::Enforced
    } else if abi >= TCP_ABI {
        Enforcement::Partial
    } else {
        Enforcement::Unavailable
    };
    let landlock_applied = !bwrap_used && abi >= 1 && (applied(filesystem) || applied(network));
    let signals = if full_access && policy.network_allowed() {
        Enforcement::NotRequested
    } else if bwrap_used {
        Enforcement::Enforced
    } else if landlock_applied && abi >= SCOPE_ABI {
        if full_access {
            // Signals are scoped, but nothing else aimed at other processes.
            Enforcement::Partial
        } else {
            Enforcement::Enforced
        }
    } else if !full_access && seccomp_ok {
        // prlimit, renice, ptrace … refused; signals not scoped.
        Enforcement::Partial
    } else {
        Enforcement::Unavailable
    };
    let capabilities = if full_access {
        Enforcement::NotRequested
    } else {
        Enforcement::Enforced
    };
    let protected = if policy.mode() != SandboxMode::WorkspaceWrite || policy.protected().is_empty()
    {
        Enforcement::NotRequested
    } else if bwrap_used {
        Enforcement::Enforced
    } else {
        // The floor cannot make a path under a writable root read-only
        // (Landlock only grants): a command's changes are put back after
        // it, and what it creates is removed.
        Enforcement::Partial
    };
    let unix_sockets = if full_access {
        Enforcement::NotRequested
    } else if !seccomp_ok {
        Enforcement::Unavailable
    } else if policy.unix_sockets().is_empty() {
        Enforcement::Enforced
    } else {
        Enforcement::Partial
    };
    let hidden = if full_access || policy.hidden().is_empty() {
        Enforcement::NotRequested
    } else if bwrap_used {
        Enforcement::Enforced
    } else if abi >= 1 {
        Enforcement::Partial
    } else {
        Enforcement::Unavailable
    };
    // On the floor, a warm environment needs Landlock limiting writes (so a
    // command cannot leave the call's cgroup) and a cgroup to put each call
    // in.
    let warm = bwrap_used
        || (!full_access && landlock_applied && applied(filesystem) && kernel.pids.is_some());
    let processes = if full_access || policy.limits().processes.is_none() {
        Enforcement::NotRequested
    } else if kernel.pids == Some(true) || (kernel.pids == Some(false) && warm) {
        Enforcement::Enforced
    } else if kernel.root {
        Enforcement::Unavailable
    } else {
        Enforcement::Partial
    };
    let lifetime = if bwrap_used
        || (!full_access
            && seccomp == Enforcement::Enforced
            && landlock_applied
            && abi >= SCOPE_ABI)
    {
        Enforcement::Enforced
    } else {
        Enforcement::Partial
    };

    let mut missing = Vec::new();
    if bwrap == Enforcement::Unavailable && policy.namespaces() == Namespaces::Required {
        missing.push(format!(
            "the namespace layer ({}; install the `{}` package)",
            status
                .bwrap_unavailable
                .as_deref()
                .unwrap_or("bwrap is unavailable"),
            crate::isolation::bwrap::PACKAGE
        ));
    }
    if filesystem == Enforcement::Unavailable {
        missing.push(format!(
            "filesystem write confinement (no bubblewrap, and Landlock: {})",
            status
                .landlock_unavailable
                .as_deref()
                .unwrap_or("unavailable")
        ));
    }
    if seccomp == Enforcement::Unavailable {
        missing.push(format!(
            "the seccomp filter ({})",
            status
                .seccomp_unavailable
                .as_deref()
                .unwrap_or("unavailable")
        ));
    }
    if network == Enforcement::Unavailable || network == Enforcement::Partial {
        missing.push(format!(
            "network denial (no bubblewrap, no seccomp, and Landlock ABI {TCP_ABI}+ covers TCP only; this kernel has {})",
            status
                .landlock_abi
                .map_or_else(|| "none".to_owned(), |v| v.to_string())
        ));
    }
    let commands = if missing.is_empty() {
        CommandAdmission::Run
    } else {
        let missing = missing.join(" and ");
        if policy.os_isolation_required() {
            let network_hint = if network == Enforcement::Unavailable {
                ", or allow the network with with_network(true)"
            } else {
                ""
            };
            CommandAdmission::Refused {
                reason: format!(
                    "OS isolation is required but this machine cannot apply {missing}; \
                     to run commands without it, configure the sandbox with require_os_isolation(false){network_hint}"
                ),
            }
        } else {
            CommandAdmission::RunWithWarning { missing }
        }
    };
    status.policy = Some(PolicyIsolation {
        mode: policy.mode(),
        namespaces: bwrap,
        filesystem,
        network,
        signals,
        seccomp,
        capabilities,
        lifetime,
        protected,
        unix_sockets,
        processes,
        hidden,
        warm,
        commands,
    });
    status
}

impl fmt::Display for IsolationStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.bwrap, &self.bwrap_unavailable) {
            (Some(bwrap), _) => writeln!(f, "bubblewrap: available: {bwrap}")?,
            (None, Some(reason)) => writeln!(f, "bubblewrap: unavailable: {reason}")?,
            (None, None) => writeln!(f, "bubblewrap: unavailable")?,
        }
        match (self.landlock_abi, &self.landlock_unavailable) {
            (Some(abi), _) => writeln!(f, "landlock: available (ABI {abi})")?,
            (None, Some(reason)) => writeln!(f, "landlock: unavailable: {reason}")?,
            (None, None) => writeln!(f, "landlock: unavailable")?,
        }
        writeln!(
            f,
            "tcp restriction: {}",
            if self.tcp_restriction {
                "supported (UDP and Unix sockets are not covered by Landlock)"
            } else {
                "not supported"
            }
        )?;
        match &self.seccomp_unavailable {
            None => writeln!(f, "seccomp: available")?,
            Some(reason) => writeln!(f, "seccomp: unavailable: {reason}")?,
        }
        writeln!(f, "shell: {}", self.shell.display())?;
        if let Some(policy) = &self.policy {
            writeln!(f, "mode: {}", policy.mode)?;
            writeln!(
                f,
                "commands, namespaces (bubblewrap): {}",
                policy.namespaces
            )?;
            writeln!(
                f,
                "commands, filesystem writes outside the writable roots: {}",
                policy.filesystem
            )?;
            writeln!(f, "commands, network: {}", policy.network)?;
            writeln!(
                f,
                "commands, signals and calls aimed at outside processes: {}",
                policy.signals
            )?;
            writeln!(f, "commands, seccomp filter: {}", policy.seccomp)?;
            writeln!(f, "commands, capabilities dropped: {}", policy.capabilities)?;
            writeln!(
                f,
                "commands, no process outlives its call: {}",
                policy.lifetime
            )?;
            writeln!(
                f,
                "commands, protected paths read-only: {}",
                policy.protected
            )?;
            writeln!(
                f,
                "commands, Unix sockets refused: {}{}",
                policy.unix_sockets,
                if policy.unix_sockets == Enforcement::Partial {
                    " (the allowed ones are reachable, and inside bubblewrap sockets outside /run and /var/run, on the floor every path-named socket)"
                } else {
                    ""
                }
            )?;
            writeln!(f, "commands, hidden paths unreadable: {}", policy.hidden)?;
            writeln!(
                f,
                "commands, start: {}",
                if policy.warm {
                    "in a warm environment (one confined shell reused, each command on its own)"
                } else {
                    "each in a confined shell of its own"
                }
            )?;
            writeln!(
                f,
                "commands, process count limited per call: {}{}",
                policy.processes,
                match policy.processes {
                    Enforcement::Partial => " (RLIMIT_NPROC: every process of the user)",
                    Enforcement::Unavailable =>
                        " (no pids cgroup can be made here, and RLIMIT_NPROC does not hold for root)",
                    _ => "",
                }
            )?;
            match &policy.commands {
                CommandAdmission::Run => writeln!(f, "commands: run")?,
                CommandAdmission::RunWithWarning { missing } => {
                    writeln!(f, "commands: run WITHOUT {missing}")?;
                }
                CommandAdmission::Refused { reason } => writeln!(f, "commands: refused: {reason}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(landlock: Option<u32>, seccomp: bool, bwrap: bool) -> Kernel {
        Kernel {
            landlock: landlock.map_or_else(
                || KernelLandlock::Unavailable("no landlock here".into()),
                KernelLandlock::Available,
            ),
            seccomp: if seccomp {
                Ok(())
            } else {
                Err("no seccomp here".into())
            },
            bwrap: if bwrap {
                KernelBwrap::Available {
                    path: "/usr/bin/bwrap".into(),
                    version: "bubblewrap 0.8.0".into(),
                }
            } else {
                KernelBwrap::Unavailable(
                    "bwrap was not found (install the `bubblewrap` package)".into(),
                )
            },
            shell: "/bin/sh".into(),
            pids: Some(true),
            root: true,
        }
    }

    fn plan_for(policy: SandboxPolicy, kernel: Kernel) -> PolicyIsolation {
        plan(&policy, &kernel).policy.unwrap()
    }

    #[test]
    fn a_kernel_without_landlock_or_bwrap_refuses_commands_by_default() {
        let p = plan_for(
            SandboxPolicy::workspace_write("/ws"),
            machine(None, true, false),
        );
        assert_eq!(p.filesystem, Enforcement::Unavailable);
        assert_eq!(p.network, Enforcement::Enforced);
        let CommandAdmission::Refused { reason } = p.commands else {
            panic!("expected a refusal, got {:?}", p.commands);
        };
        assert!(reason.contains("require_os_isolation(false)"), "{reason}");
        assert!(reason.contains("no landlock here"), "{reason}");
    }

    #[test]
    fn bwrap_alone_confines_the_filesystem_without_landlock() {
        let p = plan_for(
            SandboxPolicy::workspace_write("/ws"),
            machine(None, true, true),
        );
        assert_eq!(p.namespaces, Enforcement::Enforced);
        assert_eq!(p.filesystem, Enforcement::Enforced);
        assert_eq!(p.lifetime, Enforcement::Enforced);
        assert_eq!(p.commands, CommandAdmission::Run);
    }

    #[test]
    fn missing_seccomp_is_named() {
        let p = plan_for(
            SandboxPolicy::workspace_write("/ws"),
            machine(Some(7), false, true),
        );
        let CommandAdmission::Refused { reason } = p.commands else {
            panic!("expected a refusal, got {:?}", p.commands);
        };
        assert!(
            reason.contains("seccomp filter (no seccomp here)"),
            "{reason}"
        );
    }

    #[test]
    fn required_namespaces_name_the_package() {
        let policy = SandboxPolicy::workspace_write("/ws").with_namespaces(Namespaces::Required);
        let p = plan_for(policy.clone(), machine(Some(7), true, false));
        let CommandAdmission::Refused { reason } = p.commands else {
            panic!("expected a refusal, got {:?}", p.commands);
        };
        assert!(
            reason.contains("install the `bubblewrap` package"),
            "{reason}"
        );
        // Auto falls back to the floor, and says so.
        let auto = plan_for(
            SandboxPolicy::workspace_write("/ws"),
            machine(Some(7), true, false),
        );
        assert_eq!(auto.namespaces, Enforcement::Unavailable);
        assert_eq!(auto.lifetime, Enforcement::Enforced);
        let old_abi = plan_for(
            SandboxPolicy::workspace_write("/ws"),
            machine(Some(5), true, false),
        );
        assert_eq!(old_abi.lifetime, Enforcement::Partial);
        assert_eq!(auto.commands, CommandAdmission::Run);
        let off = plan_for(
            SandboxPolicy::workspace_write("/ws").with_namespaces(Namespaces::Disabled),
            machine(Some(7), true, true),
        );
        assert_eq!(off.namespaces, Enforcement::NotRequested);
    }

    #[test]
    fn not_requiring_isolation_runs_with_a_warning() {
        let p = plan_for(
            SandboxPolicy::workspace_write("/ws").require_os_isolation(false),
            machine(None, false, false),
        );
        assert!(matches!(
            p.commands,
            CommandAdmission::RunWithWarning { .. }
        ));
    }

    #[test]
    fn an_old_abi_without_seccomp_cannot_deny_the_network() {
        let p = plan_for(
            SandboxPolicy::read_only("/ws"),
            machine(Some(3), false, false),
        );
        assert_eq!(p.filesystem, Enforcement::Partial);
        assert_eq!(p.network, Enforcement::Unavailable);
        assert_eq!(p.signals, Enforcement::Unavailable);
        assert!(matches!(p.commands, CommandAdmission::Refused { .. }));
        let p = plan_for(
            SandboxPolicy::read_only("/ws").with_network(true),
            machine(Some(3), true, false),
        );
        assert_eq!(p.commands, CommandAdmission::Run);
    }

    #[test]
    fn sockets_and_hidden_paths_say_what_each_layer_leaves_out() {
        let allowed = SandboxPolicy::workspace_write("/ws").with_unix_socket("/run/agent.sock");
        let floor = plan_for(allowed.clone(), machine(Some(7), true, false));
        assert_eq!(floor.unix_sockets, Enforcement::Partial);
        assert_eq!(floor.hidden, Enforcement::Partial);
        let bwrap = plan_for(allowed, machine(Some(7), true, true));
        assert_eq!(bwrap.unix_sockets, Enforcement::Partial);
        assert_eq!(bwrap.hidden, Enforcement::Enforced);
        let no_seccomp = plan_for(
            SandboxPolicy::workspace_write("/ws"),
            machine(Some(7), false, true),
        );
        assert_eq!(no_seccomp.unix_sockets, Enforcement::Unavailable);
        let full = plan_for(
            SandboxPolicy::full_access("/ws"),
            machine(Some(7), true, true),
        );
        assert_eq!(full.unix_sockets, Enforcement::NotRequested);
        assert_eq!(full.hidden, Enforcement::NotRequested);
        let shown = plan(
            &SandboxPolicy::workspace_write("/ws"),
            &machine(Some(7), true, true),
        )
        .to_string();
        assert!(
            shown.contains("commands, Unix sockets refused: enforced\n"),
            "{shown}"
        );
        assert!(
            shown.contains("commands, hidden paths unreadable: enforced\n"),
            "{shown}"
        );
    }

    #[test]
    fn full_access_with_network_needs_nothing() {
        let p = plan_for(
            SandboxPolicy::full_access("/ws"),
            machine(None, false, false),
        );
        assert_eq!(p.filesystem, Enforcement::NotRequested);
        assert_eq!(p.network, Enforcement::NotRequested);
        assert_eq!(p.signals, Enforcement::NotRequested);
        assert_eq!(p.seccomp, Enforcement::NotRequested);
        assert_eq!(p.capabilities, Enforcement::NotRequested);
        assert_eq!(p.commands, CommandAdmission::Run);
    }

    #[test]
    fn a_modern_kernel_enforces_everything() {
        let p = plan_for(
            SandboxPolicy::workspace_write("/ws"),
            machine(Some(7), true, true),
        );
        for e in [
            p.namespaces,
            p.filesystem,
            p.network,
            p.signals,
            p.seccomp,
            p.capabilities,
            p.lifetime,
            p.unix_sockets,
            p.processes,
            p.hidden,
        ] {
            assert_eq!(e, Enforcement::Enforced);
        }
        assert_eq!(p.commands, CommandAdmission::Run);
    }
}
