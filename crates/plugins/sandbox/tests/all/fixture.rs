//! A workspace next to an "outside" directory holding a secret.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tack_sandbox::{CommandAdmission, Sandbox, SandboxPolicy};
use tempfile::TempDir;

pub const SECRET: &str = "top secret, outside the workspace\n";

pub struct Fixture {
    pub ws: TempDir,
    pub outside: TempDir,
}

impl Fixture {
    pub fn new() -> Self {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), SECRET).unwrap();
        Self { ws, outside }
    }

    /// The canonical workspace path.
    pub fn ws(&self) -> PathBuf {
        self.ws.path().canonicalize().unwrap()
    }

    /// The canonical outside path.
    pub fn outside(&self) -> PathBuf {
        self.outside.path().canonicalize().unwrap()
    }

    pub fn workspace_write(&self) -> Sandbox {
        Sandbox::new(SandboxPolicy::workspace_write(self.ws.path())).unwrap()
    }

    pub fn link(&self, name: &str, target: impl AsRef<Path>) {
        std::os::unix::fs::symlink(target, self.ws.path().join(name)).unwrap();
    }

    /// Every path under the outside directory with its contents (dirs: None).
    pub fn outside_snapshot(&self) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        snapshot(self.outside.path())
    }
}

pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut all = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                pending.push(path.clone());
                all.insert(path, None);
            } else if kind.is_file() {
                all.insert(path.clone(), Some(std::fs::read(&path).unwrap()));
            } else {
                all.insert(path, None);
            }
        }
    }
    all
}

/// Whether this sandbox runs commands here; prints why not when it does not.
pub fn runs_commands(sandbox: &Sandbox, test: &str) -> bool {
    let status = sandbox.status();
    match status.policy.map(|p| p.commands) {
        Some(CommandAdmission::Refused { reason }) => {
            println!("{test}: skipped, this kernel cannot confine commands: {reason}");
            false
        }
        _ => true,
    }
}
