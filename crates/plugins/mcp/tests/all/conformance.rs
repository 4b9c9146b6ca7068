//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! Node ≥ 22): the server scenarios against the fixture example served by
//! tack's server, the client scenarios `initialize` and `tools_call` against
//! tack's client. Expected failures, with reasons:
//! `conformance/expected-failures.yml`.

use std::path::PathBuf;
use std::process::Command;

use tack_core::CancellationToken;
use tack_mcp::{HttpOptions, serve_http};

use crate::node;

#[path = "../../examples/conformance_server.rs"]
#[allow(dead_code)]
mod fixture_example;

fn expected_failures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("conformance/expected-failures.yml")
}

fn conformance(test: &str) -> Option<Command> {
    let bin = node::bin("conformance", test)?;
    let path = node::node_path(test)?;
    let mut cmd = Command::new(bin);
    cmd.env("PATH", path);
    Some(cmd)
}

fn run(mut cmd: Command) -> (bool, String) {
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_scenarios_pass_except_the_listed_ones() {
    let Some(mut cmd) = conformance("conformance_server") else {
        return;
    };
    let (_registry, _keep, server) = fixture_example::fixture_server();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    tokio::spawn(serve_http(
        server,
        listener,
        HttpOptions::default(),
        shutdown.clone(),
    ));
    cmd.args(["server", "--url", &url, "--expected-failures"])
        .arg(expected_failures());
    let (ok, text) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    shutdown.cancel();
    assert!(ok, "{text}");
    // The scenarios the fixture is for all ran and passed.
    for scenario in [
        "server-initialize",
        "ping",
        "tools-list",
        "tools-call-simple-text",
        "tools-call-image",
        "tools-call-embedded-resource",
        "tools-call-mixed-content",
        "tools-call-error",
        "logging-set-level",
        "dns-rebinding-protection",
    ] {
        assert!(
            text.contains(&format!("✓ {scenario}:")),
            "{scenario} did not pass:\n{text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_json_schema_2020_12_scenario_passes() {
    let Some(mut cmd) = conformance("json_schema_2020_12") else {
        return;
    };
    let (_registry, _keep, server) = fixture_example::fixture_server();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    tokio::spawn(serve_http(
        server,
        listener,
        HttpOptions::default(),
        shutdown.clone(),
    ));
    cmd.args(["server", "--url", &url, "--scenario", "json-schema-2020-12"]);
    let (ok, text) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    shutdown.cancel();
    assert!(ok && text.contains("Passed: 4/4"), "{text}");
}

/// The example client, built on demand (`cargo build --example`).
fn example_client() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .args([
            "build",
            "-q",
            "-p",
            "tack-mcp",
            "--example",
            "conformance_client",
        ])
        .status()
        .unwrap();
    assert!(
        status.success(),
        "cannot build the conformance_client example"
    );
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target"));
    target.join("debug/examples/conformance_client")
}

#[test]
fn client_scenarios_initialize_and_tools_call_pass() {
    let Some(_) = conformance("conformance_client") else {
        return;
    };
    let client = example_client();
    for scenario in ["initialize", "tools_call"] {
        let mut cmd = conformance("conformance_client").unwrap();
        cmd.args(["client", "--scenario", scenario, "--command"])
            .arg(&client)
            .arg("--expected-failures")
            .arg(expected_failures());
        let (ok, text) = run(cmd);
        assert!(ok, "{scenario}:\n{text}");
        assert!(!text.contains("FAILURE"), "{scenario}:\n{text}");
    }
}
