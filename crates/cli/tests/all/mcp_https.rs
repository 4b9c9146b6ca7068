//! An MCP server at an `https://` address: tack's client speaks TLS, checks
//! the server's certificate against the system's trusted ones (including
//! `SSL_CERT_FILE`), and refuses one nobody vouched for. The server is
//! `openssl s_server`, a TLS implementation nobody here wrote.

use std::io::Read;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use super::*;

/// Runs `openssl ARGS` in `dir`; false when openssl is missing (a notice,
/// or a failure under CI).
fn openssl(dir: &Path, args: &[&str]) -> bool {
    match StdCommand::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(status) => {
            assert!(status.success(), "openssl {args:?} failed");
            true
        }
        Err(e) if std::env::var_os("CI").is_none() => {
            println!("skipped, openssl is missing: {e}");
            false
        }
        Err(e) => panic!("openssl is missing: {e}"),
    }
}

/// A certificate authority (`ca.pem`), a server certificate it signed for
/// `localhost` (`server.pem`, `server.key`), and an unrelated authority
/// (`other.pem`), made in `dir`.
fn certificates(dir: &Path) -> bool {
    std::fs::write(
        dir.join("leaf.ext"),
        "basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    let steps: [&[&str]; 4] = [
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=tack test CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
        ],
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=another CA",
            "-keyout",
            "other.key",
            "-out",
            "other.pem",
        ],
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ],
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "leaf.ext",
            "-out",
            "server.pem",
        ],
    ];
    steps.iter().all(|args| openssl(dir, args))
}

/// `openssl s_server` on a free loopback port, logging to `dir/server.log`;
/// its port once it accepts connections.
fn tls_server(dir: &Path) -> (Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let log = std::fs::File::create(dir.join("server.log")).unwrap();
    let child = StdCommand::new("openssl")
        .args(["s_server", "-www", "-accept"])
        .arg(format!("127.0.0.1:{port}"))
        .args(["-cert", "server.pem", "-key", "server.key"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "openssl s_server did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (child, port)
}

/// What the TLS server logged so far.
fn server_log(dir: &Path) -> String {
    let mut text = String::new();
    std::fs::File::open(dir.join("server.log"))
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    text
}

/// A run of `tack` in `ws` whose trusted certificates are `file` alone,
/// logging to `name` in `dir`; the MCP server fails to start either way
/// (`openssl s_server` is no MCP server).
fn run_trusting(
    dir: &tempfile::TempDir,
    ws: &Path,
    name: &str,
    file: &Path,
) -> assert_cmd::assert::Assert {
    tack(ws)
        .args(["run", "读文件 README.md", "--log"])
        .arg(log_in(dir, name))
        .env("SSL_CERT_FILE", file)
        .env("SSL_CERT_DIR", dir.path().join("no-such-dir"))
        // s_server does not answer MCP: do not wait the 30 s default.
        .env("MCP_TIMEOUT", "3000")
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "MCP server `remote` failed to start",
        ))
}

#[test]
fn an_https_server_gets_tls_with_the_certificate_checked() {
    let dir = tempfile::tempdir().unwrap();
    let certs = dir.path().join("certs");
    std::fs::create_dir(&certs).unwrap();
    if !certificates(&certs) {
        return;
    }
    let (mut server, port) = tls_server(&certs);
    let ws = workspace(&dir);
    std::fs::write(ws.join("README.md"), "hi\n").unwrap();
    std::fs::write(
        ws.join(".mcp.json"),
        json!({"mcpServers": {"remote": {"type": "http", "url": format!("https://localhost:{port}/mcp")}}})
            .to_string(),
    )
    .unwrap();
    tack(&ws).arg("trust").assert().success();

    // A certificate store that holds no certificate: a clear error that
    // names the variables, not a crash.
    run_trusting(&dir, &ws, "no-store", &certs.join("leaf.ext"))
        .stderr(predicates::str::contains("cannot make an HTTPS client"))
        .stderr(predicates::str::contains("SSL_CERT_FILE"));

    // A certificate nobody the client trusts vouched for: the client ends
    // the handshake with TLS's "unknown CA" alert (48), and the
    // server is not used.
    run_trusting(&dir, &ws, "untrusted", &certs.join("other.pem"));
    let refused = server_log(&certs);
    assert!(
        refused.contains("alert unknown ca") || refused.contains("alert number 48"),
        "the client did not check the certificate: {refused}"
    );

    // The same server once its authority is trusted: the handshake
    // completes (no alert); s_server is no MCP server, so starting the
    // session still fails, after TLS.
    let before = refused.len();
    run_trusting(&dir, &ws, "trusted", &certs.join("ca.pem"))
        .stderr(predicates::str::contains("within 3s"));
    let after = server_log(&certs);
    let trusted = &after[before..];
    assert!(
        !trusted.contains("alert"),
        "the handshake failed with a trusted authority: {trusted}"
    );
    let _ = server.kill();
    let _ = server.wait();
}
