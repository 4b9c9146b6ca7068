//! The endpoint processes the tests start: the `restate_fixture` example
//! (`examples/restate_fixture.rs`, built on demand), one process per
//! endpoint, stopped by pid.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use crate::restate::{free_port, nix_kill, wait_until};

/// The `restate_fixture` example's executable, built once
/// (`cargo build --example`; its path from cargo's own report).
fn fixture_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let output = Command::new(cargo)
            .args([
                "build",
                "-q",
                "-p",
                "tack-restate",
                "--example",
                "restate_fixture",
                "--message-format=json",
            ])
            .stderr(Stdio::inherit())
            .output()
            .expect("run cargo build");
        assert!(
            output.status.success(),
            "cannot build the restate_fixture example"
        );
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|m| m["target"]["name"] == "restate_fixture")
            .find_map(|m| m["executable"].as_str().map(PathBuf::from))
            .expect("cargo reports the example's executable")
    })
}

/// An endpoint process, stopped (by pid) when dropped.
pub struct EndpointProcess {
    child: Option<Child>,
    name: String,
    key: Option<String>,
    dir: PathBuf,
    /// Its port.
    pub port: u16,
}

impl EndpointProcess {
    /// Starts endpoint `name` serving sessions whose files are under `dir`.
    pub fn spawn(name: &str, dir: &Path) -> Self {
        Self::spawn_with_key(name, dir, None)
    }

    /// [`spawn`](Self::spawn), serving only requests signed by the server
    /// whose request-identity public key is `key`.
    pub fn spawn_with_key(name: &str, dir: &Path, key: Option<&str>) -> Self {
        let mut process = Self {
            child: None,
            name: name.to_owned(),
            key: key.map(str::to_owned),
            dir: dir.to_owned(),
            port: free_port(),
        };
        process.start();
        process
    }

    /// `http://127.0.0.1:PORT`.
    pub fn uri(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn start(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("endpoint-{}.log", self.name)))
            .expect("endpoint log");
        let mut command = Command::new(fixture_binary());
        if let Some(key) = &self.key {
            command.env("TACK_RESTATE_FIXTURE_KEY", key);
        }
        let child = command
            .env("TACK_RESTATE_FIXTURE_DIR", &self.dir)
            .env("TACK_RESTATE_FIXTURE_NAME", &self.name)
            .env("TACK_RESTATE_FIXTURE_PORT", self.port.to_string())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start the endpoint");
        self.child = Some(child);
        let address = format!("127.0.0.1:{}", self.port);
        wait_until("the endpoint to listen", Duration::from_secs(60), || {
            std::net::TcpStream::connect(&address).is_ok()
        });
    }

    /// Kills the process with SIGKILL (nothing runs after it).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            nix_kill(&child, "KILL").expect("kill -KILL");
            let _ = child.wait();
        }
    }

    /// Stops the process with SIGTERM.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = nix_kill(&child, "TERM");
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port.
    pub fn restart(&mut self) {
        self.start();
    }
}

impl Drop for EndpointProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
