//! Where session logs live, and creating them without following symlinks.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AT_FDCWD, OFlag, openat};
use nix::sys::stat::{Mode, mkdirat};

use crate::chain::sha256_hex;

/// The per-user state directory of `tack`'s data: `$XDG_STATE_HOME` when it
/// is set to an absolute path, else `$HOME/.local/state` (the XDG base
/// directory rules), or `None` when neither is usable. Session logs go to
/// `<state home>/tack/sessions/<workspace key>/`.
///
/// ```
/// use std::path::Path;
/// use tack_agent::state_home;
/// assert_eq!(state_home(Some("/s".into()), Some("/h".into())).as_deref(), Some(Path::new("/s")));
/// // A relative XDG_STATE_HOME is ignored, as the XDG rules say.
/// assert_eq!(state_home(Some("rel".into()), Some("/h".into())).as_deref(), Some(Path::new("/h/.local/state")));
/// assert_eq!(state_home(None, None), None);
/// ```
pub fn state_home(xdg_state_home: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    let absolute = |v: Option<OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    absolute(xdg_state_home).or_else(|| absolute(home).map(|h| h.join(".local").join("state")))
}

/// [`state_home`] from the process environment (`XDG_STATE_HOME`, `HOME`).
pub fn state_home_from_env() -> Option<PathBuf> {
    state_home(std::env::var_os("XDG_STATE_HOME"), std::env::var_os("HOME"))
}

/// The name of a workspace's folder of session logs: the workspace folder's
/// own name (characters other than ASCII letters, digits, `.`, `_` and `-`
/// replaced by `_`, at most 32 of them), a `-`, and the first 16 hex digits
/// of the SHA-256 of the workspace's path bytes. Pass the canonical path:
/// two spellings of one directory then share a key, and two directories
/// with one name do not.
///
/// ```
/// use std::path::Path;
/// let key = tack_agent::workspace_key(Path::new("/home/me/my project"));
/// assert!(key.starts_with("my_project-"), "{key}");
/// assert_eq!(key.len(), "my_project-".len() + 16);
/// assert_ne!(key, tack_agent::workspace_key(Path::new("/tmp/my project")));
/// ```
pub fn workspace_key(workspace: &Path) -> String {
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(32)
        .collect();
    let name = if name.is_empty() || name.chars().all(|c| c == '.') {
        "root".to_owned()
    } else {
        name
    };
    let digest = sha256_hex(workspace.as_os_str().as_bytes());
    format!("{name}-{}", &digest[..16])
}

fn link_refused(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is a symbolic link (or not a directory); session logs are never created through a link",
            path.display()
        ),
    )
}

/// Opens the directory `name` inside `dir`, creating it (mode 0700) when it
/// is missing, and never following a symbolic link.
fn child_dir(dir: &OwnedFd, name: &OsStr, shown: &Path) -> io::Result<OwnedFd> {
    match mkdirat(dir, name, Mode::S_IRWXU) {
        Ok(()) | Err(Errno::EEXIST) => {}
        Err(e) => return Err(e.into()),
    }
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    openat(dir, name, flags, Mode::empty()).map_err(|e| match e {
        Errno::ELOOP | Errno::ENOTDIR => link_refused(shown),
        e => e.into(),
    })
}

/// Opens `dir` itself (symbolic links in it are followed: it is a path the
/// user chose).
fn open_dir(dir: &Path) -> io::Result<OwnedFd> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    Ok(openat(AT_FDCWD, dir, flags, Mode::empty())?)
}

/// Creates the file `name` in `dir`: a new file (never an existing one),
/// mode 0600, for appending, and never through a symbolic link.
fn new_file(dir: &OwnedFd, name: &OsStr, shown: &Path) -> io::Result<File> {
    let flags = OFlag::O_WRONLY
        | OFlag::O_APPEND
        | OFlag::O_CREAT
        | OFlag::O_EXCL
        | OFlag::O_NOFOLLOW
        | OFlag::O_CLOEXEC;
    match openat(dir, name, flags, Mode::S_IRUSR | Mode::S_IWUSR) {
        Ok(fd) => Ok(File::from(fd)),
        Err(Errno::EEXIST) => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} already exists (a session log is always a new file; a link there is never followed)",
                shown.display()
            ),
        )),
        Err(e) => Err(e.into()),
    }
}

/// Creates the new log file `relative` under `base`: `base` is opened as
/// it is, every directory of `relative` is created (0700) or opened without
/// following a link, and the file is created new (0600), not through a link.
pub(crate) fn create_under(base: &Path, relative: &Path) -> io::Result<File> {
    let mut parts: Vec<&OsStr> = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::CurDir => {}
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{}: only plain names are allowed below {}",
                        relative.display(),
                        base.display()
                    ),
                ));
            }
        }
    }
    let Some((file, dirs)) = parts.split_last() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a session log needs a file name",
        ));
    };
    let mut dir = open_dir(base)?;
    let mut shown = base.to_owned();
    for part in dirs {
        shown.push(part);
        dir = child_dir(&dir, part, &shown)?;
    }
    shown.push(file);
    new_file(&dir, file, &shown)
}

/// Creates the new log file `path`: its nearest existing ancestor is taken as
/// it is (the user named it), the missing directories are created (0700)
/// without following links, and the file is created new (0600), never
/// through a link.
pub(crate) fn create_at(path: &Path) -> io::Result<File> {
    if path.file_name().is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} does not name a file", path.display()),
        ));
    }
    // The nearest ancestor that exists (a dangling link counts as missing,
    // and is then refused by the walk).
    let mut base = path.parent().unwrap_or(Path::new(""));
    while !base.as_os_str().is_empty()
        && std::fs::metadata(base).is_err()
        && base.parent().is_some()
    {
        base = base.parent().unwrap_or(Path::new(""));
    }
    let relative = path.strip_prefix(base).unwrap_or(path);
    create_under(base, relative)
}

/// Creates `state_home` itself if it is missing (mode 0700, as the XDG rules
/// ask).
pub(crate) fn ensure_state_home(state_home: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(state_home)
}
