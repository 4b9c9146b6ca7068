//! Unix sockets: a confined command reaches no socket of the host, with a
//! path or abstract, unless the host allows that one; the refusal is named
//! in the command's output. Real listeners, real processes, both layers.

use std::io::{ErrorKind, Read};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::Path;
use std::time::Duration;

use tack_core::capability::{CommandOutput, CommandRequest};
use tack_sandbox::{Enforcement, Sandbox, SandboxPolicy};
use tokio_util::sync::CancellationToken;

use crate::fixture::{
    Fixture, in_bwrap, python, runs_commands, sandbox, scratch_outside_tmp, snapshot,
};

/// `connect PATH|@ABSTRACT`, `bind PATH` or `pair`: one line each, the
/// target then `ok` or `refused <errno>`.
const SCRIPT: &str = r#"
import socket, sys
args = sys.argv[1:]
while args:
    what = args.pop(0)
    try:
        if what == "pair":
            a, b = socket.socketpair()
            a.sendall(b"x")
            assert b.recv(1) == b"x"
            print("pair ok")
            continue
        target = args.pop(0)
        s = socket.socket(socket.AF_UNIX)
        address = "\0" + target[1:] if target.startswith("@") else target
        if what == "bind":
            s.bind(address)
        else:
            s.connect(address)
            s.sendall(b"hi")
        print(target, "ok")
    except OSError as e:
        print(target if what != "pair" else "pair", "refused", e.errno)
        print(e, file=sys.stderr)
"#;

async fn run(sb: &Sandbox, python: &str, args: &str) -> CommandOutput {
    sb.fs()
        .write(Path::new("sockets.py"), SCRIPT.as_bytes())
        .await
        .unwrap();
    sb.shell()
        .run(
            CommandRequest::new(format!("{python} sockets.py {args}"))
                .with_timeout(Duration::from_secs(30)),
            CancellationToken::new(),
        )
        .await
        .unwrap()
}

fn line<'a>(out: &'a CommandOutput, target: &str) -> &'a str {
    out.stdout
        .lines()
        .find(|l| l.starts_with(&format!("{target} ")))
        .unwrap_or_else(|| panic!("no line for {target}: {out:?}"))
}

fn abstract_listener(name: &str) -> UnixListener {
    let listener =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap();
    listener.set_nonblocking(true).unwrap();
    listener
}

fn nothing_accepted(listener: &UnixListener, what: &str) {
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("{what}: a connection reached the host's listener: {other:?}"),
    }
}

/// A socket of the host outside the workspace (where a Docker socket
/// would be), an abstract socket of the host, and binding a new socket
/// outside: all refused, network on or off, and the output says why;
/// `socketpair` still works.
#[tokio::test]
async fn the_hosts_unix_sockets_are_out_of_reach() {
    let Some(python) = python() else {
        println!("the_hosts_unix_sockets_are_out_of_reach: skipped, no python3");
        return;
    };
    let outside = scratch_outside_tmp();
    let host = outside.path().join("docker.sock");
    let listener = UnixListener::bind(&host).unwrap();
    listener.set_nonblocking(true).unwrap();
    let name = format!("tack-sandbox-test-{}", std::process::id());
    let abstract_socket = abstract_listener(&name);
    let planted = outside.path().join("planted.sock");
    let before = snapshot(outside.path());
    for network in [false, true] {
        let fx = Fixture::new();
        let sb =
            sandbox(SandboxPolicy::workspace_write(fx.ws.path()).with_network(network)).unwrap();
        if !runs_commands(&sb, "the_hosts_unix_sockets_are_out_of_reach") {
            return;
        }
        assert_eq!(
            sb.status().policy.unwrap().unix_sockets,
            Enforcement::Enforced
        );
        let out = run(
            &sb,
            python,
            &format!(
                "connect {} connect @{name} bind {} pair",
                host.display(),
                planted.display()
            ),
        )
        .await;
        let host_line = line(&out, &host.display().to_string());
        assert!(host_line.ends_with(" refused 97"), "{out:?}");
        assert!(
            line(&out, &format!("@{name}")).contains(" refused "),
            "{out:?}"
        );
        assert!(
            line(&out, &planted.display().to_string()).contains(" refused "),
            "{out:?}"
        );
        assert_eq!(line(&out, "pair"), "pair ok", "{out:?}");
        assert!(
            out.stderr.contains("SandboxPolicy::with_unix_socket"),
            "the refusal is not named: {out:?}"
        );
        nothing_accepted(&listener, "path-named");
        nothing_accepted(&abstract_socket, "abstract");
        assert_eq!(snapshot(outside.path()), before, "network {network}");
    }
}

/// A socket the host allows (an agent's, kept under a hidden directory)
/// is reachable; the listener gets what the command sent. Without the
/// allowance the same command is refused.
#[tokio::test]
async fn an_allowed_unix_socket_is_reachable() {
    let Some(python) = python() else {
        println!("an_allowed_unix_socket_is_reachable: skipped, no python3");
        return;
    };
    let home = scratch_outside_tmp();
    std::fs::create_dir(home.path().join(".gnupg")).unwrap();
    let agent = home.path().join(".gnupg/S.gpg-agent.ssh");
    let listener = UnixListener::bind(&agent).unwrap();
    listener.set_nonblocking(true).unwrap();
    let fx = Fixture::new();
    let policy = SandboxPolicy::workspace_write(fx.ws.path()).with_home_dir(home.path());
    let refused = sandbox(policy.clone()).unwrap();
    if !runs_commands(&refused, "an_allowed_unix_socket_is_reachable") {
        return;
    }
    let args = format!("connect {}", agent.display());
    let out = run(&refused, python, &args).await;
    assert!(
        line(&out, &agent.display().to_string()).contains(" refused "),
        "{out:?}"
    );
    nothing_accepted(&listener, "not allowed yet");

    let allowed = sandbox(policy.with_unix_socket(&agent)).unwrap();
    assert_eq!(
        allowed.status().policy.unwrap().unix_sockets,
        Enforcement::Partial
    );
    let out = run(&allowed, python, &args).await;
    assert_eq!(
        line(&out, &agent.display().to_string()),
        format!("{} ok", agent.display()),
        "{out:?} (bubblewrap: {})",
        in_bwrap(&allowed)
    );
    listener.set_nonblocking(false).unwrap();
    let (mut stream, _) = listener.accept().unwrap();
    let mut got = String::new();
    stream.read_to_string(&mut got).unwrap();
    assert_eq!(got, "hi");
    assert!(!out.stderr.contains("with_unix_socket"), "{out:?}");
}
