//! Landlock rulesets: probing the kernel and restricting the spawning thread.

use std::path::PathBuf;

use super::carve::readable_around;
use landlock::{
    ABI, Access, AccessFs, AccessNet, LandlockStatus, RestrictionStatus, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetError, Scope, path_beneath_rules,
};

/// The newest Landlock ABI whose rights the sandbox asks for (ABI 5 adds
/// `IOCTL_DEV`; later ABIs add no filesystem or TCP rights it uses).
const TARGET_ABI: ABI = ABI::V5;

/// What the kernel offers, probed once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum KernelLandlock {
    /// Landlock works; the kernel's ABI version.
    Available(u32),
    /// Landlock cannot be used, and why.
    Unavailable(String),
}

/// Restrictions for a command's process tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LandlockRules {
    /// Directories the command may write (everything stays readable and
    /// executable). `None` leaves the filesystem unrestricted.
    pub(crate) writable: Option<Vec<PathBuf>>,
    /// Deny TCP bind and connect.
    pub(crate) deny_tcp: bool,
    /// Paths the command may not read, list or execute (with `writable`):
    /// read is granted around them (see [`readable_around`]), computed when
    /// each command starts.
    pub(crate) hidden: Vec<PathBuf>,
}

fn abi_number(abi: ABI) -> u32 {
    abi.to_string().parse().unwrap_or(0)
}

/// Asks the kernel which Landlock ABI it supports, by restricting a
/// throwaway thread (which then ends) with a minimal ruleset.
pub(crate) fn probe() -> KernelLandlock {
    let probe = std::thread::Builder::new()
        .name("tack-landlock-probe".to_owned())
        .spawn(|| -> Result<LandlockStatus, RulesetError> {
            let status = Ruleset::default()
                .handle_access(AccessFs::Execute)?
                .create()?
                .restrict_self()?;
            Ok(status.landlock)
        });
    let status = match probe.map(std::thread::JoinHandle::join) {
        Ok(Ok(Ok(status))) => status,
        Ok(Ok(Err(e))) => {
            return KernelLandlock::Unavailable(format!("Landlock failed its probe: {e}"));
        }
        Ok(Err(_)) => return KernelLandlock::Unavailable("the Landlock probe panicked".to_owned()),
        Err(e) => {
            return KernelLandlock::Unavailable(format!("could not start the Landlock probe: {e}"));
        }
    };
    match status {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => KernelLandlock::Available(
            kernel_abi
                .and_then(|v| u32::try_from(v).ok())
                .unwrap_or_else(|| abi_number(effective_abi)),
        ),
        LandlockStatus::NotEnabled => KernelLandlock::Unavailable(
            "the kernel has Landlock but it is not enabled (add `landlock` to the `lsm=` boot parameter)"
                .to_owned(),
        ),
        LandlockStatus::NotImplemented => KernelLandlock::Unavailable(
            "the kernel has no Landlock (it needs Linux 5.13+ built with CONFIG_SECURITY_LANDLOCK)"
                .to_owned(),
        ),
    }
}

/// Restricts the calling thread, and every process it spawns from now on,
/// to `rules`. Call it only on a dedicated thread that ends afterwards.
pub(crate) fn restrict_current_thread(
    rules: &LandlockRules,
) -> Result<RestrictionStatus, RulesetError> {
    let mut ruleset = Ruleset::default();
    if rules.writable.is_some() {
        ruleset = ruleset.handle_access(AccessFs::from_all(TARGET_ABI))?;
    }
    if rules.deny_tcp {
        ruleset = ruleset.handle_access(AccessNet::from_all(TARGET_ABI))?;
    }
    // No signals to processes outside the sandbox (the host included), and
    // no connecting to abstract Unix sockets made outside it; silently
    // absent before ABI 6, which the status reports.
    ruleset = ruleset
        .scope(Scope::Signal)?
        .scope(Scope::AbstractUnixSocket)?;
    let mut created = ruleset.create()?;
    if let Some(writable) = &rules.writable {
        created = created.add_rules(path_beneath_rules(
            readable_around(&rules.hidden),
            AccessFs::from_read(TARGET_ABI),
        ))?;
        let mut paths = writable.clone();
        paths.push(PathBuf::from("/dev/null"));
        // Every right but making device nodes: a character or block device
        // made inside the workspace would reach the kernel's devices.
        let write = AccessFs::from_all(TARGET_ABI) & !(AccessFs::MakeChar | AccessFs::MakeBlock);
        created = created.add_rules(path_beneath_rules(paths, write))?;
    }
    created.restrict_self()
}
