//! What a sandbox leaves on the machine (its private temp dirs, its
//! process-count cgroups) is named `tack-sandbox-<pid>-<n>`, after the host
//! that made it: a host killed by `SIGKILL` cannot remove its own, and the
//! next sandbox removes those whose host is gone.

use std::ffi::OsStr;

/// The name for the `n`th thing this host leaves.
pub(crate) fn name(n: u64) -> String {
    format!("tack-sandbox-{}-{n}", std::process::id())
}

/// Whether `name` is one of those names and its host is gone (a pid reused
/// by another process keeps it until that process is gone too).
pub(crate) fn left_by_gone_host(name: &OsStr) -> bool {
    let Some(pid) = name
        .to_str()
        .and_then(|n| n.strip_prefix("tack-sandbox-"))
        .and_then(|rest| rest.split_once('-'))
        .and_then(|(pid, n)| n.parse::<u64>().ok().and(pid.parse::<i32>().ok()))
    else {
        return false;
    };
    pid > 0
        && matches!(
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
            Err(nix::errno::Errno::ESRCH)
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_names_of_gone_hosts() {
        assert!(!left_by_gone_host(OsStr::new(&name(3))));
        assert!(!left_by_gone_host(OsStr::new("tack-sandbox-x-1")));
        assert!(!left_by_gone_host(OsStr::new("other-1-2")));
        // No process has pid 2^22 + 1 (above the kernel's pid limit).
        assert!(left_by_gone_host(OsStr::new("tack-sandbox-4194305-0")));
    }
}
