//! Protected paths: entries inside the writable roots that programs outside
//! the sandbox execute from later (a nested repository's `.git`, another
//! tool's configuration, the user's shell start-up files, tack's own files).
//!
//! An entry of the list is one of
//! - a glob relative to each root (`**/.git`: every `.git` at any depth),
//! - `~/path`: a path under the user's home directory, or
//! - `/path`: an absolute path.
//!
//! A path is protected when it, or one of its parent directories, matches.
//! The file tools refuse to write, create or remove protected paths (also
//! missing ones). Commands find the existing ones mounted read-only (the
//! namespace layer), or on the floor find what they changed in them put
//! back when they end (`kept` and `put_back`), and whatever protected entry
//! a command created is removed when the command ends
//! ([`ProtectList::sweep`]), on every layer.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use std::sync::Arc;

use crate::error::SandboxError;
use crate::path::deny::DenyList;
use crate::path::kept::KeptCache;
use crate::path::listing::Listings;

/// The most bytes of a `.git` file read to find its `gitdir:`.
const GITFILE_BYTES: u64 = 4096;

/// Compiled protected entries.
#[derive(Clone, Debug)]
pub(crate) struct ProtectList {
    globs: DenyList,
    /// Absolute paths (`~/` expanded, symlinks in existing parents
    /// resolved), each with the entry it came from.
    paths: Vec<(PathBuf, String)>,
    /// What a walk looks at first, by an entry's name: the names of the
    /// `**/name` globs and the last names of the absolute paths. A walk
    /// matches other entries' paths against the globs only when some glob
    /// is not of that form.
    names: HashSet<OsString>,
    /// Whether some glob is not `**/name`.
    other_globs: bool,
    /// Directory listings kept between walks.
    listings: Arc<Listings>,
    /// The bytes of protected files read by the last record.
    kept: Arc<KeptCache>,
}

/// Expands `~/x` against `home` and resolves the symlinks of the longest
/// existing parent, so that the path compares with canonical paths.
pub(super) fn absolute(entry: &str, home: Option<&Path>) -> Option<PathBuf> {
    let path = if let Some(rest) = entry.strip_prefix("~/") {
        home?.join(rest)
    } else if entry.starts_with('/') {
        PathBuf::from(entry)
    } else {
        return None;
    };
    let mut existing = path.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            let mut out = canonical;
            out.extend(rest.iter().rev());
            return Some(out);
        }
        let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
            return Some(path);
        };
        rest.push(name.to_owned());
        existing = parent;
    }
}

fn identity(meta: &std::fs::Metadata) -> (u64, u64, bool, Option<std::time::SystemTime>) {
    (meta.dev(), meta.ino(), meta.is_dir(), meta.created().ok())
}

/// A protected entry found on disk, as it was when found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    /// The entry it matched.
    pub(crate) entry: String,
    /// What tells a replaced entry from the one found before: device,
    /// inode, kind and birth time (where the filesystem records it; an
    /// inode number may be reused at once). Never the change time: the
    /// user's own repository changes as it is used and stays the same entry.
    id: (u64, u64, bool, Option<std::time::SystemTime>),
    /// A directory (not a symlink to one).
    pub(crate) is_dir: bool,
}

/// The protected entries present under the writable roots at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ProtectedScan {
    pub(crate) found: BTreeMap<PathBuf, Found>,
}

impl ProtectedScan {
    /// The paths to mount read-only over the writable roots: the existing
    /// entries that are not symlinks (a symlink's target is either outside
    /// the writable roots, and read-only anyway, or found on its own).
    pub(crate) fn mountable(&self) -> Vec<PathBuf> {
        self.found
            .iter()
            .filter(|(path, _)| std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_symlink()))
            .map(|(path, _)| path.clone())
            .collect()
    }
}

/// What a sweep did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Swept {
    /// The entries a command created, removed.
    pub(crate) removed: Vec<Removed>,
    /// Entries found before that a command moved (from, to), left where
    /// they are now.
    pub(crate) moved: Vec<(PathBuf, PathBuf)>,
}

/// A protected entry a command created, and what became of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Removed {
    /// Where it was.
    pub(crate) path: PathBuf,
    /// The protected entry it matched.
    pub(crate) entry: String,
    /// Why it could not be removed, if it could not.
    pub(crate) error: Option<String>,
}

