//! Durable sessions through the binary: `tack serve --restate`, `tack run
//! --durable` and `tack approve` against a real Restate server.

use std::process::{Child, Command as StdCommand, Stdio};
use std::time::Duration;

use super::*;
use crate::restate::{Restate, free_port, wait_until};

/// `tack ARGS` in the background, stdout and stderr to `dir/NAME.out|err`.
fn spawn(ws: &Path, dir: &Path, name: &str, args: &[&str]) -> Child {
    StdCommand::new(assert_cmd::cargo::cargo_bin("tack"))
        .args(args)
        .current_dir(ws)
        .env("XDG_STATE_HOME", test_state_home())
        .env("XDG_CONFIG_HOME", test_state_home().join("config"))
        .env("HOME", test_state_home().join("home"))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join(format!("{name}.out"))).unwrap())
        .stderr(std::fs::File::create(dir.join(format!("{name}.err"))).unwrap())
        .spawn()
        .unwrap()
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_default()
}

/// A process stopped (by pid) when the test ends, whatever happened.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = StdCommand::new("kill")
                .arg(self.0.id().to_string())
                .status();
        }
        let _ = self.0.wait();
    }
}

#[test]
fn a_durable_turn_waits_for_its_approval_and_runs_the_call_once() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = Restate::start(dir.path()) else {
        return;
    };
    let ws = workspace(&dir);
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        r#"{"turns": [
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": "{\"command\": \"echo ran >> ran.txt\"}"}]},
            {"text": "all done"}
        ]}"#,
    )
    .unwrap();
    let address = format!("127.0.0.1:{}", free_port());
    let model = format!("script:{}", script.display());
    let _serve = Running(spawn(
        &ws,
        dir.path(),
        "serve",
        &[
            "serve",
            "--restate",
            &address,
            "--register",
            &server.admin,
            "-m",
            &model,
            "--mode",
            "ask",
        ],
    ));
    wait_until("the endpoint to register", Duration::from_secs(120), || {
        read(dir.path(), "serve.err").contains("tack: registered")
    });

    let mut run = Running(spawn(
        &ws,
        dir.path(),
        "run",
        &[
            "run",
            "--durable",
            &server.ingress,
            "--session",
            "s1",
            "echo it",
        ],
    ));
    wait_until("the approval to be shown", Duration::from_secs(120), || {
        read(dir.path(), "run.err").contains("waits for approval")
    });
    let shown = read(dir.path(), "run.err");
    assert!(
        shown.contains("tack: session s1 waits for approval of bash: echo ran >> ran.txt (c1): permission mode `ask` requires approval"),
        "{shown}"
    );
    assert!(
        !ws.join("ran.txt").exists(),
        "the call waits for its answer"
    );

    tack(&ws)
        .args([
            "approve",
            "--durable",
            &server.ingress,
            "--session",
            "s1",
            "yes",
        ])
        .assert()
        .success();
    let status = run.0.wait().unwrap();
    assert!(status.success(), "{}", read(dir.path(), "run.err"));
    assert_eq!(read(dir.path(), "run.out"), "all done\n");
    assert_eq!(
        std::fs::read_to_string(ws.join("ran.txt")).unwrap(),
        "ran\n"
    );

    // Nothing waits any more: a second answer is refused, saying why.
    let err = stderr_of_exit(
        tack(&ws).args([
            "approve",
            "--durable",
            &server.ingress,
            "--session",
            "s1",
            "no",
        ]),
        1,
    );
    assert!(
        err.contains("session s1 is not waiting for an approval"),
        "{err}"
    );
}

#[test]
fn bad_durable_urls_and_answers_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let err = stderr_of_exit(
        tack(&ws).args(["run", "--durable", "localhost:8080", "hi"]),
        2,
    );
    assert!(
        err.contains("localhost:8080 is not an http://HOST:PORT URL"),
        "{err}"
    );
    let err = stderr_of_exit(
        tack(&ws).args([
            "approve",
            "--durable",
            "http://127.0.0.1:1",
            "--session",
            "s",
            "maybe",
        ]),
        2,
    );
    assert!(err.contains("[possible values: yes, no]"), "{err}");
    let err = stderr_of_exit(
        tack(&ws).args([
            "serve",
            "--restate",
            "127.0.0.1:0",
            "--identity-key",
            "nope",
        ]),
        1,
    );
    assert!(
        err.contains("--identity-key: `nope` is not a Restate request-identity public key"),
        "{err}"
    );
    // What the endpoints decide is not taken from `tack run --durable`.
    for options in [
        &["--mode", "allow-all"][..],
        &["--model", "mock"][..],
        &["--log", "x.jsonl"][..],
        &["--ui"][..],
        &["-C", "."][..],
    ] {
        let err = stderr_of_exit(
            tack(&ws)
                .args(["run", "--durable", "http://127.0.0.1:1"])
                .args(options)
                .arg("hi"),
            2,
        );
        assert!(err.contains("cannot be used with"), "{options:?}: {err}");
    }
    let err = stderr_of_exit(
        tack(&ws).args([
            "serve",
            "--restate",
            "127.0.0.1:0",
            "--mcp-config",
            "m.json",
        ]),
        2,
    );
    assert!(err.contains("loads no MCP servers"), "{err}");
}
