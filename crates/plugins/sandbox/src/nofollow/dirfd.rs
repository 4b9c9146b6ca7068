//! Opening canonical paths one component at a time, never following a symlink.
//!
//! The confinement check runs on a path; the operation then walks that same
//! canonical path from `/` with `openat(O_NOFOLLOW)`. A component swapped for
//! a symlink between the check and the walk makes the walk fail (`ELOOP`)
//! instead of being followed out of the workspace.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, open, openat};
use nix::sys::stat::{FileStat, Mode, SFlag, fstatat, mkdirat};
use tack_core::capability::{CapabilityError, EntryKind};

/// Flags for opening a directory of the walk.
fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

/// Opens the directory at canonical `path`. Missing directories are created
/// when they are below `create_below` (a root known to exist).
pub(crate) fn open_dir(path: &Path, create_below: Option<&Path>) -> Result<OwnedFd, Errno> {
    let mut fd = open(
        "/",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    let mut walked = std::path::PathBuf::from("/");
    for component in path.components() {
        let name = match component {
            Component::RootDir => continue,
            Component::Normal(name) => name,
            // Canonical paths have no `.`, `..` or prefixes.
            _ => return Err(Errno::EINVAL),
        };
        walked.push(name);
        let next = match openat(&fd, name, dir_flags(), Mode::empty()) {
            Err(Errno::ENOENT) if create_below.is_some_and(|root| walked.starts_with(root)) => {
                match mkdirat(&fd, name, Mode::from_bits_truncate(0o777)) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(e) => return Err(e),
                }
                openat(&fd, name, dir_flags(), Mode::empty())?
            }
            // `O_DIRECTORY | O_NOFOLLOW` on a symlink fails with ENOTDIR: say
            // what really happened.
            Err(Errno::ENOTDIR) => return Err(not_a_directory_or_loop(&fd, name)),
            other => other?,
        };
        fd = next;
    }
    Ok(fd)
}

/// `ELOOP` when `name` in `dir` is a symlink, else `ENOTDIR`.
fn not_a_directory_or_loop(dir: &OwnedFd, name: &OsStr) -> Errno {
    match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(stat) if kind_of(&stat) == EntryKind::Symlink => Errno::ELOOP,
        _ => Errno::ENOTDIR,
    }
}

/// Opens the parent directory of canonical `path` and returns it with the
/// final name; `None` for `/`, which has no parent.
pub(crate) fn open_parent<'p>(
    path: &'p Path,
    create_below: Option<&Path>,
) -> Result<Option<(OwnedFd, &'p OsStr)>, Errno> {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => Ok(Some((open_dir(parent, create_below)?, name))),
        _ => Ok(None),
    }
}

/// What a `stat` says a path is.
pub(crate) fn kind_of(stat: &FileStat) -> EntryKind {
    let format = SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits());
    if format == SFlag::S_IFREG {
        EntryKind::File
    } else if format == SFlag::S_IFDIR {
        EntryKind::Dir
    } else if format == SFlag::S_IFLNK {
        EntryKind::Symlink
    } else {
        EntryKind::Other
    }
}

/// An `errno` from an operation on `given`, as a typed error.
pub(crate) fn fs_error(given: &Path, errno: Errno) -> CapabilityError {
    let path = given.display().to_string();
    match errno {
        Errno::ENOENT => CapabilityError::NotFound { path },
        Errno::EISDIR => CapabilityError::IsADirectory { path },
        Errno::ENOTDIR => CapabilityError::NotADirectory { path },
        Errno::EEXIST => CapabilityError::AlreadyExists { path },
        Errno::ELOOP => CapabilityError::Refused {
            path,
            reason: "a component of the path was replaced by a symbolic link while it was being opened; \
                     the sandbox does not follow it (try again)"
                .to_owned(),
        },
        other => CapabilityError::Io {
            path,
            message: other.desc().to_owned(),
        },
    }
}
