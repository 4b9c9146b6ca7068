//! Removing files and directory trees through directory descriptors.

use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;

use nix::dir::Dir;
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat};
use nix::sys::stat::{Mode, fstatat};
use nix::unistd::{UnlinkatFlags, unlinkat};
use tack_core::capability::EntryKind;

use super::dirfd::kind_of;

/// The names in an open directory, without `.` and `..`.
pub(crate) fn entry_names(dir: &OwnedFd) -> Result<Vec<OsString>, Errno> {
    let mut listing = Dir::from_fd(
        dir.try_clone()
            .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(0)))?,
    )?;
    let mut names = Vec::new();
    for entry in listing.iter() {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name != "." && name != ".." {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

/// Removes `name` in `parent`: a file or symlink (never followed), or a
/// directory, with its contents when `recursive`.
pub(crate) fn remove_entry(parent: &OwnedFd, name: &OsStr, recursive: bool) -> Result<(), Errno> {
    let stat = fstatat(parent, name, AtFlags::AT_SYMLINK_NOFOLLOW)?;
    if kind_of(&stat) != EntryKind::Dir {
        return unlinkat(parent, name, UnlinkatFlags::NoRemoveDir);
    }
    if recursive {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let dir = openat(parent, name, flags, Mode::empty())?;
        for child in entry_names(&dir)? {
            remove_entry(&dir, &child, true)?;
        }
    }
    unlinkat(parent, name, UnlinkatFlags::RemoveDir)
}
