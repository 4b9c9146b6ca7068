//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! Node ≥ 22), in two versions: the release (0.1, protocol versions up to
//! 2025-11-25) and the one with the 2026-07-28 scenarios (0.2 alpha,
//! installed as `@modelcontextprotocol/conformance-next`). The server
//! scenarios run against the fixture example served by tack's server, the
//! client scenarios against tack's client. Expected failures, with reasons:
//! `conformance/expected-failures.yml` and
//! `conformance/expected-failures-2026-07-28.yml`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
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

fn expected_failures_2026() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("conformance/expected-failures-2026-07-28.yml")
}

/// The scenarios an expected-failures file lists under `side` (`server:`
/// or `client:`).
fn listed_failures(file: &Path, side: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut section = "";
    let mut listed = BTreeSet::new();
    for line in text.lines() {
        if !line.starts_with([' ', '#', '-']) && line.contains(':') {
            section = line.split(':').next().unwrap_or_default();
        } else if section == side
            && let Some(scenario) = line.trim().strip_prefix("- ")
        {
            listed.insert(scenario.to_owned());
        }
    }
    listed
}

fn conformance(test: &str) -> Option<Command> {
    suite("@modelcontextprotocol/conformance", test)
}

/// The suite with the 2026-07-28 scenarios.
fn conformance_next(test: &str) -> Option<Command> {
    suite("@modelcontextprotocol/conformance-next", test)
}

fn suite(package: &str, test: &str) -> Option<Command> {
    let script = node::package_script(package, test)?;
    let node = node::bin("node", test)?;
    let path = node::node_path(test)?;
    let mut cmd = Command::new(node);
    cmd.arg(script).env("PATH", path);
    Some(cmd)
}

/// Serves the fixture example over HTTP; its URL and the token that stops it.
async fn serve_fixture() -> (String, CancellationToken, impl Drop) {
    struct Keep(
        #[allow(dead_code)] tack_pipeline::ToolRegistry,
        #[allow(dead_code)] Vec<tack_core::hook::Disposer>,
        CancellationToken,
    );
    impl Drop for Keep {
        fn drop(&mut self) {
            self.2.cancel();
        }
    }
    let (registry, keep, server) = fixture_example::fixture_server();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    tokio::spawn(serve_http(
        server,
        listener,
        HttpOptions::default(),
        shutdown.clone(),
    ));
    (url, shutdown.clone(), Keep(registry, keep, shutdown))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_2026_07_28_requirements_pass_except_the_listed_ones() {
    let Some(mut cmd) = conformance_next("conformance_2026_07_28") else {
        return;
    };
    let (url, _shutdown, _keep) = serve_fixture().await;
    cmd.args(["server", "--url", &url, "--requirements", "2026-07-28"]);
    let (_, text) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    // The 0.2 alpha's own baseline check counts some passing scenarios as
    // failures: the scenario lines are compared here instead, both ways.
    let failed: BTreeSet<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("✗ "))
        .filter_map(|l| l.split(':').next())
        .map(str::to_owned)
        .collect();
    let listed = listed_failures(&expected_failures_2026(), "server");
    assert_eq!(
        failed, listed,
        "failing scenarios differ from the expected failures:\n{text}"
    );
    for scenario in [
        "tools-list",
        "tools-call-simple-text",
        "tools-call-image",
        "tools-call-embedded-resource",
        "tools-call-mixed-content",
        "tools-call-error",
        "server-sse-multiple-streams",
        "sep-2164-resource-not-found",
        "dns-rebinding-protection",
        "input-required-result-missing-input-response",
        "input-required-result-unsupported-methods",
        "input-required-result-ignore-extra-params",
        "input-required-result-validate-input",
        "input-required-result-basic-elicitation",
        "input-required-result-basic-sampling",
        "input-required-result-basic-list-roots",
        "input-required-result-request-state",
        "input-required-result-multiple-input-requests",
        "input-required-result-multi-round",
        "input-required-result-tampered-state",
        "input-required-result-capability-check",
        "server-stateless",
        "tools-call-with-progress",
        "json-schema-2020-12",
        "http-header-validation",
    ] {
        assert!(
            text.contains(&format!("✓ {scenario}:")),
            "{scenario} did not pass:\n{text}"
        );
    }
}