impl ProtectList {
    /// Compiles `entries`; `home` expands `~/` entries (those are skipped
    /// when there is no home directory).
    pub(crate) fn new(entries: &[String], home: Option<&Path>) -> Result<Self, SandboxError> {
        let mut globs = Vec::new();
        let mut paths = Vec::new();
        for entry in entries {
            if entry.starts_with("~/") || entry.starts_with('/') {
                if let Some(path) = absolute(entry, home) {
                    paths.push((path, entry.clone()));
                }
            } else {
                globs.push(entry.clone());
            }
        }
        let mut names = HashSet::new();
        let mut other_globs = false;
        for glob in &globs {
            match glob.strip_prefix("**/") {
                Some(name) if !name.contains(['*', '?', '[', '{', '/', '\\']) => {
                    names.insert(OsString::from(name));
                }
                _ => other_globs = true,
            }
        }
        names.extend(
            paths
                .iter()
                .filter_map(|(p, _)| p.file_name().map(ToOwned::to_owned)),
        );
        Ok(Self {
            globs: DenyList::new(&globs)?,
            paths,
            names,
            other_globs,
            listings: Arc::default(),
            kept: Arc::default(),
        })
    }

    /// The entry that protects `path` (canonical) under `root`: a glob
    /// matching it or a parent relative to the root, or an absolute entry
    /// that is it or a parent.
    pub(crate) fn protecting(&self, root: &Path, path: &Path) -> Option<&str> {
        let relative = path.strip_prefix(root).unwrap_or(path);
        self.globs.denying(relative).or_else(|| {
            self.paths
                .iter()
                .find(|(p, _)| path.starts_with(p))
                .map(|(_, entry)| entry.as_str())
        })
    }

