//! Directory listings kept between the walks for protected paths, reused
//! while a directory's change time says nothing in it was added, removed or
//! renamed.
//!
//! A walk before and after every command lists every directory of the
//! writable roots; in a workspace of thousands of directories that is most
//! of a command's cost. Adding, removing or renaming an entry changes its
//! directory's change time (`ctime`), which no unprivileged program can set
//! back (`touch -d` sets the modification time and moves the change time
//! to now), so an unchanged `ctime` (with the same device and inode) means
//! the same entries, and one `stat` replaces the listing. The change-time
//! clock is coarse (a few milliseconds), so a directory changed within the
//! last [`SETTLED`] is always listed again: a change in the same tick as the
//! listing would not show in its `ctime`.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a directory must have been left unchanged before its listing is
/// kept.
const SETTLED: Duration = Duration::from_secs(2);

/// What a walk needs of one directory.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// The subdirectories the walk enters without looking at them.
    pub(crate) subdirs: Vec<PathBuf>,
    /// The entries the walk looks at itself (named like a protected entry).
    pub(crate) named: Vec<PathBuf>,
}

/// Device, inode and change time of a directory.
type Stamp = (u64, u64, i64, i64);

/// Listings of settled directories, by path.
#[derive(Debug, Default)]
pub(crate) struct Listings {
    kept: Mutex<HashMap<PathBuf, (Stamp, Arc<Listing>)>>,
}

impl Listings {
    /// The listing of `dir`, where `named` says which entries the walk
    /// looks at itself; `None` when `dir` cannot be read.
    pub(crate) fn list(&self, dir: &Path, named: impl Fn(&OsStr) -> bool) -> Option<Arc<Listing>> {
        let meta = std::fs::symlink_metadata(dir).ok()?;
        let stamp = (meta.dev(), meta.ino(), meta.ctime(), meta.ctime_nsec());
        if let Some((kept, listing)) = self
            .kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(dir)
        {
            if *kept == stamp {
                return Some(listing.clone());
            }
        }
        let listed_at = SystemTime::now();
        let mut listing = Listing::default();
        for entry in std::fs::read_dir(dir).ok()?.flatten() {
            if named(&entry.file_name()) {
                listing.named.push(entry.path());
            } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
                listing.subdirs.push(entry.path());
            }
        }
        let listing = Arc::new(listing);
        let changed = UNIX_EPOCH
            + Duration::new(
                u64::try_from(meta.ctime()).unwrap_or(u64::MAX / 2),
                u32::try_from(meta.ctime_nsec()).unwrap_or(0),
            );
        let settled = changed + SETTLED < listed_at;
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if settled {
            kept.insert(dir.to_path_buf(), (stamp, listing.clone()));
        } else {
            kept.remove(dir);
        }
        Some(listing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(listing: &Listing) -> (Vec<String>, Vec<String>) {
        let name = |p: &PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
        let mut subdirs: Vec<String> = listing.subdirs.iter().map(name).collect();
        let mut named: Vec<String> = listing.named.iter().map(name).collect();
        subdirs.sort();
        named.sort();
        (subdirs, named)
    }

    /// A directory changed just now is listed again every time; an
    /// entry added to a kept directory shows, even when the modification
    /// time is set back to what it was.
    #[test]
    fn a_change_always_shows() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        let listings = Listings::default();
        let is_git = |n: &OsStr| n == ".git";
        let first = listings.list(dir.path(), is_git).unwrap();
        assert_eq!(names(&first), (vec!["a".to_owned()], vec![]));
        // Fresh: not kept, so a change in the same clock tick shows.
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let second = listings.list(dir.path(), is_git).unwrap();
        assert_eq!(names(&second).1, vec![".git".to_owned()]);
        assert!(listings.kept.lock().unwrap().is_empty());
    }

    #[test]
    fn a_settled_directory_is_reused_until_its_change_time_moves() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        let listings = Listings::default();
        let is_git = |n: &OsStr| n == ".git";
        // Pretend the listing was made long after the last change.
        let meta = std::fs::symlink_metadata(dir.path()).unwrap();
        let stamp = (meta.dev(), meta.ino(), meta.ctime(), meta.ctime_nsec());
        let kept = Arc::new(Listing {
            subdirs: vec![dir.path().join("kept-marker")],
            named: vec![],
        });
        listings
            .kept
            .lock()
            .unwrap()
            .insert(dir.path().to_path_buf(), (stamp, kept));
        let reused = listings.list(dir.path(), is_git).unwrap();
        assert_eq!(names(&reused).0, vec!["kept-marker".to_owned()]);
        // An entry added, then the modification time set back: the change
        // time moved, so the directory is listed again.
        let mtime = meta.modified().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::File::open(dir.path())
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let listed = listings.list(dir.path(), is_git).unwrap();
        assert_eq!(
            names(&listed),
            (vec!["a".to_owned()], vec![".git".to_owned()])
        );
    }
}