#[test]
fn client_scenarios_of_the_2026_suite_for_tacks_protocol_versions_pass() {
    let Some(_) = conformance_next("conformance_next_client") else {
        return;
    };
    let client = example_client();
    for scenario in ["initialize", "tools_call", "json-schema-ref-no-deref"] {
        let mut cmd = conformance_next("conformance_next_client").unwrap();
        cmd.args(["client", "--scenario", scenario, "--command"])
            .arg(&client);
        let (ok, text) = run(cmd);
        assert!(ok, "{scenario}:\n{text}");
        assert!(!text.contains("FAILURE"), "{scenario}:\n{text}");
    }
}

/// tack's client on protocol 2026-07-28 (it offers it through
/// `server/discover`): per-request `_meta` and headers, calls, and the
/// `input_required` round trip (`requestState` echoed, kept apart between
/// parallel calls). The custom-header scenarios (`x-mcp-header`) have a
/// test of their own, below.
#[test]
fn client_scenarios_of_2026_07_28_pass() {
    let test = "conformance_next_client_2026";
    if conformance_next(test).is_none() {
        return;
    }
    let client = example_client();
    for scenario in [
        "tools_call",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "json-schema-ref-no-deref",
    ] {
        let (ok, text) = client_scenario_2026(test, &client, scenario);
        assert!(ok, "{scenario}:\n{text}");
        assert!(!text.contains("FAILURE"), "{scenario}:\n{text}");
        assert!(text.contains("OVERALL: PASSED"), "{scenario}:\n{text}");
    }
}

/// SEP-2243's client scenarios: a tool's `x-mcp-header` parameters travel
/// as `Mcp-Param-*` headers, encoded as the draft says, and a tool whose
/// annotation is invalid is left out. One check cannot pass by design:
/// `sep-2243-client-omit-null` needs a call whose boolean parameter is
/// `null`, and tack refuses such arguments against the tool's schema
/// before anything is sent (the check then says the call never came).
#[test]
fn client_custom_header_scenarios_of_2026_07_28_pass() {
    let test = "conformance_next_client_headers";
    if conformance_next(test).is_none() {
        return;
    }
    let client = example_client();
    for scenario in ["http-invalid-tool-headers", "http-custom-headers"] {
        let (_, text) = client_scenario_2026(test, &client, scenario);
        let failures: Vec<&str> = text.lines().filter(|l| l.contains("FAILURE")).collect();
        let successes = text.lines().filter(|l| l.contains("SUCCESS")).count();
        assert!(successes >= 10, "{scenario}:\n{text}");
        if scenario == "http-custom-headers" {
            assert_eq!(failures.len(), 1, "{scenario}:\n{text}");
            assert!(
                failures[0].contains("sep-2243-client-omit-null")
                    && failures[0].contains("never emitted"),
                "{scenario}:\n{text}"
            );
        } else {
            assert!(failures.is_empty(), "{scenario}:\n{text}");
            assert!(text.contains("OVERALL: PASSED"), "{scenario}:\n{text}");
        }
    }
}