    /// The entry that matches `path` itself (not a parent): where a scan
    /// stops descending.
    fn matching(&self, root: &Path, path: &Path) -> Option<&str> {
        let relative = path.strip_prefix(root).unwrap_or(path);
        self.globs.matching(relative).or_else(|| {
            self.paths
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, entry)| entry.as_str())
        })
    }

    /// Every protected entry under `roots` now, at any depth. Symlinks are
    /// not followed; a protected directory is not entered (it is covered
    /// whole). The directory a `.git` file points to (`gitdir: …`) is
    /// protected with it when it lies under a root.
    pub(crate) fn scan(&self, roots: &[PathBuf]) -> ProtectedScan {
        let mut scan = ProtectedScan::default();
        if !self.is_empty() {
            for root in roots {
                self.scan_into(roots, root, root, &mut scan);
            }
        }
        scan
    }

    /// The protected entries below the directory `start` under `root`.
    pub(crate) fn scan_below(&self, root: &Path, start: &Path) -> ProtectedScan {
        let mut scan = ProtectedScan::default();
        if !self.is_empty() {
            let roots = [root.to_path_buf()];
            self.scan_into(&roots, root, start, &mut scan);
        }
        scan
    }

    fn scan_into(&self, roots: &[PathBuf], root: &Path, start: &Path, scan: &mut ProtectedScan) {
        let mut pending = vec![start.to_path_buf()];
        while let Some(dir) = pending.pop() {
            // Most entries are neither named like a protected one nor
            // matched by another glob: no path matched, no `stat`, and a
            // directory unchanged since the last walk is not even listed.
            let named = |name: &std::ffi::OsStr| self.other_globs || self.names.contains(name);
            let Some(listing) = self.listings.list(&dir, named) else {
                continue;
            };
            pending.extend(listing.subdirs.iter().cloned());
            for path in &listing.named {
                let Ok(meta) = std::fs::symlink_metadata(path) else {
                    continue;
                };
                if let Some(matched) = self.matching(root, path) {
                    if meta.is_file() && path.file_name().is_some_and(|n| n == ".git") {
                        self.add_gitdir(roots, path, matched, scan);
                    }
                    scan.found.insert(
                        path.clone(),
                        Found {
                            entry: matched.to_owned(),
                            id: identity(&meta),
                            is_dir: meta.is_dir(),
                        },
                    );
                } else if meta.is_dir() {
                    pending.push(path.clone());
                }
            }
        }
    }

    /// Protects the directory a `.git` file names, when it is under a root.
    fn add_gitdir(&self, roots: &[PathBuf], gitfile: &Path, entry: &str, scan: &mut ProtectedScan) {
        use std::io::Read;
        let mut text = String::new();
        let read = std::fs::File::open(gitfile)
            .and_then(|f| f.take(GITFILE_BYTES).read_to_string(&mut text));
        if read.is_err() {
            return;
        }
        let Some(target) = text.lines().find_map(|l| l.strip_prefix("gitdir:")) else {
            return;
        };
        let target = Path::new(target.trim());
        let joined = match gitfile.parent() {
            Some(parent) if target.is_relative() => parent.join(target),
            _ => target.to_path_buf(),
        };
        let Ok(canonical) = joined.canonicalize() else {
            return;
        };
        if !roots.iter().any(|r| canonical.starts_with(r)) {
            return;
        }
        if canonical.components().any(|c| c == Component::ParentDir) {
            return;
        }
        if let Ok(meta) = std::fs::symlink_metadata(&canonical) {
            scan.found.insert(
                canonical,
                Found {
                    entry: entry.to_owned(),
                    id: identity(&meta),
                    is_dir: meta.is_dir(),
                },
            );
        }
    }

    /// Removes every protected entry under `roots` that is not in `before`
    /// (or was replaced since): what a command created. Directories are
    /// removed with their contents, symlinks themselves (never followed).
    /// An entry found before that is now somewhere else (the same inode and
    /// birth time, and nothing of it left where it was: a directory holding
    /// it was renamed) was moved, not created, and stays; on a filesystem
    /// that records no birth times it counts as created.
    pub(crate) fn sweep(&self, roots: &[PathBuf], before: &ProtectedScan) -> Swept {
        let after = self.scan(roots);
        let mut swept = Swept::default();
        let removed = &mut swept.removed;
        for (path, found) in &after.found {
            if before.found.get(path).is_some_and(|old| old.id == found.id) {
                continue;
            }
            // Only where the filesystem records birth times: without one,
            // a new entry given a just-freed inode number would pass for a
            // moved one.
            let moved_from = before.found.iter().find(|(from, old)| {
                old.id == found.id
                    && found.id.3.is_some()
                    && *from != path
                    && after.found.get(*from).is_none_or(|now| now.id != old.id)
            });
            if let Some((from, _)) = moved_from {
                swept.moved.push((from.clone(), path.clone()));
                continue;
            }
            let (path, found) = (path.clone(), found.clone());
            // A gitdir target found only now was there before under another
            // name; only the entries themselves are removed.
            if !before.found.contains_key(&path) && self.matching_any_root(roots, &path).is_none() {
                continue;
            }
            let result = if found.is_dir {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.push(Removed {
                path,
                entry: found.entry,
                error: result.err().map(|e| e.to_string()),
            });
        }
        swept
    }

    fn matching_any_root(&self, roots: &[PathBuf], path: &Path) -> Option<&str> {
        let root = roots.iter().find(|r| path.starts_with(r))?;
        self.matching(root, path)
    }

    /// The bytes of protected files read by the last record (see
    /// [`crate::path::Kept`]).
    pub(crate) fn kept_cache(&self) -> &KeptCache {
        &self.kept
    }

    /// Whether nothing is protected.
    pub(crate) fn is_empty(&self) -> bool {
        self.globs.is_empty() && self.paths.is_empty()
    }
}

