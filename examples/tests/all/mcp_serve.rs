//! The MCP-serve example driven by a client nobody here wrote: the official
//! TypeScript SDK's client (from npm, in `.ci/node`) over stdio.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

/// `node` and the SDK's directory, when installed. When they are not: a
/// notice and the test passes, except under CI (`CI` set), where it fails.
fn node_and_sdk(test: &str) -> Option<(PathBuf, PathBuf)> {
    let prefix = std::env::var_os("TACK_MCP_NODE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.ci/node"));
    let node = prefix.join("node_modules/.bin/node");
    let sdk = prefix.join("node_modules/@modelcontextprotocol/sdk");
    if node.exists() && sdk.exists() {
        return Some((node, sdk));
    }
    let message = format!(
        "{test}: {} or {} is missing; run `npm ci --prefix .ci/node --no-audit --no-fund`",
        node.display(),
        sdk.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{message}");
    println!("skipped, {message}");
    None
}

/// Builds the example and returns its executable, so the client starts the
/// server itself rather than waiting for cargo.
fn example_binary(name: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let output = Command::new(cargo)
        .args(["build", "-q", "--message-format=json", "--manifest-path"])
        .arg(manifest)
        .args(["--features", "full", "--example", name])
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .expect("cargo names the example's executable")
}

#[test]
fn without_a_client_the_server_stops_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let run = support::try_example("mcp_serve", &[root], None); // stdin: none
    assert!(!run.output.status.success());
    assert!(
        run.stdout.is_empty(),
        "stdout is the protocol's: {}",
        run.stdout
    );
    assert!(
        run.stderr.contains("serving MCP on stdio, read-only over"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("initialize"), "{}", run.stderr);
}

#[test]
fn the_typescript_sdk_client_lists_and_calls_the_served_tools() {
    let Some((node, sdk)) = node_and_sdk("mcp_serve") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello file\n").unwrap();
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/all/fixtures/mcp_client.mjs");
    let output = Command::new(node)
        .arg(client)
        .arg(sdk)
        .arg(example_binary("mcp_serve"))
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap();

    let tools = answer["tools"].as_array().unwrap();
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).cloned();
    assert_eq!(
        tool("word_count").unwrap()["annotations"]["readOnlyHint"],
        true
    );
    assert_eq!(
        tool("read_file").unwrap()["annotations"]["readOnlyHint"],
        true
    );
    assert_eq!(
        tool("write_file").unwrap()["annotations"]["readOnlyHint"],
        false
    );

    assert_eq!(answer["count"]["isError"], false);
    assert_eq!(answer["count"]["structuredContent"]["words"], 3);
    assert_eq!(answer["read"]["isError"], false);
    assert_eq!(
        answer["read"]["structuredContent"]["content"],
        "hello file\n"
    );
    // The sandbox (read-only) refused the write, and nothing was written.
    assert_eq!(answer["write"]["isError"], true);
    let text = answer["write"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("read-only"), "{text}");
    assert!(!dir.path().join("b.txt").exists());
}
