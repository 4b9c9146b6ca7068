//! The trust store: which files defining hooks or MCP servers the user
//! reviewed, by canonical path and the SHA-256 of their exact contents,
//! and the files inside the workspace their commands run (see
//! [`super::command_files`]), each an entry of its own: its SHA-256, or
//! [`MISSING`] for one that did not exist and must not appear. (Older
//! `tack`s read the same shape.)
//!
//! It lives in the user's state directory (`$XDG_STATE_HOME/tack/trust.json`,
//! or `~/.local/state/tack/trust.json`), outside the workspace the tools
//! can write. It is rewritten whole (a temporary file renamed over it)
//! under an exclusive lock on `trust.json.lock`, so two `tack trust` runs
//! never lose each other's entries.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The trust store's file: `<state home>/tack/trust.json`.
///
/// # Errors
///
/// Neither `XDG_STATE_HOME` nor `HOME` is an absolute path.
pub fn default_path() -> Result<PathBuf, String> {
    tack_agent::state_home_from_env()
        .map(|state| state.join("tack").join("trust.json"))
        .ok_or_else(|| {
            "cannot place the trust store: neither XDG_STATE_HOME nor HOME is set to an absolute path; set one"
                .to_owned()
        })
}

/// The `sha256` of a file recorded as missing: it did not exist when
/// trusted, and its appearing is refused. (No SHA-256 is written so.)
pub const MISSING: &str = "missing";

/// One trusted file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The SHA-256 (hex) of the contents that were reviewed.
    pub sha256: String,
    /// When it was trusted (seconds since the Unix epoch).
    pub trusted_at: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Shape {
    version: u32,
    /// Canonical path → entry.
    files: BTreeMap<PathBuf, Entry>,
}

/// The store's entries, read from its file.
#[derive(Debug)]
pub struct TrustStore {
    path: PathBuf,
    files: BTreeMap<PathBuf, Entry>,
}

impl TrustStore {
    /// Reads the store at `path`; a missing file is an empty store.
    ///
    /// # Errors
    ///
    /// The file cannot be read or is not a trust store (the message names it).
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self {
                    path: path.to_owned(),
                    files: BTreeMap::new(),
                });
            }
            Err(e) => {
                return Err(format!(
                    "cannot read the trust store {}: {e}",
                    path.display()
                ));
            }
        };
        let shape: Shape = serde_json::from_str(&text).map_err(|e| {
            format!(
                "the trust store {} is damaged ({e}); delete it and trust your workspaces' hook and MCP files again with `tack trust`",
                path.display()
            )
        })?;
        if shape.version != 1 {
            return Err(format!(
                "the trust store {} has version {}, which this tack does not know; upgrade tack, or delete the file and trust your files again with `tack trust`",
                path.display(),
                shape.version
            ));
        }
        Ok(Self {
            path: path.to_owned(),
            files: shape.files,
        })
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entry of `canonical`, if trusted.
    pub fn get(&self, canonical: &Path) -> Option<&Entry> {
        self.files.get(canonical)
    }

    /// The state recorded for the file `path` a command runs: `None` when
    /// nothing is recorded, `Some(None)` when it was recorded missing.
    pub fn recorded(&self, path: &Path) -> Option<Option<String>> {
        self.files
            .get(path)
            .map(|entry| (entry.sha256 != MISSING).then(|| entry.sha256.clone()))
    }

    /// Every recorded state (see [`TrustStore::recorded`]), by path.
    pub fn all_recorded(&self) -> BTreeMap<PathBuf, Option<String>> {
        self.files
            .keys()
            .filter_map(|path| self.recorded(path).map(|state| (path.clone(), state)))
            .collect()
    }

    /// Every entry, by canonical path.
    pub fn entries(&self) -> impl Iterator<Item = (&Path, &Entry)> {
        self.files.iter().map(|(p, e)| (p.as_path(), e))
    }

    /// Applies `change` to the store on disk: under the lock, the file is
    /// read again, changed, and written to a temporary file renamed over
    /// it. `self` then holds the new entries.
    ///
    /// # Errors
    ///
    /// The directory, lock or file cannot be written, or the file on disk
    /// is damaged.
    pub fn update(
        &mut self,
        change: impl FnOnce(&mut BTreeMap<PathBuf, Entry>),
    ) -> Result<(), String> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let name = self.path.display().to_string();
        let dir = self
            .path
            .parent()
            .ok_or_else(|| format!("the trust store {name} has no directory"))?;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let lock_path = self.path.with_extension("json.lock");
        let lock_file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&lock_path)
            .map_err(|e| format!("cannot open the lock {}: {e}", lock_path.display()))?;
        let _lock = nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| format!("cannot lock {}: {e}", lock_path.display()))?;
        let mut fresh = Self::load(&self.path)?;
        change(&mut fresh.files);
        let text = serde_json::to_string_pretty(&Shape {
            version: 1,
            files: fresh.files.clone(),
        })
        .map_err(|e| format!("cannot write the trust store {name}: {e}"))?;
        let temp = dir.join(format!(".trust.json.{}.tmp", std::process::id()));
        let written = (|| {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(true)
                .write(true)
                .mode(0o600)
                .open(&temp)?;
            file.write_all(text.as_bytes())?;
            file.write_all(b"\n")?;
            file.sync_all()?;
            std::fs::rename(&temp, &self.path)
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(format!("cannot write the trust store {name}: {e}"));
        }
        self.files = fresh.files;
        Ok(())
    }
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_is_empty_damaged_is_named_and_updates_keep_both_writers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/tack/trust.json");
        let mut store = TrustStore::load(&path).unwrap();
        assert_eq!(store.entries().count(), 0);
        let entry = |s: &str| Entry {
            sha256: s.to_owned(),
            trusted_at: 1,
        };
        store
            .update(|f| {
                f.insert("/a".into(), entry("aa"));
            })
            .unwrap();
        // A second writer that loaded before the first wrote keeps both.
        let mut other = TrustStore::load(&path).unwrap();
        other.files.clear();
        other
            .update(|f| {
                f.insert("/b".into(), entry("bb"));
            })
            .unwrap();
        let again = TrustStore::load(&path).unwrap();
        assert_eq!(again.get(Path::new("/a")), Some(&entry("aa")));
        assert_eq!(again.get(Path::new("/b")), Some(&entry("bb")));
        std::fs::write(&path, "{not json").unwrap();
        let err = TrustStore::load(&path).unwrap_err();
        assert!(
            err.contains(&path.display().to_string()) && err.contains("damaged"),
            "{err}"
        );
        assert!(
            other.update(|_| {}).is_err(),
            "a damaged store is not overwritten"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
    }

    #[test]
    fn sha256_is_of_the_exact_bytes() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
