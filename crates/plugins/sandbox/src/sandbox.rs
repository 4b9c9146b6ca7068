//! The sandbox: one policy, its confined capabilities and its status.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tack_core::capability::{FileSystem, Shell};

use crate::error::SandboxError;
use crate::fs::SandboxFs;
use crate::isolation::seccomp::{self, FilterSpec};
use crate::isolation::sockets::SOCKET_DIRS;
use crate::isolation::{BwrapPlan, KernelBwrap, LandlockRules, Launch};
use crate::path::Confinement;
use crate::policy::{SandboxMode, SandboxPolicy};
use crate::shell::{PrivateTempDir, SandboxShell, WarmPool, supervisor_script};
use crate::status::{
    Enforcement, IsolationStatus, Kernel, PolicyIsolation, kernel, plan, uses_bwrap,
};

/// Confined `fs` and `shell` capabilities built from a [`SandboxPolicy`].
/// Cheap to clone; clones share everything.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use std::path::Path;
/// use tack_core::capability::CapabilityError;
/// use tack_sandbox::{Sandbox, SandboxPolicy};
///
/// let dir = tempfile::tempdir().unwrap();
/// let sandbox = Sandbox::new(SandboxPolicy::workspace_write(dir.path())).unwrap();
/// let fs = sandbox.fs();
///
/// let created = fs.write(Path::new("notes/hello.txt"), b"hi").await.unwrap();
/// assert!(created);
/// assert_eq!(fs.read_to_string(Path::new("notes/hello.txt")).await.unwrap(), "hi");
///
/// let escape = fs.read(Path::new("../../etc/passwd"), None).await.unwrap_err();
/// assert!(matches!(escape, CapabilityError::Refused { .. }));
/// # }
/// ```
#[derive(Clone)]
pub struct Sandbox {
    inner: Arc<Inner>,
}

struct Inner {
    policy: SandboxPolicy,
    fs: Arc<SandboxFs>,
    shell: Arc<SandboxShell>,
    status: IsolationStatus,
}

impl fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sandbox")
            .field("policy", &self.inner.policy)
            .field("status", &self.inner.status)
            .finish_non_exhaustive()
    }
}

impl Sandbox {
    /// Builds the sandbox: canonicalizes the roots, compiles the denied
    /// globs, probes the kernel (once per process) and decides what commands
    /// run with.
    ///
    /// # Errors
    ///
    /// [`SandboxError`] for a missing, unreadable or non-directory root, an
    /// invalid glob, or a private temp dir that cannot be created.
    pub fn new(policy: SandboxPolicy) -> Result<Sandbox, SandboxError> {
        let confinement = Arc::new(Confinement::new(&policy)?);
        let kernel = kernel();
        let status = plan(&policy, kernel);
        let applied = status
            .policy
            .as_ref()
            .expect("plan always describes the policy it was given");
        let tmpdir = if policy.mode() == SandboxMode::WorkspaceWrite {
            Some(Arc::new(PrivateTempDir::create()?))
        } else {
            None
        };
        let launch = launch(&policy, kernel, applied, &confinement, tmpdir.as_deref())?;
        let on_floor = matches!(launch, Launch::Floor { .. });
        if applied.protected == Enforcement::Unavailable {
            tracing::warn!(
                protected = ?policy.protected(),
                "commands run without bubblewrap: existing protected paths are read-only to the file tools only (what a command changes in them is put back, and a protected entry it creates removed, when it ends)"
            );
        }
        let wrapper = policy.limits().wrapper_script(&kernel.shell, true);
        let shell = SandboxShell {
            confinement: confinement.clone(),
            policy: policy.clone(),
            admission: applied.commands.clone(),
            launch,
            tmpdir,
            supervisor: supervisor_script(
                &kernel.shell,
                &wrapper,
                &policy.limits().wrapper_script(&kernel.shell, false),
                on_floor,
            ),
            wrapper,
            shell: kernel.shell.clone(),
            unix_refused: applied.unix_sockets == Enforcement::Enforced,
            warm: WarmPool::default(),
        };
        Ok(Sandbox {
            inner: Arc::new(Inner {
                fs: Arc::new(SandboxFs::new(confinement)),
                shell: Arc::new(shell),
                policy,
                status,
            }),
        })
    }

