//! Comparing the protected entries with their record once a command's
//! processes are gone, and undoing what the command changed: what it added
//! inside them is removed, what it changed, removed or replaced is written
//! back from the record (see `kept`).
//!
//! Every change goes through directories opened from `/` without
//! following symlinks, so a symlink a command left where a directory was
//! is removed, never written through.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::readlinkat;
use nix::sys::stat::{FchmodatFlags, FileStat, Mode, fchmodat, mkdirat};
use nix::unistd::symlinkat;

use crate::nofollow::atomic_write::{WriteFailure, write_atomically};
use crate::nofollow::dirfd::{kind_of, open_parent};
use crate::nofollow::remove::remove_entry;
use crate::path::kept::{
    FILE_BYTES, Item, Kept, KeptCache, MAX_ITEMS, Opened, RACY_SECS, Record, Stamp,
    left_out_of_git, now_secs, permissions, read_file,
};

/// What was done to one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Undo {
    /// The command added it: removed.
    Removed,
    /// The command changed its bytes: written back.
    Rewritten,
    /// The command removed or replaced it: made again.
    Remade,
    /// The command changed its permission bits: set back.
    Mode,
    /// The command changed it and it cannot be put back.
    Kept,
}

/// One path the command changed inside a protected entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Undone {
    /// Where.
    pub(crate) path: PathBuf,
    /// The protected entry it lies in.
    pub(crate) glob: String,
    /// What was done.
    pub(crate) undo: Undo,
    /// Why it failed, or why it could not be done.
    pub(crate) error: Option<String>,
}

fn errno_text(e: Errno) -> String {
    e.desc().to_owned()
}

fn write_text(e: WriteFailure) -> String {
    match e {
        WriteFailure::IsADirectory => "a directory is in its place".to_owned(),
        WriteFailure::ChangedToSymlink => "a symbolic link is in its place".to_owned(),
        WriteFailure::Errno(e) => errno_text(e),
        WriteFailure::Io(e) => e.to_string(),
    }
}

/// Opens the parent of canonical `path` without following symlinks.
fn parent_of(path: &Path) -> Result<(OwnedFd, &OsStr), String> {
    match open_parent(path, None) {
        Ok(Some(found)) => Ok(found),
        Ok(None) => Err("it has no parent directory".to_owned()),
        Err(e) => Err(errno_text(e)),
    }
}

/// Sets the permission bits of `name` in `dir` (a file or a directory,
/// never a symlink's target; also one the command made unreadable).
fn set_mode(dir: &OwnedFd, name: &OsStr, mode: u32) -> Result<(), String> {
    fchmodat(
        dir,
        name,
        Mode::from_bits_truncate(mode),
        FchmodatFlags::NoFollowSymlink,
    )
    .map_err(errno_text)
}

/// Writes `bytes` over (or as) `path` with the permission bits `mode`.
fn write_back(path: &Path, bytes: &[u8], mode: u32) -> Result<(), String> {
    let (dir, name) = parent_of(path)?;
    write_atomically(&dir, name, bytes).map_err(write_text)?;
    set_mode(&dir, name, mode)
}

/// Makes `path` again as `record` describes it (its parent exists).
fn remake(path: &Path, record: &Record) -> Result<(), String> {
    match record {
        Record::File {
            bytes: Some(bytes),
            stamp,
            ..
        } => write_back(path, bytes, permissions(stamp.mode)),
        Record::File { bytes: None, .. } => Err(format!(
            "it was larger than {FILE_BYTES} bytes, so its contents were not kept"
        )),
        // Its permissions are set once what goes inside it is back.
        Record::Dir { .. } => {
            let (dir, name) = parent_of(path)?;
            mkdirat(&dir, name, Mode::from_bits_truncate(0o700)).map_err(errno_text)
        }
        Record::Symlink { target } => {
            let (dir, name) = parent_of(path)?;
            symlinkat(target.as_os_str(), &dir, name).map_err(errno_text)
        }
        Record::Other => Err("it was not a file, directory or symbolic link".to_owned()),
    }
}

/// Removes `path` (a file, symlink or directory tree; never followed).
fn remove(path: &Path) -> Result<(), String> {
    let (dir, name) = parent_of(path)?;
    match remove_entry(&dir, name, true) {
        Ok(()) | Err(Errno::ENOENT) => Ok(()),
        Err(e) => Err(errno_text(e)),
    }
}

