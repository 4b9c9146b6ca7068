//! A record of what the existing protected entries hold, taken before a
//! command starts where nothing keeps them read-only (the kernel-only
//! floor: Landlock grants rights to whole trees and cannot make part of a
//! writable root read-only). Once the command's processes are gone, the
//! record is compared with the disk and what the command changed is put
//! back (see `put_back`).
//!
//! Recorded, for every protected entry found and everything inside it: a
//! file's bytes and permission bits, a directory's permission bits, a
//! symlink's target. Git's data inside a repository (`objects`, `refs`,
//! `logs`, the index, the `*HEAD` files, …) and its sample hooks are
//! neither recorded nor checked: no program runs what they hold, and a
//! history can be large.
//!
//! Paths are looked at with `fstatat` from the writable root they lie
//! under, never following their last component, and a walk enters only
//! directories whose own `stat` says they are directories. Bytes are read,
//! and everything is written, through directories opened one
//! component at a time without following symlinks, so a command that
//! swaps a directory for a symlink cannot make tack read or write through
//! it. Listings and bytes are kept between records while the change time
//! of the directory or file stays (which no program can set back).

use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use nix::dir::Dir;
use nix::fcntl::{AtFlags, OFlag, openat, readlinkat};
use nix::sys::stat::{FileStat, Mode, fstat, fstatat};
use tack_core::capability::EntryKind;

use crate::nofollow::dirfd::kind_of;
use crate::path::ProtectedScan;

/// The most bytes of one file kept; a larger file is recorded by its
/// `stat` only, and a change to it is reported, not undone.
pub(crate) const FILE_BYTES: u64 = 1 << 20;
/// The most bytes kept in one record.
const TOTAL_BYTES: u64 = 32 << 20;
/// The most paths recorded in one protected entry.
pub(crate) const MAX_ITEMS: usize = 50_000;
/// Above this many recorded paths, a warning says what each command costs.
const MANY_ITEMS: usize = 5_000;
/// The deepest directory walked below a protected entry.
const MAX_DEPTH: usize = 64;
/// A file whose change time is this recent, in seconds, is compared by its
/// bytes afterwards, not by its `stat`: file times have the resolution of
/// the kernel's clock tick, so a write in the same tick as the record's
/// `stat` can leave every time and the size as they were.
pub(crate) const RACY_SECS: i64 = 2;

/// What tells a changed file from an unchanged one. The change time moves
/// with every write, `chmod`, rename or link and no program can set it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    size: i64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    /// The file type and permission bits.
    pub(crate) mode: u32,
}

impl Stamp {
    pub(crate) fn of(stat: &FileStat) -> Self {
        Self {
            dev: stat.st_dev,
            ino: stat.st_ino,
            size: stat.st_size,
            mtime: (stat.st_mtime, stat.st_mtime_nsec),
            ctime: (stat.st_ctime, stat.st_ctime_nsec),
            mode: stat.st_mode,
        }
    }
}

/// The permission bits of a `stat`.
pub(crate) fn permissions(mode: u32) -> u32 {
    mode & 0o7777
}

/// What one path held when the record was taken.
#[derive(Clone, Debug)]
pub(crate) enum Record {
    /// A regular file.
    File {
        stamp: Stamp,
        /// Its bytes; `None` when it was over [`FILE_BYTES`] or the
        /// record's budget.
        bytes: Option<Arc<[u8]>>,
        /// Changed too recently for its `stat` to tell a later change:
        /// compared by its bytes.
        racy: bool,
    },
    /// A directory, with its permission bits.
    Dir { mode: u32 },
    /// A symlink, with its target.
    Symlink { target: OsString },
    /// Anything else (a FIFO, a socket, a device): only its kind is checked.
    Other,
}

impl Record {
    /// The kind a `stat` must show for the path to be the same kind.
    pub(crate) fn kind(&self) -> EntryKind {
        match self {
            Record::File { .. } => EntryKind::File,
            Record::Dir { .. } => EntryKind::Dir,
            Record::Symlink { .. } => EntryKind::Symlink,
            Record::Other => EntryKind::Other,
        }
    }
}