/// Runs the suite's client scenario `scenario` of 2026-07-28 against
/// `client` (the example client): whether it passed, and what it printed.
fn client_scenario_2026(test: &str, client: &Path, scenario: &str) -> (bool, String) {
    let mut cmd = conformance_next(test).expect("the suite was found before");
    cmd.args([
        "client",
        "--scenario",
        scenario,
        "--spec-version",
        "2026-07-28",
        "--command",
    ])
    .arg(client);
    run(cmd)
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
        "tools-call-with-logging",
        "tools-call-with-progress",
        "tools-call-sampling",
        "tools-call-elicitation",
        "elicitation-sep1034-defaults",
        "elicitation-sep1330-enums",
        "dns-rebinding-protection",
        "server-sse-multiple-streams",
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

/// The `auth/*` client scenarios the suite `package` lists, each with the
/// protocol version to run it at: the newest dated one it is for (none for
/// the extensions and drafts).
fn auth_scenarios(package: &str, test: &str) -> Vec<(String, Option<String>)> {
    let mut cmd = suite(package, test).expect("the suite was found before");
    cmd.arg("list");
    let (ok, text) = run(cmd);
    assert!(ok, "{text}");
    let scenarios: Vec<(String, Option<String>)> = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- auth/"))
        .map(|rest| {
            let (name, versions) = rest.split_once(' ').unwrap_or((rest, ""));
            let newest = versions
                .trim_matches(|c| c == '[' || c == ']')
                .split(',')
                .filter(|v| v.len() == 10 && v.starts_with("20"))
                .max()
                .map(str::to_owned);
            (format!("auth/{name}"), newest)
        })
        .collect();
    assert!(scenarios.len() >= 14, "{text}");
    scenarios
}

/// Runs every `auth/*` client scenario of the suite `package` against the
/// example client (a few at a time): the scenarios that did not pass, and
/// what each run printed.
fn failing_auth_scenarios(package: &str, test: &str) -> (BTreeSet<String>, String) {
    let client = example_client();
    let scenarios = auth_scenarios(package, test);
    let mut failed = BTreeSet::new();
    let mut all = String::new();
    for batch in scenarios.chunks(4) {
        let results: Vec<(String, bool, String)> = std::thread::scope(|scope| {
            let runs: Vec<_> = batch
                .iter()
                .map(|(scenario, version)| {
                    let mut cmd = suite(package, test).expect("the suite was found before");
                    cmd.args(["client", "--scenario", scenario]);
                    if let Some(version) = version {
                        cmd.args(["--spec-version", version]);
                    }
                    cmd.arg("--command").arg(&client);
                    let scenario = scenario.clone();
                    scope.spawn(move || {
                        let (ok, text) = run(cmd);
                        (scenario, ok && text.contains("OVERALL: PASSED"), text)
                    })
                })
                .collect();
            runs.into_iter().map(|r| r.join().unwrap()).collect()
        });
        for (scenario, passed, text) in results {
            if !passed {
                failed.insert(scenario.clone());
            }
            let summary: Vec<&str> = text
                .lines()
                .filter(|l| l.contains("FAILURE") || l.starts_with("Passed:"))
                .collect();
            all.push_str(&format!("== {scenario}\n{}\n", summary.join("\n")));
        }
    }
    (failed, all)
}

/// OAuth (the MCP authorization spec) through tack's client, against the
/// release suite's `auth/*` client scenarios: discovery (protected resource
/// metadata, authorization server metadata and its fallbacks), client ID
/// metadata documents, dynamic and pre-registration, the token endpoint's
/// client authentication, scope selection, step-up and its limit, the
/// `resource` parameter, `offline_access`, client credentials. The ones
/// that do not pass are listed with their reasons in
/// `conformance/expected-failures.yml`.
#[test]
fn auth_client_scenarios_pass_except_the_listed_ones() {
    let test = "conformance_auth";
    let package = "@modelcontextprotocol/conformance";
    if suite(package, test).is_none() {
        return;
    }
    auth_failures_are_the_listed_ones(package, test, &expected_failures());
}

/// The same against the suite with the 2026-07-28 scenarios (each run at
/// 2026-07-28 where it is for it): besides the release's, the issuer checks
/// of authorization responses (RFC 9207), the authorization server's
/// metadata issuer, and a server that moves to another authorization
/// server. Expected failures: `conformance/expected-failures-2026-07-28.yml`.
#[test]
fn auth_client_scenarios_of_the_2026_suite_pass_except_the_listed_ones() {
    let test = "conformance_next_auth";
    let package = "@modelcontextprotocol/conformance-next";
    if suite(package, test).is_none() {
        return;
    }
    auth_failures_are_the_listed_ones(package, test, &expected_failures_2026());
}

/// Runs `package`'s `auth/*` client scenarios and checks that the failing
/// ones are exactly the `auth/` entries of `expected`'s client list.
fn auth_failures_are_the_listed_ones(package: &str, test: &str, expected: &Path) {
    let (failed, text) = failing_auth_scenarios(package, test);
    let listed: BTreeSet<String> = listed_failures(expected, "client")
        .into_iter()
        .filter(|s| s.starts_with("auth/"))
        .collect();
    assert_eq!(
        failed, listed,
        "failing auth scenarios differ from the expected failures:\n{text}"
    );
}
