//! Landlock read rules that leave out the hidden paths.
//!
//! Landlock only grants: a right on a directory holds for everything under
//! it. To keep a hidden path unreadable while the rest of the filesystem
//! stays readable, read is granted not on `/` but on every entry next to a
//! hidden path and next to each directory on the way to it, never on those
//! directories themselves. They cannot be listed then, and an entry created
//! in one of them after the rules were made cannot be read.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The paths to grant read beneath so that everything but `hidden` (and
/// the directories on the way to them) is readable. Only hidden paths that
/// exist count; with none, `/` alone. Symlinks are skipped (access through
/// one is checked where it leads), and a directory that cannot be listed
/// grants nothing inside it.
pub(crate) fn readable_around(hidden: &[PathBuf]) -> Vec<PathBuf> {
    let hidden: BTreeSet<&Path> = hidden
        .iter()
        .map(PathBuf::as_path)
        .filter(|p| p.is_absolute() && std::fs::symlink_metadata(p).is_ok())
        .collect();
    if hidden.is_empty() {
        return vec![PathBuf::from("/")];
    }
    let on_the_way: BTreeSet<&Path> = hidden.iter().flat_map(|p| p.ancestors().skip(1)).collect();
    let mut readable = Vec::new();
    for dir in &on_the_way {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let skipped = hidden.contains(path.as_path())
                || on_the_way.contains(path.as_path())
                || entry.file_type().map_or(true, |t| t.is_symlink());
            if !skipped {
                readable.push(path);
            }
        }
    }
    readable
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_but_the_hidden_path_and_its_way_is_granted() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().canonicalize().unwrap();
        for sub in [".ssh", ".config/gh", ".config/fish", "work"] {
            std::fs::create_dir_all(home.join(sub)).unwrap();
        }
        std::fs::write(home.join(".netrc"), "machine").unwrap();
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).unwrap();
        let hidden = [
            home.join(".ssh"),
            home.join(".config/gh"),
            home.join(".missing"),
        ];
        let readable = readable_around(&hidden);
        for granted in [
            home.join(".netrc"),
            home.join("work"),
            home.join(".config/fish"),
        ] {
            assert!(readable.contains(&granted), "{granted:?} in {readable:?}");
        }
        for never in [
            home.join(".ssh"),
            home.join(".config"),
            home.join(".config/gh"),
            home.join("keys"),
            home.clone(),
            PathBuf::from("/"),
        ] {
            assert!(!readable.contains(&never), "{never:?} in {readable:?}");
        }
        // Next to the way up: the home's siblings are granted.
        let parent = home.parent().unwrap();
        assert!(readable.iter().any(|p| p.parent() == Some(parent)));
    }

    #[test]
    fn nothing_hidden_grants_the_root() {
        assert_eq!(
            readable_around(&[PathBuf::from("/nonexistent/tack/.ssh")]),
            [PathBuf::from("/")]
        );
    }
}
