//! The protected entries a command created, removed once its processes are
//! gone, and, where nothing kept the existing ones read-only (the floor),
//! what it changed inside them put back (see the crate's protected paths).

use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::killpg;
use nix::unistd::Pid;

use crate::path::{Confinement, Kept, ProtectedScan, describe_removed, describe_undone};

/// How long to wait for the processes of a killed group to be gone before
/// sweeping anyway.
const SETTLE_LIMIT: Duration = Duration::from_secs(2);

/// Whether a process of group `group` is still running (a zombie is not):
/// nothing of the group can create a file any more once this is false.
fn group_running(group: i32) -> bool {
    if killpg(Pid::from_raw(group), None).is_err() {
        return false;
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    dir.flatten().any(|entry| {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            return false;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            return false;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let pgrp = fields.nth(1).and_then(|g| g.parse::<i32>().ok());
        pgrp == Some(group) && !matches!(state, Some("Z" | "X"))
    })
}

/// Waits (bounded) until no process of `group` runs.
fn settle(group: Option<i32>) {
    let Some(group) = group else { return };
    let started = Instant::now();
    while group_running(group) {
        if started.elapsed() > SETTLE_LIMIT {
            tracing::warn!(
                group,
                "processes of a finished command still run; sweeping its protected paths anyway"
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Removes the protected entries created since `before` once `group` is
/// gone, puts back what changed inside the ones `kept` recorded, and says
/// what it did.
fn sweep(
    confinement: &Confinement,
    before: &ProtectedScan,
    kept: Option<&Kept>,
    group: Option<i32>,
) -> String {
    settle(group);
    let swept = confinement.sweep_protected(before);
    let mut note = describe_removed(&swept.removed, |p| confinement.display(p));
    if let Some(kept) = kept {
        let undone = confinement.put_back_protected(kept, &swept.moved);
        note.push_str(&describe_undone(&undone, |p| confinement.display(p)));
    }
    note
}

/// The protected entries present when a command started. Finishing it
/// (or dropping it, for a run that was abandoned) removes what the command
/// created among them.
pub(crate) struct SweepGuard {
    confinement: Arc<Confinement>,
    before: Option<ProtectedScan>,
    /// What the existing entries held, where the command can write them.
    kept: Option<Kept>,
    group: Option<i32>,
}

impl SweepGuard {
    /// Scans the protected entries now (off the async threads); with
    /// `keep`, for a command that nothing stops from writing the existing
    /// ones, records what they hold too.
    pub(crate) async fn start(confinement: Arc<Confinement>, keep: bool) -> Self {
        let scanning = confinement.clone();
        let (before, kept) = tokio::task::spawn_blocking(move || {
            let before = scanning.scan_protected();
            let kept = keep.then(|| scanning.keep_protected(&before));
            (before, kept.filter(|k| !k.is_empty()))
        })
        .await
        .unwrap_or_default();
        Self {
            confinement,
            before: Some(before),
            kept,
            group: None,
        }
    }

    /// A guard with nothing to sweep (what is left where one was taken).
    pub(crate) fn empty(confinement: Arc<Confinement>) -> Self {
        Self {
            confinement,
            before: None,
            kept: None,
            group: None,
        }
    }

    /// The existing protected entries to mount read-only.
    pub(crate) fn mountable(&self) -> Vec<std::path::PathBuf> {
        self.before
            .as_ref()
            .map(ProtectedScan::mountable)
            .unwrap_or_default()
    }

    /// The process group whose end the sweep waits for.
    pub(crate) fn watch(&mut self, group: Option<i32>) {
        self.group = group;
    }

    /// Sweeps after the command's group was killed; the note for its output
    /// (empty when it created nothing protected).
    pub(crate) async fn finish(mut self) -> String {
        let Some(before) = self.before.take() else {
            return String::new();
        };
        let confinement = self.confinement.clone();
        let kept = self.kept.take();
        let group = self.group;
        tokio::task::spawn_blocking(move || sweep(&confinement, &before, kept.as_ref(), group))
            .await
            .unwrap_or_else(|e| format!("tack: the check for protected paths failed: {e}\n"))
    }
}

impl Drop for SweepGuard {
    fn drop(&mut self) {
        // An abandoned run (a timeout dropped it): sweep on a thread of its
        // own once the group, killed as the run is dropped, is gone.
        if let Some(before) = self.before.take() {
            let confinement = self.confinement.clone();
            let kept = self.kept.take();
            let group = self.group;
            let spawned = std::thread::Builder::new()
                .name("tack-sandbox-sweep".to_owned())
                .spawn(move || {
                    let note = sweep(&confinement, &before, kept.as_ref(), group);
                    if !note.is_empty() {
                        tracing::warn!(%note, "an abandoned command created or changed protected paths");
                    }
                });
            if let Err(e) = spawned {
                tracing::error!(%e, "could not start the sweep of protected paths");
            }
        }
    }
}