/// One protected entry found on disk, walked whole.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// Where it is.
    pub(crate) path: PathBuf,
    /// The protected entry (glob or path) it matched.
    pub(crate) glob: String,
    /// A repository's `.git` (or the directory a `.git` file names): git's
    /// data inside it is left alone, and it is never made again from the
    /// record (its history is not in it).
    pub(crate) git: bool,
    /// The walk stopped at [`MAX_ITEMS`] paths or [`MAX_DEPTH`] levels in
    /// it: the paths it did not reach are not checked, and nothing added
    /// in it is removed.
    pub(crate) cut: bool,
}

/// A recorded path and the entry it lies in.
#[derive(Clone, Debug)]
pub(crate) struct Item {
    pub(crate) record: Record,
    /// Its index in [`Kept::entries`].
    pub(crate) entry: usize,
}

/// What the protected entries held when a command started.
#[derive(Clone, Debug, Default)]
pub(crate) struct Kept {
    /// The writable roots the entries lie under.
    pub(crate) roots: Vec<PathBuf>,
    pub(crate) entries: Vec<Entry>,
    /// By path (bytes: hashed and compared as bytes, which is much
    /// cheaper than by component; a directory still comes before what is
    /// inside it).
    pub(crate) items: BTreeMap<OsString, Item>,
}

/// A file's bytes with the `stat` they were read under.
type KeptFile = (Stamp, Arc<[u8]>);
/// A directory's names with the stamp they were listed under.
type KeptListing = (DirStamp, Arc<[OsString]>);

/// The bytes of files read by the last record, by path, with the `stat`
/// they were read under, and the names in its directories: the next record
/// reuses them where the `stat` did not move, so only changed files are
/// read and only changed directories listed again.
#[derive(Debug, Default)]
pub(crate) struct KeptCache {
    files: Mutex<HashMap<OsString, KeptFile>>,
    /// Directory listings, by path, with the stamp they were listed under.
    dirs: Mutex<HashMap<OsString, KeptListing>>,
    /// Whether the warning about a large record was given.
    warned: AtomicBool,
}

/// Whether `name`, inside a repository's git directory, is left out of a
/// record: git's data, and sample hooks (git never runs a `.sample` file).
/// No program runs what these hold.
pub(crate) fn left_out_of_git(name: &OsStr) -> bool {
    let bytes = name.as_bytes();
    matches!(
        bytes,
        b"objects"
            | b"refs"
            | b"logs"
            | b"lfs"
            | b"rr-cache"
            | b"index"
            | b"packed-refs"
            | b"COMMIT_EDITMSG"
            | b"MERGE_MSG"
            | b"SQUASH_MSG"
            | b"MERGE_MODE"
            | b"MERGE_RR"
            | b"BISECT_LOG"
            | b"description"
            | b"shallow"
            | b"gc.log"
            | b"gc.pid"
    ) || bytes.ends_with(b"HEAD")
        || bytes.starts_with(b"sharedindex.")
        || (bytes.ends_with(b".lock") && bytes != b".lock")
        || (bytes.ends_with(b".sample") && bytes != b".sample")
}

/// The directories one walk opened, by path, so that entries sharing
/// parents open them once. A writable root is opened by its path (its
/// parent is out of the commands' reach); every other directory from its
/// own parent without following a symlink.
pub(crate) struct Opened<'r> {
    roots: &'r [PathBuf],
    dirs: HashMap<PathBuf, OwnedFd>,
}

impl<'r> Opened<'r> {
    pub(crate) fn new(roots: &'r [PathBuf]) -> Self {
        Self {
            roots,
            dirs: HashMap::new(),
        }
    }

    /// A directory to look `path` up from, and the path relative to it:
    /// the writable root it lies under (found by the scan that walked
    /// there without following symlinks), else its parent.
    fn base_for(&mut self, path: &Path) -> Option<(BorrowedFd<'_>, PathBuf)> {
        let under = self
            .roots
            .iter()
            .find(|r| path.starts_with(r) && path != r.as_path())
            .cloned();
        match under {
            Some(root) => {
                let rel = path.strip_prefix(&root).ok()?.to_path_buf();
                Some((self.dir(&root)?, rel))
            }
            None => {
                let name = PathBuf::from(path.file_name()?);
                Some((self.dir(path.parent()?)?, name))
            }
        }
    }

    /// The `stat` of `path` now, not following it (see [`walk`] for its
    /// parents).
    pub(crate) fn stat(&mut self, path: &Path) -> Option<FileStat> {
        let (base, rel) = self.base_for(path)?;
        fstatat(base, rel.as_path(), AtFlags::AT_SYMLINK_NOFOLLOW).ok()
    }

