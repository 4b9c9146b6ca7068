//! Hidden paths: the user's credentials and tack's own state, unreadable to
//! the tools and to commands ([`SandboxPolicy::with_hidden`](crate::SandboxPolicy::with_hidden)).
//!
//! An entry is `~/path` (under the home directory) or an absolute `/path`;
//! it hides itself and everything under it. Entries are compared after the
//! symlinks of their existing part are resolved, like the canonical paths
//! they are matched with.

use std::path::{Path, PathBuf};

use crate::error::SandboxError;
use crate::path::protect::absolute;

/// Compiled hidden entries.
#[derive(Clone, Debug, Default)]
pub(crate) struct HideList {
    /// Absolute paths, each with the entry it came from.
    paths: Vec<(PathBuf, String)>,
}

impl HideList {
    /// Compiles `entries`; `home` expands `~/` entries (skipped without a
    /// home directory). An entry that contains one of `roots` is left out
    /// (logged): hiding it would hide a root the user chose.
    pub(crate) fn new(
        entries: &[String],
        home: Option<&Path>,
        roots: &[PathBuf],
    ) -> Result<Self, SandboxError> {
        let mut paths = Vec::new();
        for entry in entries {
            if !entry.starts_with("~/") && !entry.starts_with('/') {
                return Err(SandboxError::InvalidHidden {
                    entry: entry.clone(),
                });
            }
            let Some(path) = absolute(entry, home) else {
                continue;
            };
            if let Some(root) = roots.iter().find(|root| root.starts_with(&path)) {
                tracing::warn!(
                    entry,
                    root = %root.display(),
                    "a hidden path contains a sandbox root: it is not hidden in this sandbox"
                );
                continue;
            }
            paths.push((path, entry.clone()));
        }
        Ok(Self { paths })
    }

    /// The entry that hides `path` (canonical): it or one of its parents.
    pub(crate) fn hiding(&self, path: &Path) -> Option<&str> {
        self.paths
            .iter()
            .find(|(p, _)| path.starts_with(p))
            .map(|(_, entry)| entry.as_str())
    }

    /// The entry hidden somewhere strictly below `path`.
    pub(crate) fn hidden_below(&self, path: &Path) -> Option<(&Path, &str)> {
        self.paths
            .iter()
            .find(|(p, _)| p != path && p.starts_with(path))
            .map(|(p, entry)| (p.as_path(), entry.as_str()))
    }

    /// Every hidden path (existing or not).
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        self.paths.iter().map(|(p, _)| p.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str], home: Option<&Path>, roots: &[PathBuf]) -> HideList {
        let entries: Vec<String> = entries.iter().map(|e| (*e).to_owned()).collect();
        HideList::new(&entries, home, roots).unwrap()
    }

    #[test]
    fn entries_hide_themselves_and_their_contents() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path().canonicalize().unwrap();
        let hide = list(&["~/.ssh", "/srv/keys"], Some(&home), &[]);
        assert_eq!(hide.hiding(&home.join(".ssh/id_rsa")), Some("~/.ssh"));
        assert_eq!(hide.hiding(&home.join(".ssh")), Some("~/.ssh"));
        assert_eq!(hide.hiding(&home.join(".sshd")), None);
        assert_eq!(hide.hiding(Path::new("/srv/keys/a")), Some("/srv/keys"));
        assert_eq!(hide.hidden_below(&home).map(|(_, e)| e), Some("~/.ssh"));
        assert_eq!(hide.hidden_below(&home.join(".ssh")), None);
    }

    #[test]
    fn without_a_home_home_entries_hide_nothing_and_a_root_inside_lifts_its_entry() {
        assert!(list(&["~/.ssh"], None, &[]).paths().is_empty());
        let hide = list(
            &["/srv/keys", "/srv/other"],
            None,
            &[PathBuf::from("/srv/keys/project")],
        );
        assert_eq!(hide.paths(), [PathBuf::from("/srv/other")]);
    }

    #[test]
    fn a_relative_entry_is_refused_with_the_fix() {
        let err = HideList::new(&[".ssh".to_owned()], None, &[]).unwrap_err();
        assert!(
            err.to_string().contains("name it as /path or ~/path"),
            "{err}"
        );
    }
}