/// What to do with a recorded path that is still there, of the same kind.
fn compare(path: &Path, item: &Item, stat: &FileStat) -> Result<Option<Undo>, String> {
    match &item.record {
        Record::File { stamp, bytes, racy } => {
            if !racy && Stamp::of(stat) == *stamp {
                return Ok(None);
            }
            let Some(bytes) = bytes else {
                return Err(format!(
                    "it is larger than {FILE_BYTES} bytes, so its contents were not kept"
                ));
            };
            let (dir, name) = parent_of(path)?;
            let same =
                read_file(dir.as_fd(), name, FILE_BYTES).is_some_and(|(now, _)| now == **bytes);
            let mode = permissions(stamp.mode);
            if !same {
                write_back(path, bytes, mode)?;
                return Ok(Some(Undo::Rewritten));
            }
            if permissions(stat.st_mode) != mode {
                set_mode(&dir, name, mode)?;
                return Ok(Some(Undo::Mode));
            }
            Ok(None)
        }
        // Opened for the owner now, so that what is inside can be checked
        // and put back; its recorded bits are set last (see `remake`).
        Record::Dir { mode } => {
            if permissions(stat.st_mode) == *mode {
                return Ok(None);
            }
            let (dir, name) = parent_of(path)?;
            set_mode(&dir, name, *mode | 0o700)?;
            Ok(Some(Undo::Mode))
        }
        Record::Symlink { target } => {
            let (dir, name) = parent_of(path)?;
            if readlinkat(&dir, name).is_ok_and(|now| now == *target) {
                return Ok(None);
            }
            remove(path)?;
            remake(path, &item.record)?;
            Ok(Some(Undo::Rewritten))
        }
        Record::Other => Ok(None),
    }
}

/// Whether `path` lies inside one of `paths` (not `path` itself).
fn inside(path: &Path, paths: &HashSet<OsString>) -> bool {
    !paths.is_empty()
        && path
            .ancestors()
            .skip(1)
            .any(|a| paths.contains(a.as_os_str()))
}

impl Kept {
    /// Undoes what changed inside the recorded entries since the record was
    /// taken: run once no process of the command is left. Every recorded
    /// path is looked at on its own (so nothing a command adds can keep one
    /// from being checked); then each recorded directory is listed and what
    /// it holds beyond the record is removed, without entering it.
    pub(crate) fn put_back(&self, cache: &KeptCache) -> Vec<Undone> {
        let mut opened = Opened::new(&self.roots);
        let mut undone = Vec::new();
        let glob = |item: &Item| self.entries[item.entry].glob.clone();
        // Recorded: compared, and put back where they differ. What is made
        // again inside a directory made again is not named on its own.
        let mut failed: HashSet<OsString> = HashSet::new();
        let mut remade: HashSet<OsString> = HashSet::new();
        // Directories whose permissions are set last, deepest first: a
        // directory made read-only again before what goes inside it is back
        // would refuse it.
        let mut modes: Vec<(&Path, u32)> = Vec::new();
        for (path, item) in &self.items {
            let path = Path::new(path);
            if inside(path, &failed) {
                continue;
            }
            let quiet = inside(path, &remade);
            let entry = &self.entries[item.entry];
            let result = match opened.stat(path) {
                Some(stat) if kind_of(&stat) == item.record.kind() => compare(path, item, &stat),
                _ if *path == entry.path && entry.git => Err(
                    "the repository's git directory was moved, removed or replaced; its history \
                     is not kept, so tack cannot make it again"
                        .to_owned(),
                ),
                Some(_) => remove(path)
                    .and_then(|()| remake(path, &item.record))
                    .map(|()| Some(Undo::Remade)),
                None => remake(path, &item.record).map(|()| Some(Undo::Remade)),
            };
            if let (Ok(Some(_)), Record::Dir { mode }) = (&result, &item.record) {
                modes.push((path, *mode));
            }
            match result {
                Ok(None) => {}
                Ok(Some(_)) if quiet => {}
                Ok(Some(undo)) => {
                    if undo == Undo::Remade && matches!(item.record, Record::Dir { .. }) {
                        remade.insert(path.as_os_str().to_owned());
                    }
                    undone.push(Undone {
                        path: path.to_path_buf(),
                        glob: glob(item),
                        undo,
                        error: None,
                    });
                }
                Err(error) => {
                    failed.insert(path.as_os_str().to_owned());
                    undone.push(Undone {
                        path: path.to_path_buf(),
                        glob: glob(item),
                        undo: Undo::Kept,
                        error: Some(error),
                    });
                }
            }
        }
        // Added: what a recorded directory holds beyond the record, removed
        // whole (not in an entry whose record stopped short: what it did not
        // reach is not new).
        for entry in self.entries.iter().filter(|e| e.cut) {
            tracing::warn!(
                entry = %entry.path.display(),
                "a protected entry holds more than {MAX_ITEMS} paths (or is nested more than \
                 64 deep): what a command added inside it is not removed"
            );
        }
        let racy_since = now_secs().saturating_sub(RACY_SECS);
        for (path, item) in &self.items {
            let path = Path::new(path);
            let entry = &self.entries[item.entry];
            if !matches!(item.record, Record::Dir { .. }) || entry.cut || inside(path, &failed) {
                continue;
            }
            let git = entry.git;
            let Some(names) = opened.names(cache, path, racy_since) else {
                continue;
            };
            for name in names.iter() {
                if git && left_out_of_git(name) {
                    continue;
                }
                let child = path.join(name);
                if self.items.contains_key(child.as_os_str()) {
                    continue;
                }
                undone.push(Undone {
                    error: remove(&child).err(),
                    path: child,
                    glob: glob(item),
                    undo: Undo::Removed,
                });
            }
        }
        for (path, mode) in modes.into_iter().rev() {
            if let Err(error) = parent_of(path).and_then(|(dir, name)| set_mode(&dir, name, mode)) {
                undone.push(Undone {
                    path: path.to_path_buf(),
                    glob: glob(&self.items[path.as_os_str()]),
                    undo: Undo::Kept,
                    error: Some(format!("its permissions could not be set back: {error}")),
                });
            }
        }
        undone
    }
}