/// One line per removed entry, for the command's output.
pub(crate) fn describe_removed(removed: &[Removed], shown: impl Fn(&Path) -> String) -> String {
    let mut text = String::new();
    for r in removed {
        let what = shown(&r.path);
        match &r.error {
            None => text.push_str(&format!(
                "tack: removed {what}, which this command created: it matches the protected \
                 entry `{}` (programs outside the sandbox run what such files contain); \
                 the user can lift this with SandboxPolicy::without_protected(\"{}\")\n",
                r.entry, r.entry
            )),
            Some(error) => text.push_str(&format!(
                "tack: could NOT remove {what}, which this command created and which matches \
                 the protected entry `{}`: {error}; review it before running other programs here\n",
                r.entry
            )),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str], home: Option<&Path>) -> ProtectList {
        ProtectList::new(
            &entries.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
            home,
        )
        .unwrap()
    }

    #[test]
    fn names_match_at_any_depth_and_cover_their_contents() {
        let p = list(&["**/.git"], None);
        let root = Path::new("/ws");
        for path in [
            "/ws/.git",
            "/ws/.git/config",
            "/ws/a/.git",
            "/ws/a/b/c/.git/hooks/x",
        ] {
            assert_eq!(
                p.protecting(root, Path::new(path)),
                Some("**/.git"),
                "{path}"
            );
        }
        for path in ["/ws/.gitignore", "/ws/a/x.git", "/ws/src/main.rs"] {
            assert_eq!(p.protecting(root, Path::new(path)), None, "{path}");
        }
    }

    #[test]
    fn home_entries_expand_and_match_inside_a_root_containing_home() {
        let home = tempfile::tempdir().unwrap();
        let canonical = home.path().canonicalize().unwrap();
        let p = list(&["~/.bashrc", "~/.config/tack"], Some(home.path()));
        let bashrc = canonical.join(".bashrc");
        assert_eq!(p.protecting(&canonical, &bashrc), Some("~/.bashrc"));
        assert_eq!(
            p.protecting(&canonical, &canonical.join(".config/tack/settings.json")),
            Some("~/.config/tack")
        );
        assert_eq!(
            p.protecting(&canonical, &canonical.join(".bashrc.bak")),
            None
        );
        // Without a home directory the entries are skipped.
        assert!(list(&["~/.bashrc"], None).is_empty());
    }

    #[test]
    fn a_scan_finds_directories_files_and_gitdir_targets_and_a_sweep_removes_new_ones() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("vendor/lib/.git")).unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(root.join("planted")).unwrap();
        std::fs::write(root.join("sub/.git"), "gitdir: ../planted\n").unwrap();
        let p = list(&["**/.git"], None);
        let roots = vec![root.clone()];
        let before = p.scan(&roots);
        let found: Vec<_> = before.found.keys().cloned().collect();
        assert_eq!(
            found,
            [
                root.join("planted"),
                root.join("sub/.git"),
                root.join("vendor/lib/.git")
            ]
        );
        // A new .git at depth 3 and a replaced one are swept; the rest stays.
        std::fs::create_dir_all(root.join("a/b/c/.git/hooks")).unwrap();
        std::fs::remove_dir_all(root.join("vendor/lib/.git")).unwrap();
        std::fs::write(root.join("vendor/lib/.git"), "gitdir: /elsewhere\n").unwrap();
        let removed = p.sweep(&roots, &before).removed;
        let paths: Vec<_> = removed.iter().map(|r| r.path.clone()).collect();
        assert_eq!(
            paths,
            [root.join("a/b/c/.git"), root.join("vendor/lib/.git")]
        );
        assert!(removed.iter().all(|r| r.error.is_none()));
        assert!(!root.join("a/b/c/.git").exists());
        assert!(root.join("a/b/c").is_dir());
        assert!(root.join("sub/.git").is_file());
        assert!(root.join("planted").is_dir());
    }

    #[test]
    fn a_moved_entry_is_not_swept_and_a_replaced_one_is() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("vendor/lib/.git/objects")).unwrap();
        std::fs::create_dir_all(root.join("other/.git")).unwrap();
        if std::fs::metadata(&root).and_then(|m| m.created()).is_err() {
            return; // No birth times here: a moved entry counts as created.
        }
        let p = list(&["**/.git"], None);
        let roots = vec![root.clone()];
        let before = p.scan(&roots);
        std::fs::rename(root.join("vendor/lib"), root.join("vendor/lib2")).unwrap();
        std::fs::remove_dir_all(root.join("other/.git")).unwrap();
        std::fs::create_dir_all(root.join("other/.git")).unwrap();
        let swept = p.sweep(&roots, &before);
        assert_eq!(
            swept.moved,
            [(root.join("vendor/lib/.git"), root.join("vendor/lib2/.git"))]
        );
        let removed: Vec<_> = swept.removed.iter().map(|r| r.path.clone()).collect();
        assert_eq!(removed, [root.join("other/.git")]);
        assert!(root.join("vendor/lib2/.git/objects").is_dir());
    }

    #[test]
    fn a_sweep_removes_a_symlink_not_its_target() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), "x").unwrap();
        let root = ws.path().canonicalize().unwrap();
        let p = list(&["**/.git"], None);
        let before = p.scan(std::slice::from_ref(&root));
        std::os::unix::fs::symlink(outside.path(), root.join(".git")).unwrap();
        let removed = p.sweep(std::slice::from_ref(&root), &before).removed;
        assert_eq!(removed.len(), 1);
        assert!(std::fs::symlink_metadata(root.join(".git")).is_err());
        assert!(outside.path().join("keep").is_file());
    }
}
