//! # tack-sandbox
//!
//! The `fs` and `shell` capabilities of tack, confined to workspace roots.
//! Builtin tools do their I/O through these traits, so every tool is
//! confined without knowing it.
//!
//! * **Policy** ([`SandboxPolicy`]): a preset ([`SandboxMode`]: `read-only`,
//!   `workspace-write` (default), `full-access`), extra readable and writable
//!   roots, denied globs inside the roots, hidden paths, allowed Unix
//!   sockets, network on or off for commands,
//!   resource limits, and whether commands require OS isolation.
//! * **Filesystem**: every path is resolved like the kernel would (symlinks
//!   followed, `..` applied after them, the deepest existing ancestor of a
//!   new path resolved) and the canonical result must be inside a root.
//!   Refusals are
//!   [`CapabilityError::Refused`](tack_core::capability::CapabilityError::Refused)
//!   with the reason, e.g. `path resolves outside the workspace via symlink
//!   src/link -> /etc`.
//! * **Shell**: `/bin/bash -c` (else `/bin/sh -c`) in a confined working
//!   directory, with a scrubbed environment, resource limits, its own process
//!   group (killed as a whole on cancellation, timeout, or when the command
//!   ends), capped output, and two layers of OS isolation: bubblewrap's
//!   namespaces when installed (read-only root, private `/tmp`, new PID and
//!   network namespaces, nothing outlives the call or the host; built once
//!   and reused by command after command, each still on its own) and always
//!   a floor of dropped capabilities, `no_new_privs`, a seccomp filter and
//!   Landlock (the next command's thread prepared ahead). A per-call `pids`
//!   cgroup limits the process count, root included, where one can be made.
//! * **Status** ([`Sandbox::status`], [`probe_isolation`]): what the kernel
//!   offers and exactly what is applied, never more.
//!
//! ## What is guaranteed, and what is not
//!
//! *Filesystem capability.* After the check, each operation walks the
//! canonical path again from `/` with `openat(O_NOFOLLOW)`, one component at
//! a time, and works on the resulting directory descriptor (`openat`,
//! `renameat`, `unlinkat`, `mkdirat`). A component swapped for a symlink
//! between check and use makes the operation fail; it is never followed.
//! Not covered: a directory *renamed* inside the workspace between check and
//! use (the walk then reaches whatever now has that name, which is still
//! inside the workspace, since no symlink is followed), and hard links: a
//! hard link inside the workspace *is* the file, wherever its other names are.
//! Commands under Landlock cannot hard-link files from outside the writable
//! roots into them, but a link made before the sandbox existed, or by
//! another program, is followed.
//!
//! *Commands.* Commands may read and execute anything on the machine (the fs
//! capability may not) except the hidden paths ([`DEFAULT_HIDDEN`]: the
//! user's credentials and tack's state; on the floor not those inside a
//! root) and, inside bubblewrap, the host's `/tmp`, and may write only under
//! the writable roots, a private temp dir (workspace-write) and `/dev/null`.
//! Denied globs apply to the fs capability only. With the network off, no
//! TCP or UDP socket can be made (a new network namespace, or the seccomp
//! filter). No Unix socket can be created (`socketpair` aside) unless the
//! host allows one with [`SandboxPolicy::with_unix_socket`]. Root keeps
//! no capability. Without bubblewrap, `chmod`/`touch` on files the user owns
//! outside the workspace are not stopped; the cookbook's threat model lists
//! each case.
//!
//! ## Example
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use std::path::Path;
//! use tack_core::capability::{CommandRequest, CapabilityError};
//! use tack_sandbox::{Sandbox, SandboxPolicy};
//! use tokio_util::sync::CancellationToken;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let sandbox = Sandbox::new(
//!     SandboxPolicy::workspace_write(dir.path()).with_denied("**/.env"),
//! ).unwrap();
//!
//! // Writes land inside, escapes are refused with a reason.
//! sandbox.fs().write(Path::new("src/main.txt"), b"hello").await.unwrap();
//! let err = sandbox.fs().read(Path::new("/etc/passwd"), None).await.unwrap_err();
//! assert!(matches!(err, CapabilityError::Refused { .. }), "{err}");
//!
//! // Commands run in the workspace, if this kernel can confine them.
//! println!("{}", sandbox.status());
//! match sandbox.shell().run(CommandRequest::new("cat src/main.txt"), CancellationToken::new()).await {
//!     Ok(out) => assert_eq!(out.stdout, "hello"),
//!     Err(refused) => println!("{refused}"), // no Landlock on this kernel
//! }
//! # }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod fs;
mod isolation;
mod limits;
mod nofollow;
mod path;
mod plugin;
mod policy;
mod sandbox;
mod shell;
mod stale;
mod status;

pub use error::SandboxError;
pub use limits::ResourceLimits;
pub use path::{MAX_NAME_BYTES, MAX_PATH_BYTES};
pub use plugin::PLUGIN_NAME;
pub use policy::{
    DEFAULT_HIDDEN, DEFAULT_OUTPUT_LIMIT, DEFAULT_PROTECTED, Namespaces, ParseModeError,
    SandboxMode, SandboxPolicy,
};
pub use sandbox::Sandbox;
pub use shell::{ALLOWED_ENV, SECRET_SUFFIXES, is_secret_name};
pub use status::{
    CommandAdmission, Enforcement, IsolationStatus, PolicyIsolation, probe_isolation,
};