    /// The policy it was built from.
    pub fn policy(&self) -> &SandboxPolicy {
        &self.inner.policy
    }

    /// The canonical workspace root.
    pub fn workspace_root(&self) -> &Path {
        self.inner.fs.workspace_root()
    }

    /// The confined filesystem capability.
    pub fn fs(&self) -> Arc<dyn FileSystem> {
        self.inner.fs.clone()
    }

    /// The confined shell capability.
    pub fn shell(&self) -> Arc<dyn Shell> {
        self.inner.shell.clone()
    }

    /// What the kernel offers and what this sandbox applies to commands.
    pub fn status(&self) -> IsolationStatus {
        self.inner.status.clone()
    }
}

/// How commands of `policy` start on `kernel`, given what the plan applies.
fn launch(
    policy: &SandboxPolicy,
    kernel: &Kernel,
    applied: &PolicyIsolation,
    confinement: &Confinement,
    tmpdir: Option<&PrivateTempDir>,
) -> Result<Launch, SandboxError> {
    let applies = |e: Enforcement| matches!(e, Enforcement::Enforced | Enforcement::Partial);
    let full_access = policy.mode() == SandboxMode::FullAccess;
    let unix = full_access || !policy.unix_sockets().is_empty();
    let spec = FilterSpec {
        network: policy.network_allowed(),
        unix,
        floor: !full_access,
        deny_metadata: policy.mode() == SandboxMode::ReadOnly && !uses_bwrap(policy, kernel),
        deny_setsid: !full_access && !uses_bwrap(policy, kernel),
        group: None,
    };
    let programs = if applies(applied.seccomp) {
        Some(seccomp::compile(spec).map_err(|message| SandboxError::Isolation { message })?)
    } else {
        None
    };
    if let (true, KernelBwrap::Available { path, .. }) = (uses_bwrap(policy, kernel), &kernel.bwrap)
    {
        let mut writable = Vec::new();
        if policy.mode() == SandboxMode::WorkspaceWrite {
            writable = confinement.writable_roots();
            writable.extend(tmpdir.map(|t| t.path().to_path_buf()));
        }
        let readable = confinement
            .all_roots()
            .into_iter()
            .filter(|root| !writable.contains(root))
            .collect();
        return Ok(Launch::Bwrap {
            plan: BwrapPlan {
                path: path.clone(),
                readable,
                writable,
                unshare_net: !policy.network_allowed(),
                read_only: policy.mode() == SandboxMode::ReadOnly,
                tmpfs_bytes: policy.limits().tmpfs_bytes,
                hidden: confinement.hidden(),
                unix_sockets: (unix || !applies(applied.seccomp))
                    .then(|| policy.unix_sockets().to_vec()),
                socket_dirs: SOCKET_DIRS.iter().map(PathBuf::from).collect(),
            },
            seccomp: Arc::new(
                programs
                    .unwrap_or_default()
                    .iter()
                    .map(seccomp::to_bytes)
                    .collect(),
            ),
            processes: policy.limits().processes,
        });
    }
    let landlock = (applies(applied.filesystem) || applies(applied.network))
        .then(|| LandlockRules {
            writable: applies(applied.filesystem).then(|| {
                let mut writable = confinement.writable_roots();
                writable.extend(tmpdir.map(|t| t.path().to_path_buf()));
                writable
            }),
            deny_tcp: applies(applied.network),
            hidden: confinement.hidden_outside_roots(),
        })
        .filter(|_| kernel.landlock_abi().is_some());
    if full_access && landlock.is_none() && programs.is_none() {
        return Ok(Launch::Plain);
    }
    Ok(Launch::Floor {
        drop_capabilities: !full_access,
        landlock,
        // Compiled again for each command, with its process group.
        seccomp: programs.is_some().then_some(spec),
        watchdog: !full_access,
        ready: Arc::default(),
        processes: policy.limits().processes.filter(|_| !full_access),
    })
}
