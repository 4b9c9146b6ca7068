//! The confined filesystem capability.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat};
use nix::sys::stat::{FileStat, Mode, fstat, fstatat};
use tack_core::capability::{Access, CapabilityError, EntryKind, FileBytes, FileSystem, Metadata};

use crate::nofollow::atomic_write::{WriteFailure, write_atomically};
use crate::nofollow::dirfd::{fs_error, kind_of, open_dir, open_parent};
use crate::nofollow::remove::{entry_names, remove_entry};
use crate::path::{Confinement, Resolved};

/// [`FileSystem`] confined by a sandbox policy. Obtained from
/// [`Sandbox::fs`](crate::Sandbox::fs).
#[derive(Debug)]
pub(crate) struct SandboxFs {
    confinement: Arc<Confinement>,
}

impl SandboxFs {
    pub(crate) fn new(confinement: Arc<Confinement>) -> Self {
        Self { confinement }
    }
}

/// Runs blocking filesystem work off the async runtime.
async fn blocking<T: Send + 'static>(
    given: &Path,
    work: impl FnOnce() -> Result<T, CapabilityError> + Send + 'static,
) -> Result<T, CapabilityError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| CapabilityError::Io {
            path: given.display().to_string(),
            message: format!("the filesystem task did not finish: {e}"),
        })?
}

fn not_found_unless_exists(given: &Path, resolved: &Resolved) -> Result<(), CapabilityError> {
    if resolved.exists {
        Ok(())
    } else {
        Err(CapabilityError::NotFound {
            path: given.display().to_string(),
        })
    }
}

fn stat_time(stat: &FileStat) -> Option<SystemTime> {
    let secs = u64::try_from(stat.st_mtime).ok()?;
    let nanos = u32::try_from(stat.st_mtime_nsec).unwrap_or(0);
    SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
}

fn size_of(stat: &FileStat) -> u64 {
    u64::try_from(stat.st_size).unwrap_or(0)
}

/// `stat` of a canonical path without following a final symlink.
fn stat_nofollow(path: &Path) -> Result<FileStat, Errno> {
    match open_parent(path, None)? {
        Some((parent, name)) => fstatat(&parent, name, AtFlags::AT_SYMLINK_NOFOLLOW),
        None => fstat(open_dir(path, None)?),
    }
}

/// Opens the regular file at canonical `path` for reading, through the
/// `O_NOFOLLOW` walk, and returns it with its size.
fn open_regular(given: &Path, path: &Path) -> Result<(std::fs::File, u64), CapabilityError> {
    let errno = |e| fs_error(given, e);
    let Some((parent, name)) = open_parent(path, None).map_err(errno)? else {
        return Err(CapabilityError::IsADirectory {
            path: given.display().to_string(),
        });
    };
    // O_NONBLOCK: opening a FIFO must not hang; regular files ignore it.
    let flags = OFlag::O_RDONLY
        | OFlag::O_NOFOLLOW
        | OFlag::O_CLOEXEC
        | OFlag::O_NONBLOCK
        | OFlag::O_NOCTTY;
    let fd = openat(&parent, name, flags, Mode::empty()).map_err(errno)?;
    let stat = fstat(&fd).map_err(errno)?;
    match kind_of(&stat) {
        EntryKind::File => {}
        EntryKind::Dir => {
            return Err(CapabilityError::IsADirectory {
                path: given.display().to_string(),
            });
        }
        _ => {
            return Err(CapabilityError::Refused {
                path: given.display().to_string(),
                reason: "not a regular file (a device, FIFO or socket): the sandbox reads only regular files".to_owned(),
            });
        }
    }
    Ok((std::fs::File::from(fd), size_of(&stat)))
}

fn io_error(given: &Path, e: &std::io::Error) -> CapabilityError {
    CapabilityError::Io {
        path: given.display().to_string(),
        message: e.to_string(),
    }
}

fn read_file(given: &Path, path: &Path, limit: Option<u64>) -> Result<FileBytes, CapabilityError> {
    let (file, total_size) = open_regular(given, path)?;
    let mut bytes = Vec::new();
    file.take(limit.unwrap_or(u64::MAX))
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(given, &e))?;
    let truncated = limit.is_some_and(|limit| total_size > limit);
    Ok(FileBytes::new(bytes, total_size, truncated))
}

/// Reads at most `limit` bytes from byte `offset` on: the file is opened as
/// [`read_file`] opens it, then seeked, so only the range is read.
fn read_file_at(
    given: &Path,
    path: &Path,
    offset: u64,
    limit: u64,
) -> Result<FileBytes, CapabilityError> {
    let (mut file, total_size) = open_regular(given, path)?;
    if offset >= total_size {
        // Past the end: empty. (Seeking there could fail: `lseek` takes an `i64`.)
        return Ok(FileBytes::new(Vec::new(), total_size, false));
    }
    let remaining = total_size - offset;
    // The size is only a hint for the buffer: the file may change meanwhile.
    let mut bytes = Vec::with_capacity(usize::try_from(limit.min(remaining)).unwrap_or(0));
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| io_error(given, &e))?;
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(given, &e))?;
    let truncated = total_size > offset.saturating_add(bytes.len() as u64);
    Ok(FileBytes::new(bytes, total_size, truncated))
}

