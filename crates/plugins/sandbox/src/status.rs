//! What the kernel offers and what a sandbox applies, reported honestly.

use std::fmt;
use std::sync::OnceLock;

use crate::isolation::KernelLandlock;
use crate::policy::{SandboxMode, SandboxPolicy};

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
    /// The kernel enforces it on every command.
    Enforced,
    /// The kernel enforces it, but its Landlock ABI lacks some rights:
    /// before ABI 3 truncating a file outside the writable roots is not
    /// restricted, before ABI 5 device ioctls are not.
    Partial,
    /// The policy does not ask for it.
    NotRequested,
    /// The policy asks for it and the kernel cannot apply it.
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

/// What one sandbox applies to its commands.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[non_exhaustive]
pub struct PolicyIsolation {
    /// The policy's mode.
    pub mode: SandboxMode,
    /// Writes outside the writable roots (Landlock filesystem rules).
    pub filesystem: Enforcement,
    /// TCP bind and connect (Landlock network rules), and connecting to
    /// abstract Unix sockets made outside the sandbox (ABI 6+). UDP and
    /// Unix sockets with a path are never restricted.
    pub network: Enforcement,
    /// Signals from commands to processes outside the sandbox, the host
    /// included (Landlock ABI 6+). Applied whenever any Landlock rule is;
    /// its absence alone never refuses commands.
    pub signals: Enforcement,
    /// Whether commands run.
    pub commands: CommandAdmission,
}

/// What the kernel offers for isolation and, for a [`Sandbox`](crate::Sandbox),
/// what it applies to every command. Nothing here claims more than was
/// verified: the kernel side comes from actually restricting a throwaway
/// thread, and each command's restriction is checked again when it is
/// spawned. If the kernel then enforces none of the rules, the command is not
/// started (isolation required) or runs with a logged warning (not required).
///
/// ```
/// let status = tack_sandbox::probe_isolation();
/// println!("{status}");
/// assert!(status.policy.is_none());
/// if status.landlock_abi.is_none() {
///     assert!(status.landlock_unavailable.is_some());
/// }
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
    /// What a sandbox applies; `None` from [`probe_isolation`].
    pub policy: Option<PolicyIsolation>,
}

static KERNEL: OnceLock<KernelLandlock> = OnceLock::new();

/// The kernel's Landlock support, probed on first use and cached.
pub(crate) fn kernel() -> &'static KernelLandlock {
    KERNEL.get_or_init(crate::isolation::landlock::probe)
}

/// What this kernel offers for isolating commands: the Landlock ABI version
/// (or why there is none) and whether TCP can be restricted. Probed once per
/// process and cached.
pub fn probe_isolation() -> IsolationStatus {
    kernel_status(kernel())
}

fn kernel_status(kernel: &KernelLandlock) -> IsolationStatus {
    match kernel {
        KernelLandlock::Available(abi) => IsolationStatus {
            landlock_abi: Some(*abi),
            landlock_unavailable: None,
            tcp_restriction: *abi >= TCP_ABI,
            policy: None,
        },
        KernelLandlock::Unavailable(reason) => IsolationStatus {
            landlock_abi: None,
            landlock_unavailable: Some(reason.clone()),
            tcp_restriction: false,
            policy: None,
        },
    }
}