    /// The names in the directory at `path` now (see [`KeptCache::names`]);
    /// `None` when it is not a directory.
    pub(crate) fn names(
        &mut self,
        cache: &KeptCache,
        path: &Path,
        racy_since: i64,
    ) -> Option<Arc<[OsString]>> {
        let (base, rel) = self.base_for(path)?;
        let stat = fstatat(base, rel.as_path(), AtFlags::AT_SYMLINK_NOFOLLOW).ok()?;
        if kind_of(&stat) != EntryKind::Dir {
            return None;
        }
        cache.names(base, &rel, path, &stat, racy_since)
    }

    /// The directory at canonical `path`, opened now or before.
    pub(crate) fn dir(&mut self, path: &Path) -> Option<BorrowedFd<'_>> {
        if !self.dirs.contains_key(path) {
            let fd = match (path.parent(), path.file_name()) {
                (Some(parent), Some(name)) if !self.roots.iter().any(|r| r == path) => {
                    let parent = self.dir(parent)?;
                    openat(parent, name, dir_flags(), Mode::empty()).ok()?
                }
                _ => nix::fcntl::open(
                    path,
                    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
                    Mode::empty(),
                )
                .ok()?,
            };
            self.dirs.insert(path.to_path_buf(), fd);
        }
        self.dirs.get(path).map(AsFd::as_fd)
    }
}

fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

/// Device, inode and change time of a directory: the same while nothing
/// in it was added, removed or renamed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DirStamp(u64, u64, i64, i64);

impl KeptCache {
    /// The names in the directory `rel` below `base` (at `abs`), whose
    /// `stat` is `stat`: kept from an earlier walk while its change time
    /// did not move, else listed (through a descriptor opened without
    /// following its last component, checked to be that directory).
    fn names(
        &self,
        base: BorrowedFd<'_>,
        rel: &Path,
        abs: &Path,
        stat: &FileStat,
        racy_since: i64,
    ) -> Option<Arc<[OsString]>> {
        let stamp = DirStamp(stat.st_dev, stat.st_ino, stat.st_ctime, stat.st_ctime_nsec);
        let dirs = self.dirs.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((kept, names)) = dirs.get(abs.as_os_str()) {
            if *kept == stamp {
                return Some(names.clone());
            }
        }
        drop(dirs);
        let mut dir = Dir::openat(base, rel, dir_flags(), Mode::empty()).ok()?;
        let opened = fstat(dir.as_fd()).ok()?;
        let mut names: Vec<OsString> = Vec::new();
        for entry in dir.iter() {
            let entry = entry.ok()?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name != "." && name != ".." {
                names.push(name.to_owned());
            }
        }
        let names: Arc<[OsString]> = names.into();
        // Kept only when it is the directory the stamp is of and it has
        // settled: a change in the same clock tick as this listing would
        // leave the change time as it is.
        if (opened.st_dev, opened.st_ino) == (stamp.0, stamp.1) && stamp.2 < racy_since {
            let mut dirs = self.dirs.lock().unwrap_or_else(PoisonError::into_inner);
            dirs.insert(abs.as_os_str().to_owned(), (stamp, names.clone()));
        }
        Some(names)
    }
}

/// Every path of the entry at `path` and below it (what
/// [`left_out_of_git`] names left out when `git`) with its `stat`, never
/// following the path's own symlink and never entering a directory that
/// is not one; `false` when it stopped at `limit` paths or at
/// [`MAX_DEPTH`].
pub(crate) fn walk(
    opened: &mut Opened<'_>,
    cache: &KeptCache,
    path: &Path,
    git: bool,
    out: &mut Vec<(PathBuf, FileStat)>,
    limit: usize,
) -> bool {
    let Some((base, name)) = opened.base_for(path) else {
        return true;
    };
    let Ok(stat) = fstatat(base, name.as_path(), AtFlags::AT_SYMLINK_NOFOLLOW) else {
        return true;
    };
    out.push((path.to_path_buf(), stat));
    if kind_of(&stat) != EntryKind::Dir {
        return true;
    }
    let racy_since = now_secs().saturating_sub(RACY_SECS);
    let mut pending = vec![(name, path.to_path_buf(), stat, 0)];
    while let Some((rel, abs, stat, depth)) = pending.pop() {
        if depth >= MAX_DEPTH {
            return false;
        }
        let Some(names) = cache.names(base, &rel, &abs, &stat, racy_since) else {
            continue;
        };
        for child in names.iter() {
            if git && left_out_of_git(child) {
                continue;
            }
            // Only directories whose own `stat` said so are entered, so
            // a path below one is a symlink's only if a command swapped
            // it in since; what is then written or read opens each
            // directory without following it.
            let child_rel = rel.join(child);
            let Ok(child_stat) = fstatat(base, child_rel.as_path(), AtFlags::AT_SYMLINK_NOFOLLOW)
            else {
                continue;
            };
            if out.len() >= limit {
                return false;
            }
            let child_abs = abs.join(child);
            out.push((child_abs.clone(), child_stat));
            if kind_of(&child_stat) == EntryKind::Dir {
                pending.push((child_rel, child_abs, child_stat, depth + 1));
            }
        }
    }
    true
}

