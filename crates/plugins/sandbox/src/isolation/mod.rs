//! OS isolation for commands: Landlock, applied without `unsafe`.
//!
//! `landlock_restrict_self` restricts the calling *thread*, and processes
//! inherit the restriction of the thread that spawned them. So each confined
//! command is spawned from a dedicated, short-lived thread that restricts
//! itself first; the runtime's other threads are never restricted.

pub(crate) mod landlock;

use ::landlock::RulesetStatus;
use tack_core::capability::ShellError;
use tokio::process::{Child, Command};

pub(crate) use self::landlock::{KernelLandlock, LandlockRules};

fn spawn_error(e: std::io::Error) -> ShellError {
    ShellError::Spawn {
        message: format!("/bin/sh: {e}"),
    }
}

/// Spawns `command`, under `rules` when given. With `required`, a command
/// the kernel could not restrict is not started.
pub(crate) async fn spawn_confined(
    mut command: Command,
    rules: Option<LandlockRules>,
    required: bool,
) -> Result<Child, ShellError> {
    let Some(rules) = rules else {
        return command.spawn().map_err(spawn_error);
    };
    let runtime = tokio::runtime::Handle::current();
    let (send, receive) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("tack-sandbox-spawn".to_owned())
        .spawn(move || {
            let confined = match self::landlock::restrict_current_thread(&rules) {
                Ok(status) if status.ruleset != RulesetStatus::NotEnforced => Ok(()),
                Ok(_) => Err("the kernel enforced none of the Landlock rules".to_owned()),
                Err(e) => Err(format!("Landlock could not be applied: {e}")),
            };
            let result = match confined {
                Err(reason) if required => Err(ShellError::Refused {
                    reason: format!(
                        "{reason}; the command was not started (set require_os_isolation(false) to run commands unconfined)"
                    ),
                }),
                other => {
                    if let Err(reason) = other {
                        tracing::warn!(%reason, "running a command WITHOUT OS isolation");
                    }
                    let _runtime = runtime.enter();
                    command.spawn().map_err(spawn_error)
                }
            };
            // The receiver is gone only if the caller stopped waiting: kill
            // whatever the command started already.
            if let Err(Ok(child)) = send.send(result) {
                if let Some(group) = child.id().and_then(|id| i32::try_from(id).ok()) {
                    let _ = nix::sys::signal::killpg(
                        nix::unistd::Pid::from_raw(group),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
            }
        })
        .map_err(|e| ShellError::Spawn {
            message: format!("could not start the spawning thread: {e}"),
        })?;
    receive.await.map_err(|_| ShellError::Spawn {
        message: "the spawning thread ended without a result".to_owned(),
    })?
}
