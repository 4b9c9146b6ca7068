//! A Restate server for one test: its own ports (ingress, admin,
//! node-to-node) and its data in the test's scratch directory.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free port on the loopback interface.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind 127.0.0.1:0")
        .local_addr()
        .expect("local address")
        .port()
}

/// The restate-server binary: `$TACK_RESTATE_SERVER`, or the one
/// `.ci/run` installs with `npm ci --prefix .ci/restate`.
fn server_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("TACK_RESTATE_SERVER") {
        return Some(PathBuf::from(path));
    }
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "../../.ci/restate/node_modules/@restatedev/restate-server-{}-{arch}/bin/restate-server",
        std::env::consts::OS
    ));
    path.is_file().then_some(path)
}

/// Polls `check` until it holds; panics with `what` after `limit`
/// (readiness of real processes, not a timing assertion).
pub fn wait_until(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < limit,
            "gave up waiting for {what} after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A running restate-server, stopped (by pid) when dropped.
pub struct Restate {
    child: Option<Child>,
    dir: PathBuf,
    extra: String,
    ports: (u16, u16, u16),
    /// `http://127.0.0.1:PORT` of the ingress.
    pub ingress: String,
    /// `http://127.0.0.1:PORT` of the admin API.
    pub admin: String,
}

impl Restate {
    /// Starts a server with its data under `scratch`; `None` (the test is
    /// skipped, with a note) when restate-server is not installed, except
    /// under CI (`CI=true`), where that fails the test.
    pub fn start(scratch: &Path) -> Option<Self> {
        Self::start_with(scratch, "")
    }

    /// [`start`](Self::start), with `extra` appended to its configuration.
    pub fn start_with(scratch: &Path, extra: &str) -> Option<Self> {
        let Some(_) = server_binary() else {
            if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                panic!(
                    "restate-server is not installed: run `npm ci --prefix .ci/restate` (CI installs it in .ci/run) or set TACK_RESTATE_SERVER"
                );
            }
            eprintln!(
                "skipped: restate-server is not installed (npm ci --prefix .ci/restate, or set TACK_RESTATE_SERVER)"
            );
            return None;
        };
        let dir = scratch.join("restate");
        std::fs::create_dir_all(&dir).expect("restate dir");
        let ports = (free_port(), free_port(), free_port());
        let mut server = Self {
            child: None,
            dir,
            extra: extra.to_owned(),
            ports,
            ingress: format!("http://127.0.0.1:{}", ports.0),
            admin: format!("http://127.0.0.1:{}", ports.1),
        };
        server.boot();
        Some(server)
    }

    fn boot(&mut self) {
        let (ingress, admin, node) = self.ports;
        let config = self.dir.join("restate.toml");
        std::fs::write(
            &config,
            format!(
                r#"node-name = "tack-test"
cluster-name = "tack-test"
default-num-partitions = 4
disable-telemetry = true
rocksdb-total-memory-size = "256 MiB"
bind-address = "127.0.0.1:{node}"
advertised-address = "http://127.0.0.1:{node}/"

[default-retry-policy]
initial-interval = "100ms"
exponentiation-factor = 2.0
max-interval = "1s"
max-attempts = 100000
on-max-attempts = "pause"

[admin]
bind-address = "127.0.0.1:{admin}"
disable-web-ui = true

[ingress]
bind-address = "127.0.0.1:{ingress}"
{extra}
"#,
                extra = self.extra
            ),
        )
        .expect("restate config");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("server.log"))
            .expect("server log");
        let binary = server_binary().expect("restate-server");
        let child = Command::new(binary)
            .arg("--config-file")
            .arg(&config)
            .arg("--base-dir")
            .arg(self.dir.join("data"))
            .args([
                "--listen-mode",
                "tcp",
                "--no-logo",
                "--log-disable-ansi-codes",
                "true",
            ])
            .current_dir(&self.dir)
            // No usage reports and no update checks: tests talk to loopback only.
            .env("DO_NOT_TRACK", "1")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start restate-server");
        self.child = Some(child);
        let health = format!("127.0.0.1:{admin}");
        let ingress_addr = format!("127.0.0.1:{ingress}");
        wait_until("restate-server to listen", Duration::from_secs(120), || {
            std::net::TcpStream::connect(&health).is_ok()
                && std::net::TcpStream::connect(&ingress_addr).is_ok()
        });
    }

    /// Stops the server and starts it again on the same ports and data.
    #[allow(dead_code)]
    pub fn restart(&mut self) {
        self.stop();
        self.boot();
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = nix_kill(&child, "TERM");
            let _ = child.wait();
        }
    }

    /// The server's log so far (for failure messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }
}

impl Drop for Restate {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Sends `signal` (`TERM`, `KILL`) to `child` by pid.
pub fn nix_kill(child: &Child, signal: &str) -> std::io::Result<()> {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!("kill -{signal} failed")))
    }
}