/// Reads the regular file `name` in `dir` (never through a symlink, never
/// blocking on a FIFO swapped in), up to `limit` bytes: its bytes and the
/// `stat` of what was opened, `None` when it is not a regular file, is
/// longer, or changed while it was read.
pub(crate) fn read_file(dir: BorrowedFd<'_>, name: &OsStr, limit: u64) -> Option<(Vec<u8>, Stamp)> {
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    let fd = openat(dir, name, flags, Mode::empty()).ok()?;
    let before = fstat(&fd).ok()?;
    if kind_of(&before) != EntryKind::File {
        return None;
    }
    let mut file = std::fs::File::from(fd);
    let mut bytes = Vec::new();
    (&mut file)
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .ok()?;
    let after = fstat(&file).ok()?;
    let stamp = Stamp::of(&before);
    (bytes.len() as u64 <= limit && Stamp::of(&after) == stamp).then_some((bytes, stamp))
}

/// What a `stat` alone records of a path (bytes and targets are read
/// after the walk).
fn stat_record(stat: &FileStat) -> Record {
    match kind_of(stat) {
        EntryKind::File => Record::File {
            stamp: Stamp::of(stat),
            bytes: None,
            racy: true,
        },
        EntryKind::Dir => Record::Dir {
            mode: permissions(stat.st_mode),
        },
        EntryKind::Symlink => Record::Symlink {
            target: OsString::new(),
        },
        _ => Record::Other,
    }
}

pub(crate) fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

impl Kept {
    /// Records every entry of `scan` under `roots` (an entry inside another
    /// one is recorded with it), reusing what `cache` holds for files and
    /// directories that did not change.
    pub(crate) fn take(scan: &ProtectedScan, roots: &[PathBuf], cache: &KeptCache) -> Self {
        Self::take_up_to(scan, roots, cache, MAX_ITEMS)
    }