fn write_file(
    confinement: &Confinement,
    given: &Path,
    resolved: &Resolved,
    contents: &[u8],
) -> Result<bool, CapabilityError> {
    let errno = |e| fs_error(given, e);
    let below = confinement.create_below(&resolved.path);
    let Some((dir, name)) = open_parent(&resolved.path, below).map_err(errno)? else {
        return Err(CapabilityError::IsADirectory {
            path: given.display().to_string(),
        });
    };
    write_atomically(&dir, name, contents).map_err(|failure| match failure {
        WriteFailure::IsADirectory => CapabilityError::IsADirectory {
            path: given.display().to_string(),
        },
        WriteFailure::ChangedToSymlink => fs_error(given, Errno::ELOOP),
        WriteFailure::Errno(e) => fs_error(given, e),
        WriteFailure::Io(e) => CapabilityError::Io {
            path: given.display().to_string(),
            message: e.to_string(),
        },
    })
}

/// The entries of the directory at canonical `path`, each described from
/// the `lstat` the listing makes anyway, and `writable` from the policy: a
/// check of the entry's canonical path (no system call), except for a
/// symbolic link, whose target is resolved first (a write follows it).
fn list_dir(
    confinement: &Confinement,
    given: &Path,
    path: &Path,
) -> Result<Vec<Metadata>, CapabilityError> {
    let errno = |e| fs_error(given, e);
    let dir = open_dir(path, None).map_err(errno)?;
    let mut entries = Vec::new();
    // The entry's canonical path, one buffer for every entry.
    let mut entry_path = path.to_path_buf();
    for name in entry_names(&dir).map_err(errno)? {
        let stat = match fstatat(&dir, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            // Removed between listing and stat: it is no longer an entry.
            Err(Errno::ENOENT) => continue,
            Err(e) => return Err(errno(e)),
        };
        entry_path.push(&name);
        let kind = kind_of(&stat);
        let writable = if kind == EntryKind::Symlink {
            confinement.check(&entry_path, Access::Write).is_ok()
        } else {
            confinement.allows(&entry_path, Access::Write)
        };
        entry_path.pop();
        entries.push(describe(name.to_string_lossy(), &stat, writable));
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

/// The metadata `stat` says, named `name` (directories have size 0).
fn describe(name: impl Into<String>, stat: &FileStat, writable: bool) -> Metadata {
    let kind = kind_of(stat);
    let size = if kind == EntryKind::Dir {
        0
    } else {
        size_of(stat)
    };
    let meta = Metadata::new(name, kind, size).with_writable(writable);
    match stat_time(stat) {
        Some(modified) => meta.with_modified(modified),
        None => meta,
    }
}

#[async_trait]
impl FileSystem for SandboxFs {
    fn workspace_root(&self) -> &Path {
        self.confinement.workspace()
    }

    fn resolve(&self, path: &Path, access: Access) -> Result<PathBuf, CapabilityError> {
        self.confinement.check(path, access).map(|r| r.path)
    }

    async fn read(&self, path: &Path, limit: Option<u64>) -> Result<FileBytes, CapabilityError> {
        let resolved = self.confinement.check(path, Access::Read)?;
        not_found_unless_exists(path, &resolved)?;
        let given = path.to_owned();
        blocking(path, move || read_file(&given, &resolved.path, limit)).await
    }

    async fn read_at(
        &self,
        path: &Path,
        offset: u64,
        limit: u64,
    ) -> Result<FileBytes, CapabilityError> {
        let resolved = self.confinement.check(path, Access::Read)?;
        not_found_unless_exists(path, &resolved)?;
        let given = path.to_owned();
        blocking(path, move || {
            read_file_at(&given, &resolved.path, offset, limit)
        })
        .await
    }

    async fn write(&self, path: &Path, contents: &[u8]) -> Result<bool, CapabilityError> {
        let resolved = self.confinement.check(path, Access::Write)?;
        let (given, contents) = (path.to_owned(), contents.to_vec());
        let confinement = self.confinement.clone();
        blocking(path, move || {
            write_file(&confinement, &given, &resolved, &contents)
        })
        .await
    }

    async fn list(&self, path: &Path) -> Result<Vec<Metadata>, CapabilityError> {
        let resolved = self.confinement.check(path, Access::Read)?;
        not_found_unless_exists(path, &resolved)?;
        let confinement = self.confinement.clone();
        let given = path.to_owned();
        blocking(path, move || list_dir(&confinement, &given, &resolved.path)).await
    }

    async fn metadata(&self, path: &Path) -> Result<Metadata, CapabilityError> {
        let resolved = self.confinement.check(path, Access::Read)?;
        not_found_unless_exists(path, &resolved)?;
        let writable = self
            .confinement
            .check_resolved(path, &resolved, Access::Write)
            .is_ok();
        let given = path.to_owned();
        blocking(path, move || {
            let stat = stat_nofollow(&resolved.path).map_err(|e| fs_error(&given, e))?;
            let name = given.file_name().unwrap_or_default().to_string_lossy();
            Ok(describe(name, &stat, writable))
        })
        .await
    }

    async fn create_dir_all(&self, path: &Path) -> Result<(), CapabilityError> {
        let resolved = self.confinement.check(path, Access::Write)?;
        let confinement = self.confinement.clone();
        let given = path.to_owned();
        blocking(path, move || {
            let below = confinement.create_below(&resolved.path);
            open_dir(&resolved.path, below)
                .map(drop)
                .map_err(|e| fs_error(&given, e))
        })
        .await
    }

    async fn remove(&self, path: &Path, recursive: bool) -> Result<(), CapabilityError> {
        let resolved = self.confinement.check_entry(path, Access::Write)?;
        not_found_unless_exists(path, &resolved)?;
        if self.confinement.is_root(&resolved.path) {
            return Err(CapabilityError::Refused {
                path: path.display().to_string(),
                reason: "it is a sandbox root: the sandbox never removes its own roots".to_owned(),
            });
        }
        if recursive {
            if let Some((found, entry)) = self.confinement.hidden_inside(&resolved.path) {
                return Err(CapabilityError::Refused {
                    path: path.display().to_string(),
                    reason: format!(
                        "removing it recursively would remove the hidden path {} (`{entry}`); \
                         remove the other entries one by one, or lift the hiding with \
                         SandboxPolicy::without_hidden(\"{entry}\")",
                        self.confinement.display(&found)
                    ),
                });
            }
            if let Some((found, entry)) = self.confinement.protected_inside(&resolved.path) {
                return Err(CapabilityError::Refused {
                    path: path.display().to_string(),
                    reason: format!(
                        "removing it recursively would remove the protected path {} (`{entry}`); \
                         remove the other entries one by one, or lift the protection with \
                         SandboxPolicy::without_protected(\"{entry}\")",
                        self.confinement.display(&found)
                    ),
                });
            }
        }
        let given = path.to_owned();
        blocking(path, move || {
            let errno = |e| fs_error(&given, e);
            let Some((parent, name)) = open_parent(&resolved.path, None).map_err(errno)? else {
                return Err(CapabilityError::Refused {
                    path: given.display().to_string(),
                    reason: "it is the filesystem root: the sandbox never removes `/`".to_owned(),
                });
            };
            remove_entry(&parent, name, recursive).map_err(|e| match e {
                Errno::ENOTEMPTY | Errno::EEXIST => CapabilityError::Io {
                    path: given.display().to_string(),
                    message:
                        "the directory is not empty: remove it recursively to delete its contents"
                            .to_owned(),
                },
                other => errno(other),
            })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::SandboxPolicy;

    /// The check resolves `dir/…`; then `dir` is swapped for a symlink that
    /// points outside (what a concurrent command could do). The operation
    /// walks the checked path with `O_NOFOLLOW` and fails instead of
    /// following the new symlink.
    #[test]
    fn a_directory_swapped_for_a_symlink_after_the_check_is_not_followed() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("dir")).unwrap();
        std::fs::write(ws.path().join("dir/file.txt"), b"inside").unwrap();
        std::fs::write(outside.path().join("file.txt"), b"outside").unwrap();
        let confinement = Confinement::new(&SandboxPolicy::workspace_write(ws.path())).unwrap();
        let given = Path::new("dir/file.txt");
        let for_write = confinement.check(given, Access::Write).unwrap();
        let for_read = confinement.check(given, Access::Read).unwrap();

        std::fs::rename(ws.path().join("dir"), ws.path().join("dir-old")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join("dir")).unwrap();

        let err = write_file(&confinement, given, &for_write, b"escaped").unwrap_err();
        assert!(
            err.to_string().contains("replaced by a symbolic link"),
            "{err}"
        );
        let err = read_file(given, &for_read.path, None).unwrap_err();
        assert!(
            err.to_string().contains("replaced by a symbolic link"),
            "{err}"
        );
        let err = read_file_at(given, &for_read.path, 2, 4).unwrap_err();
        assert!(
            err.to_string().contains("replaced by a symbolic link"),
            "{err}"
        );
        assert_eq!(
            std::fs::read(outside.path().join("file.txt")).unwrap(),
            b"outside"
        );
        // Checked again now, the path is refused outright.
        assert!(matches!(
            confinement.check(given, Access::Read),
            Err(CapabilityError::Refused { .. })
        ));
    }
}