/// The most paths named one per line in a command's output.
const SHOWN: usize = 20;

/// The lines added to a command's output for what was put back.
pub(crate) fn describe_undone(undone: &[Undone], shown: impl Fn(&Path) -> String) -> String {
    if undone.is_empty() {
        return String::new();
    }
    let mut text = String::new();
    for u in undone.iter().take(SHOWN) {
        let what = shown(&u.path);
        let line = match (u.undo, &u.error) {
            (_, Some(why)) => format!(
                "tack: could NOT undo this command's change to {what}, inside the protected entry \
                 `{}`: {why}; review it before running other programs here\n",
                u.glob
            ),
            (Undo::Removed, None) => format!(
                "tack: removed {what}, which this command added inside the protected entry `{}`\n",
                u.glob
            ),
            (Undo::Rewritten, None) => format!(
                "tack: put back {what} as it was before this command (inside the protected entry `{}`)\n",
                u.glob
            ),
            (Undo::Remade, None) => format!(
                "tack: made {what} again, as it was before this command removed or replaced it (inside the protected entry `{}`)\n",
                u.glob
            ),
            (Undo::Mode, None) => format!(
                "tack: set the permissions of {what} back (inside the protected entry `{}`)\n",
                u.glob
            ),
            (Undo::Kept, None) => format!(
                "tack: could NOT undo this command's change to {what}, inside the protected entry `{}`\n",
                u.glob
            ),
        };
        text.push_str(&line);
    }
    if undone.len() > SHOWN {
        text.push_str(&format!(
            "tack: and {} more paths inside protected entries\n",
            undone.len() - SHOWN
        ));
    }
    let mut globs: Vec<&str> = undone.iter().map(|u| u.glob.as_str()).collect();
    globs.sort_unstable();
    globs.dedup();
    let lifts: Vec<String> = globs
        .iter()
        .map(|g| format!("SandboxPolicy::without_protected(\"{g}\")"))
        .collect();
    text.push_str(&format!(
        "tack: programs outside the sandbox run what protected entries hold, so a command's \
         changes to them are undone when it ends; the user can lift this with {}\n",
        lifts.join(" or ")
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::kept::KeptCache;
    use crate::path::protect::ProtectList;
    use std::os::unix::fs::PermissionsExt;

    fn record(root: &Path) -> Kept {
        let list =
            ProtectList::new(&["**/.git".to_owned(), "**/.vscode".to_owned()], None).unwrap();
        let roots = [root.to_path_buf()];
        Kept::take(&list.scan(&roots), &roots, &KeptCache::default())
    }

    fn repo() -> (tempfile::TempDir, PathBuf) {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join(".git/objects")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(
            root.join(".git/hooks/pre-commit"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        std::fs::create_dir_all(root.join(".vscode")).unwrap();
        std::fs::write(root.join(".vscode/settings.json"), "{}").unwrap();
        (ws, root)
    }

    #[test]
    fn nothing_changed_nothing_done() {
        let (_ws, root) = repo();
        let kept = record(&root);
        assert_eq!(kept.put_back(&KeptCache::default()), []);
    }

    #[test]
    fn changes_additions_removals_and_modes_are_undone() {
        let (_ws, root) = repo();
        let outside = tempfile::tempdir().unwrap();
        let kept = record(&root);
        std::fs::write(root.join(".git/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        std::fs::write(root.join(".git/hooks/post-checkout"), "evil").unwrap();
        std::fs::set_permissions(
            root.join(".git/hooks/pre-commit"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::fs::remove_file(root.join(".vscode/settings.json")).unwrap();
        std::fs::create_dir_all(root.join(".vscode/new/deeper")).unwrap();
        std::fs::write(root.join(".git/objects/keep"), "data").unwrap();
        let undone = kept.put_back(&KeptCache::default());
        let mut seen: Vec<(String, Undo)> = undone
            .iter()
            .map(|u| {
                (
                    u.path.strip_prefix(&root).unwrap().display().to_string(),
                    u.undo,
                )
            })
            .collect();
        seen.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            seen,
            [
                (".git/config".to_owned(), Undo::Rewritten),
                (".git/hooks/post-checkout".to_owned(), Undo::Removed),
                (".git/hooks/pre-commit".to_owned(), Undo::Mode),
                (".vscode/new".to_owned(), Undo::Removed),
                (".vscode/settings.json".to_owned(), Undo::Remade),
            ]
        );
        assert!(undone.iter().all(|u| u.error.is_none()), "{undone:?}");
        assert_eq!(
            std::fs::read_to_string(root.join(".git/config")).unwrap(),
            "[core]\n"
        );
        let mode = std::fs::metadata(root.join(".git/hooks/pre-commit"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644);
        assert_eq!(
            std::fs::read_to_string(root.join(".vscode/settings.json")).unwrap(),
            "{}"
        );
        // Git's data is left as the command made it.
        assert!(root.join(".git/objects/keep").is_file());
        assert_eq!(record(&root).put_back(&KeptCache::default()), []);
        drop(outside);
    }

    #[test]
    fn a_directory_swapped_for_a_symlink_is_not_written_through() {
        let (_ws, root) = repo();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("pre-commit"), "outside\n").unwrap();
        let kept = record(&root);
        std::fs::remove_dir_all(root.join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join(".git/hooks")).unwrap();
        let undone = kept.put_back(&KeptCache::default());
        assert!(undone.iter().all(|u| u.error.is_none()), "{undone:?}");
        assert!(root.join(".git/hooks").symlink_metadata().unwrap().is_dir());
        assert_eq!(
            std::fs::read_to_string(root.join(".git/hooks/pre-commit")).unwrap(),
            "#!/bin/sh\n"
        );
        assert_eq!(
            std::fs::read_to_string(outside.path().join("pre-commit")).unwrap(),
            "outside\n"
        );
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_removed_git_directory_is_reported_not_made_again() {
        let (_ws, root) = repo();
        let kept = record(&root);
        std::fs::rename(root.join(".git"), root.join("moved")).unwrap();
        let undone = kept.put_back(&KeptCache::default());
        assert_eq!(undone.len(), 1, "{undone:?}");
        assert_eq!(undone[0].undo, Undo::Kept);
        assert!(undone[0].error.as_deref().unwrap().contains("history"));
        assert!(!root.join(".git").exists());
        let text = describe_undone(&undone, |p| p.display().to_string());
        assert!(text.contains("could NOT undo"), "{text}");
    }

    #[test]
    fn the_note_names_each_path_and_how_to_lift_it() {
        let undone = vec![Undone {
            path: PathBuf::from(".git/config"),
            glob: "**/.git".to_owned(),
            undo: Undo::Rewritten,
            error: None,
        }];
        let text = describe_undone(&undone, |p| p.display().to_string());
        assert!(
            text.contains("tack: put back .git/config as it was"),
            "{text}"
        );
        assert!(
            text.contains("SandboxPolicy::without_protected(\"**/.git\")"),
            "{text}"
        );
        assert_eq!(describe_undone(&[], |p| p.display().to_string()), "");
    }
}