/// What `policy` gets on `kernel`.
pub(crate) fn plan(policy: &SandboxPolicy, kernel: &KernelLandlock) -> IsolationStatus {
    let mut status = kernel_status(kernel);
    let abi = status.landlock_abi.unwrap_or(0);
    let filesystem = if policy.mode() == SandboxMode::FullAccess {
        Enforcement::NotRequested
    } else if abi >= FULL_FS_ABI {
        Enforcement::Enforced
    } else if abi >= 1 {
        Enforcement::Partial
    } else {
        Enforcement::Unavailable
    };
    let network = if policy.network_allowed() {
        Enforcement::NotRequested
    } else if abi >= TCP_ABI {
        Enforcement::Enforced
    } else {
        Enforcement::Unavailable
    };
    let applied = |e: Enforcement| matches!(e, Enforcement::Enforced | Enforcement::Partial);
    let signals = if !applied(filesystem) && !applied(network) {
        if filesystem == Enforcement::NotRequested && network == Enforcement::NotRequested {
            Enforcement::NotRequested
        } else {
            Enforcement::Unavailable
        }
    } else if abi >= SCOPE_ABI {
        Enforcement::Enforced
    } else {
        Enforcement::Unavailable
    };
    let mut missing = Vec::new();
    if filesystem == Enforcement::Unavailable {
        missing.push("filesystem write confinement (Landlock)".to_owned());
    }
    if network == Enforcement::Unavailable {
        missing.push(format!(
            "network denial (Landlock ABI {TCP_ABI}+ for TCP, this kernel has {})",
            status
                .landlock_abi
                .map_or_else(|| "none".to_owned(), |v| v.to_string())
        ));
    }
    let commands = if missing.is_empty() {
        CommandAdmission::Run
    } else {
        let why = status
            .landlock_unavailable
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        let missing = format!("{}{why}", missing.join(" and "));
        if policy.os_isolation_required() {
            let network_hint = if network == Enforcement::Unavailable {
                ", or allow the network with with_network(true)"
            } else {
                ""
            };
            CommandAdmission::Refused {
                reason: format!(
                    "OS isolation is required but this kernel cannot apply {missing}; \
                     to run commands without it, configure the sandbox with require_os_isolation(false){network_hint}"
                ),
            }
        } else {
            CommandAdmission::RunWithWarning { missing }
        }
    };
    status.policy = Some(PolicyIsolation {
        mode: policy.mode(),
        filesystem,
        network,
        signals,
        commands,
    });
    status
}

impl fmt::Display for IsolationStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
        if let Some(policy) = &self.policy {
            writeln!(f, "mode: {}", policy.mode)?;
            writeln!(
                f,
                "commands, filesystem writes outside the writable roots: {}",
                policy.filesystem
            )?;
            writeln!(f, "commands, network (TCP): {}", policy.network)?;
            writeln!(
                f,
                "commands, signals to outside processes: {}",
                policy.signals
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

    fn plan_for(policy: SandboxPolicy, kernel: KernelLandlock) -> PolicyIsolation {
        plan(&policy, &kernel).policy.unwrap()
    }

    #[test]
    fn a_kernel_without_landlock_refuses_commands_by_default() {
        let p = plan_for(
            SandboxPolicy::workspace_write("/ws"),
            KernelLandlock::Unavailable("no landlock here".into()),
        );
        assert_eq!(p.filesystem, Enforcement::Unavailable);
        assert_eq!(p.network, Enforcement::Unavailable);
        let CommandAdmission::Refused { reason } = p.commands else {
            panic!("expected a refusal, got {:?}", p.commands);
        };
        assert!(reason.contains("require_os_isolation(false)"), "{reason}");
        assert!(reason.contains("no landlock here"), "{reason}");
    }

    #[test]
    fn not_requiring_isolation_runs_with_a_warning() {
        let p = plan_for(
            SandboxPolicy::workspace_write("/ws").require_os_isolation(false),
            KernelLandlock::Unavailable("none".into()),
        );
        assert!(matches!(
            p.commands,
            CommandAdmission::RunWithWarning { .. }
        ));
    }

    #[test]
    fn an_old_abi_cannot_deny_tcp() {
        let p = plan_for(
            SandboxPolicy::read_only("/ws"),
            KernelLandlock::Available(3),
        );
        assert_eq!(p.filesystem, Enforcement::Partial);
        assert_eq!(p.network, Enforcement::Unavailable);
        assert_eq!(p.signals, Enforcement::Unavailable);
        assert!(matches!(p.commands, CommandAdmission::Refused { .. }));
        let p = plan_for(
            SandboxPolicy::read_only("/ws").with_network(true),
            KernelLandlock::Available(3),
        );
        assert_eq!(p.commands, CommandAdmission::Run);
    }

    #[test]
    fn full_access_with_network_needs_nothing() {
        let p = plan_for(
            SandboxPolicy::full_access("/ws"),
            KernelLandlock::Unavailable("none".into()),
        );
        assert_eq!(p.filesystem, Enforcement::NotRequested);
        assert_eq!(p.network, Enforcement::NotRequested);
        assert_eq!(p.signals, Enforcement::NotRequested);
        assert_eq!(p.commands, CommandAdmission::Run);
    }

    #[test]
    fn a_modern_kernel_enforces_everything() {
        let p = plan_for(
            SandboxPolicy::workspace_write("/ws"),
            KernelLandlock::Available(7),
        );
        assert_eq!(p.filesystem, Enforcement::Enforced);
        assert_eq!(p.network, Enforcement::Enforced);
        assert_eq!(p.commands, CommandAdmission::Run);
    }
}
