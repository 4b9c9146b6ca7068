//! Where OAuth tokens are kept between sessions: one JSON file, mode 0600,
//! holding each server's credentials under its URL. The host names the
//! file (tack's CLI: `$XDG_STATE_HOME/tack/mcp-oauth.json`, outside the
//! workspace); it is rewritten whole (a temporary file renamed over it)
//! under an exclusive lock on `<file>.lock`, so two processes signing in at
//! once keep each other's entries. Without a file, tokens live only as long
//! as the process.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};

#[derive(Default, Serialize, Deserialize)]
struct Shape {
    version: u32,
    /// Server URL → its credentials.
    servers: BTreeMap<String, StoredCredentials>,
}

/// The token file, shared by every server of a client (writes are one at
/// a time within the process).
#[derive(Clone, Debug)]
pub(crate) struct TokenFile {
    path: PathBuf,
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl TokenFile {
    pub(crate) fn new(path: PathBuf) -> Self {
        TokenFile {
            path,
            lock: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    /// The credentials of the server at `url`, as a store of rmcp's.
    pub(crate) fn for_server(&self, url: &str) -> ServerTokens {
        ServerTokens {
            file: self.clone(),
            url: url.to_owned(),
            known: tokio::sync::Mutex::new(None),
        }
    }

    fn read(&self) -> Result<Shape, AuthError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                AuthError::CredentialStoreError(format!(
                    "the OAuth token file {} is not valid ({e}); delete it to sign in again",
                    self.path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Shape::default()),
            Err(e) => Err(AuthError::CredentialStoreError(format!(
                "cannot read the OAuth token file {}: {e}",
                self.path.display()
            ))),
        }
    }

    /// Applies `change` to the file on disk: read, changed and written
    /// under the lock (another process's entries kept).
    fn change(&self, change: impl FnOnce(&mut Shape) -> bool) -> Result<(), AuthError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        create_private_dir(dir).map_err(|e| {
            AuthError::CredentialStoreError(format!("cannot create {}: {e}", dir.display()))
        })?;
        let _lock = lock(&self.path)?;
        let mut shape = self.read()?;
        if change(&mut shape) {
            self.write(shape)?;
        }
        Ok(())
    }

    fn write(&self, mut shape: Shape) -> Result<(), AuthError> {
        shape.version = 1;
        let bad = |e: std::io::Error| {
            AuthError::CredentialStoreError(format!(
                "cannot write the OAuth token file {}: {e}",
                self.path.display()
            ))
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        create_private_dir(dir).map_err(bad)?;
        let text = serde_json::to_vec_pretty(&shape)
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "mcp-oauth.json".to_owned());
        let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let mut file = private_file(&temporary).map_err(bad)?;
        file.write_all(&text).map_err(bad)?;
        file.sync_all().map_err(bad)?;
        drop(file);
        std::fs::rename(&temporary, &self.path).map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            bad(e)
        })
    }
}

/// An exclusive lock on `<path>.lock` (released when dropped).
#[cfg(unix)]
fn lock(path: &Path) -> Result<nix::fcntl::Flock<std::fs::File>, AuthError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let lock_path = PathBuf::from(name);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&lock_path)
        .map_err(|e| {
            AuthError::CredentialStoreError(format!(
                "cannot open the lock {}: {e}",
                lock_path.display()
            ))
        })?;
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive).map_err(|(_, e)| {
        AuthError::CredentialStoreError(format!("cannot lock {}: {e}", lock_path.display()))
    })
}

#[cfg(not(unix))]
fn lock(_path: &Path) -> Result<(), AuthError> {
    Ok(())
}

#[cfg(unix)]
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::create(path)
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// One server's entry of the [`TokenFile`]. The file is read once (the
/// token is asked for before every request) and written on every change.
pub(crate) struct ServerTokens {
    file: TokenFile,
    url: String,
    /// The entry as last read or written (`None`: not read yet).
    known: tokio::sync::Mutex<Option<Option<StoredCredentials>>>,
}

#[async_trait::async_trait]
impl CredentialStore for ServerTokens {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let mut known = self.known.lock().await;
        if let Some(entry) = &*known {
            return Ok(entry.clone());
        }
        let entry = {
            let _one = self.file.lock.lock().await;
            self.file.read()?.servers.remove(&self.url)
        };
        *known = Some(entry.clone());
        Ok(entry)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let mut known = self.known.lock().await;
        let _one = self.file.lock.lock().await;
        self.file.change(|shape| {
            shape.servers.insert(self.url.clone(), credentials.clone());
            true
        })?;
        *known = Some(Some(credentials));
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let mut known = self.known.lock().await;
        let _one = self.file.lock.lock().await;
        self.file
            .change(|shape| shape.servers.remove(&self.url).is_some())?;
        *known = Some(None);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credentials(client: &str) -> StoredCredentials {
        StoredCredentials::new(client.to_owned(), None, vec!["a".to_owned()], Some(1))
    }

    #[tokio::test]
    async fn tokens_are_kept_per_server_in_a_private_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/tack/mcp-oauth.json");
        let file = TokenFile::new(path.clone());
        let one = file.for_server("https://one.example/mcp");
        let two = file.for_server("https://two.example/mcp");
        assert!(one.load().await.unwrap().is_none());
        one.save(credentials("c1")).await.unwrap();
        two.save(credentials("c2")).await.unwrap();
        assert_eq!(one.load().await.unwrap().unwrap().client_id, "c1");
        assert_eq!(two.load().await.unwrap().unwrap().client_id, "c2");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{mode:o}");
            let dir_mode = std::fs::metadata(path.parent().unwrap())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(dir_mode & 0o077, 0, "{dir_mode:o}");
        }
        one.clear().await.unwrap();
        assert!(one.load().await.unwrap().is_none());
        assert_eq!(two.load().await.unwrap().unwrap().client_id, "c2");
        // The entry is read once; another process's store (a new one)
        // reads what the last one wrote.
        let other = TokenFile::new(path.clone()).for_server("https://two.example/mcp");
        assert_eq!(other.load().await.unwrap().unwrap().client_id, "c2");
        other.save(credentials("c3")).await.unwrap();
        assert_eq!(two.load().await.unwrap().unwrap().client_id, "c2");
        let again = TokenFile::new(path.clone()).for_server("https://two.example/mcp");
        assert_eq!(again.load().await.unwrap().unwrap().client_id, "c3");
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        let mut names: Vec<String> = names
            .into_iter()
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["mcp-oauth.json", "mcp-oauth.json.lock"]);
    }

    /// Writers that share no memory (as two processes do) keep each
    /// other's entries: each change is made under the file's lock.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn writers_of_their_own_keep_each_others_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp-oauth.json");
        let writers: Vec<_> = (0..4)
            .map(|writer| {
                let path = path.clone();
                tokio::spawn(async move {
                    for n in 0..25 {
                        let url = format!("https://s{writer}-{n}.example/mcp");
                        TokenFile::new(path.clone())
                            .for_server(&url)
                            .save(credentials("c"))
                            .await
                            .unwrap();
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.await.unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let kept: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(kept["servers"].as_object().unwrap().len(), 100, "{text}");
    }

    #[tokio::test]
    async fn a_damaged_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp-oauth.json");
        std::fs::write(&path, "not json").unwrap();
        let err = TokenFile::new(path)
            .for_server("https://one.example/mcp")
            .load()
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("mcp-oauth.json") && err.contains("delete"),
            "{err}"
        );
    }
}
