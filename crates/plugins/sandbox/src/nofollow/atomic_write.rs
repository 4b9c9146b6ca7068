//! Replacing a file atomically inside an open directory.

use std::ffi::OsStr;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat, renameat};
use nix::sys::stat::{Mode, fchmod, fstatat};
use nix::unistd::{UnlinkatFlags, fsync, unlinkat};
use tack_core::capability::EntryKind;

use super::dirfd::kind_of;

static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);

/// Why an atomic write failed.
#[derive(Debug)]
pub(crate) enum WriteFailure {
    /// The target is a directory.
    IsADirectory,
    /// The target is a symlink (it was one when resolved the path would have followed it).
    ChangedToSymlink,
    /// A system call failed.
    Errno(Errno),
    /// Writing the bytes failed.
    Io(std::io::Error),
}

impl From<Errno> for WriteFailure {
    fn from(e: Errno) -> Self {
        WriteFailure::Errno(e)
    }
}

/// Writes `contents` to a temporary file in `dir`, fsyncs it, renames it over
/// `name` and fsyncs `dir`. Returns whether `name` was created (did not exist).
/// A replaced file keeps its permission bits.
pub(crate) fn write_atomically(
    dir: &OwnedFd,
    name: &OsStr,
    contents: &[u8],
) -> Result<bool, WriteFailure> {
    let existing = match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(stat) => match kind_of(&stat) {
            EntryKind::Dir => return Err(WriteFailure::IsADirectory),
            EntryKind::Symlink => return Err(WriteFailure::ChangedToSymlink),
            _ => Some(Mode::from_bits_truncate(stat.st_mode & 0o7777)),
        },
        Err(Errno::ENOENT) => None,
        Err(e) => return Err(e.into()),
    };
    let temp = format!(
        ".tack-write-{}-{}.tmp",
        std::process::id(),
        NEXT_TEMP.fetch_add(1, Ordering::Relaxed)
    );
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = openat(dir, temp.as_str(), flags, Mode::from_bits_truncate(0o666))?;
    let written = fill(fd, existing, contents);
    let renamed =
        written.and_then(|()| renameat(dir, temp.as_str(), dir, name).map_err(WriteFailure::from));
    if let Err(e) = renamed {
        let _ = unlinkat(dir, temp.as_str(), UnlinkatFlags::NoRemoveDir);
        return Err(e);
    }
    fsync(dir)?;
    Ok(existing.is_none())
}

fn fill(fd: OwnedFd, mode: Option<Mode>, contents: &[u8]) -> Result<(), WriteFailure> {
    if let Some(mode) = mode {
        fchmod(&fd, mode)?;
    }
    let mut file = std::fs::File::from(fd);
    file.write_all(contents).map_err(WriteFailure::Io)?;
    file.sync_all().map_err(WriteFailure::Io)?;
    Ok(())
}