    /// [`Kept::take`] with at most `limit` paths in each entry.
    fn take_up_to(
        scan: &ProtectedScan,
        roots: &[PathBuf],
        cache: &KeptCache,
        limit: usize,
    ) -> Self {
        let mut kept = Kept {
            roots: roots.to_vec(),
            ..Kept::default()
        };
        let racy_since = now_secs().saturating_sub(RACY_SECS);
        let mut opened = Opened::new(roots);
        let mut seen = Vec::new();
        let mut outer: Option<&Path> = None;
        for (path, found) in &scan.found {
            // Sorted paths: one inside the previous outer entry comes right
            // after it, and is walked with it.
            if outer.is_some_and(|o| path.starts_with(o)) {
                continue;
            }
            outer = Some(path);
            let git = path.file_name().is_some_and(|n| n == ".git")
                || found.entry.rsplit('/').next() == Some(".git");
            let cut = !walk(&mut opened, cache, path, git, &mut seen, limit);
            let index = kept.entries.len();
            kept.entries.push(Entry {
                path: path.clone(),
                glob: found.entry.clone(),
                git,
                cut,
            });
            for (at, stat) in seen.drain(..) {
                kept.items.insert(
                    at.into_os_string(),
                    Item {
                        record: stat_record(&stat),
                        entry: index,
                    },
                );
            }
        }
        if kept.items.len() > MANY_ITEMS && !cache.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                paths = kept.items.len(),
                "the protected entries hold many paths; without bubblewrap each command records \
                 and checks them all (install bubblewrap, or lift the largest entry with \
                 SandboxPolicy::without_protected, to make commands cheaper)"
            );
        }
        // Bytes and symlink targets, read through directories opened
        // without following symlinks.
        let mut files = cache.files.lock().unwrap_or_else(PoisonError::into_inner);
        let mut used = HashMap::new();
        let mut budget = TOTAL_BYTES;
        for (at, item) in &mut kept.items {
            let at = Path::new(at);
            let (Some(parent), Some(name)) = (at.parent(), at.file_name()) else {
                continue;
            };
            match &mut item.record {
                Record::File { stamp, bytes, racy } => {
                    *racy = stamp.ctime.0 >= racy_since;
                    if let Some((kept_stamp, kept_bytes)) = files.get(at.as_os_str()) {
                        if !*racy && kept_stamp == stamp {
                            *bytes = Some(kept_bytes.clone());
                        }
                    }
                    let size = u64::try_from(stamp.size).unwrap_or(u64::MAX);
                    if bytes.is_none() && size <= FILE_BYTES.min(budget) {
                        if let Some((read, read_stamp)) = opened
                            .dir(parent)
                            .and_then(|dir| read_file(dir, name, FILE_BYTES.min(budget)))
                        {
                            // Changed since the walk's `stat`: what was
                            // read is compared by bytes.
                            *racy |= read_stamp != *stamp;
                            *bytes = Some(Arc::from(read));
                        }
                    }
                    if let Some(bytes) = bytes {
                        budget = budget.saturating_sub(bytes.len() as u64);
                        if !*racy {
                            used.insert(at.as_os_str().to_owned(), (*stamp, bytes.clone()));
                        }
                    }
                }
                Record::Symlink { target } => {
                    match opened.dir(parent).map(|dir| readlinkat(dir, name)) {
                        Some(Ok(read)) => *target = read,
                        _ => item.record = Record::Other,
                    }
                }
                Record::Dir { .. } | Record::Other => {}
            }
        }
        *files = used;
        kept
    }

    /// This record with each entry a command moved (from, to) where it is
    /// now, and every path in it with it.
    pub(crate) fn moved(&self, moved: &[(PathBuf, PathBuf)]) -> Self {
        let to = |path: &Path| -> PathBuf {
            let found = moved.iter().find_map(|(from, to)| {
                let rest = path.strip_prefix(from).ok()?;
                // `join("")` would add a trailing separator.
                Some(if rest.as_os_str().is_empty() {
                    to.clone()
                } else {
                    to.join(rest)
                })
            });
            found.unwrap_or_else(|| path.to_path_buf())
        };
        Kept {
            roots: self.roots.clone(),
            entries: self
                .entries
                .iter()
                .map(|e| Entry {
                    path: to(&e.path),
                    ..e.clone()
                })
                .collect(),
            items: self
                .items
                .iter()
                .map(|(path, item)| (to(Path::new(path)).into_os_string(), item.clone()))
                .collect(),
        }
    }

    /// Whether nothing was recorded.
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::protect::ProtectList;

    fn scan(root: &Path) -> ProtectedScan {
        let list =
            ProtectList::new(&["**/.git".to_owned(), "**/.vscode".to_owned()], None).unwrap();
        list.scan(&[root.to_path_buf()])
    }

    #[test]
    fn a_record_holds_what_runs_and_leaves_git_data_out() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let git = root.join("lib/.git");
        for dir in [
            "hooks",
            "objects/ab",
            "refs/heads",
            "logs",
            "modules/m/objects",
        ] {
            std::fs::create_dir_all(git.join(dir)).unwrap();
        }
        std::fs::write(git.join("config"), "[core]\n").unwrap();
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(git.join("index"), "DIRC").unwrap();
        std::fs::write(git.join("hooks/pre-commit"), "#!/bin/sh\n").unwrap();
        std::fs::write(git.join("hooks/pre-push.sample"), "#!/bin/sh\n").unwrap();
        std::fs::write(git.join("objects/ab/cdef"), "blob").unwrap();
        std::fs::write(git.join("modules/m/config"), "[core]\n").unwrap();
        std::os::unix::fs::symlink("config", git.join("link")).unwrap();
        std::fs::create_dir_all(root.join(".vscode")).unwrap();
        std::fs::write(root.join(".vscode/tasks.json"), "{}").unwrap();
        let cache = KeptCache::default();
        let kept = Kept::take(&scan(&root), std::slice::from_ref(&root), &cache);
        let paths: Vec<String> = kept
            .items
            .keys()
            .map(|p| {
                Path::new(p)
                    .strip_prefix(&root)
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect();
        assert_eq!(
            paths,
            [
                ".vscode",
                ".vscode/tasks.json",
                "lib/.git",
                "lib/.git/config",
                "lib/.git/hooks",
                "lib/.git/hooks/pre-commit",
                "lib/.git/link",
                "lib/.git/modules",
                "lib/.git/modules/m",
                "lib/.git/modules/m/config",
            ]
        );
        assert!(kept.entries.iter().all(|e| !e.cut));
        let git_entry = kept.entries.iter().find(|e| e.path == git).unwrap();
        assert!(git_entry.git);
        assert!(
            !kept
                .entries
                .iter()
                .find(|e| e.path.ends_with(".vscode"))
                .unwrap()
                .git
        );
        match &kept.items[git.join("config").as_os_str()].record {
            Record::File { bytes, .. } => assert_eq!(bytes.as_deref(), Some(&b"[core]\n"[..])),
            other => panic!("{other:?}"),
        }
        match &kept.items[git.join("link").as_os_str()].record {
            Record::Symlink { target } => assert_eq!(target, "config"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn files_changed_just_now_are_racy_and_not_cached() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        let cache = KeptCache::default();
        let kept = Kept::take(&scan(&root), std::slice::from_ref(&root), &cache);
        match &kept.items[root.join(".git/config").as_os_str()].record {
            Record::File { racy, bytes, .. } => {
                assert!(*racy);
                assert!(bytes.is_some());
            }
            other => panic!("{other:?}"),
        }
        assert!(cache.files.lock().unwrap().is_empty());
    }

    #[test]
    fn large_files_are_recorded_without_their_bytes() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".vscode")).unwrap();
        let big = vec![b'x'; usize::try_from(FILE_BYTES).unwrap() + 1];
        std::fs::write(root.join(".vscode/big"), &big).unwrap();
        let kept = Kept::take(
            &scan(&root),
            std::slice::from_ref(&root),
            &KeptCache::default(),
        );
        match &kept.items[root.join(".vscode/big").as_os_str()].record {
            Record::File { bytes, .. } => assert!(bytes.is_none()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_entry_too_large_to_record_leaves_the_others_whole() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        // `.direnv` sorts before `.git`.
        let list =
            ProtectList::new(&["**/.git".to_owned(), "**/.direnv".to_owned()], None).unwrap();
        std::fs::create_dir_all(root.join(".direnv")).unwrap();
        for i in 0..5 {
            std::fs::write(root.join(format!(".direnv/{i}")), "").unwrap();
        }
        let roots = [root.clone()];
        let cache = KeptCache::default();
        let kept = Kept::take_up_to(&list.scan(&roots), &roots, &cache, 3);
        let cut: Vec<(bool, &Path)> = kept
            .entries
            .iter()
            .map(|e| (e.cut, e.path.strip_prefix(&root).unwrap()))
            .collect();
        assert_eq!(
            cut,
            [(true, Path::new(".direnv")), (false, Path::new(".git"))]
        );
        std::fs::write(root.join(".git/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        std::fs::write(root.join(".git/new"), "").unwrap();
        std::fs::write(root.join(".direnv/added"), "").unwrap();
        let undone = kept.put_back(&cache);
        assert_eq!(
            std::fs::read_to_string(root.join(".git/config")).unwrap(),
            "[core]\n"
        );
        assert!(!root.join(".git/new").exists());
        // Not known to be new in an entry recorded in part.
        assert!(root.join(".direnv/added").exists());
        assert_eq!(undone.len(), 2, "{undone:?}");
    }

    #[test]
    fn what_a_git_directory_leaves_out() {
        for name in [
            "objects",
            "refs",
            "index",
            "HEAD",
            "ORIG_HEAD",
            "FETCH_HEAD",
            "packed-refs",
            "config.lock",
            "sharedindex.1234",
            "pre-commit.sample",
        ] {
            assert!(left_out_of_git(OsStr::new(name)), "{name}");
        }
        for name in [
            "config",
            "hooks",
            "info",
            "modules",
            "commondir",
            ".lock",
            "worktrees",
            "pre-commit",
            ".sample",
        ] {
            assert!(!left_out_of_git(OsStr::new(name)), "{name}");
        }
    }
}
