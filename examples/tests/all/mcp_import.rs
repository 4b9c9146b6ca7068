//! The MCP-import example against the reference filesystem server (from npm,
//! in `.ci/node`): its tools are imported under `mcp__files__`, a read runs,
//! a bad call is refused by tack's schema check and a write by the gate.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The npm prefix the example reads (`TACK_MCP_NODE_DIR` or `.ci/node`).
fn prefix() -> PathBuf {
    std::env::var_os("TACK_MCP_NODE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.ci/node"))
}

/// Whether the server is installed. When it is not: a notice and the test
/// passes, except under CI (`CI` set), where the test fails.
fn server_installed(test: &str) -> bool {
    let server = prefix().join("node_modules/.bin/mcp-server-filesystem");
    if server.exists() {
        return true;
    }
    let message = format!(
        "{test}: {} is missing; run `npm ci --prefix .ci/node --no-audit --no-fund`",
        server.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{message}");
    println!("skipped, {message}");
    false
}

#[test]
fn the_servers_tools_are_imported_and_each_call_goes_through_the_pipeline() {
    if !server_installed("mcp_import") {
        return;
    }
    let run = support::run_example("mcp_import", &[], None);
    let out = &run.stdout;
    for line in [
        "imported mcp__files__read_text_file (read_only)",
        "imported mcp__files__list_directory (read_only)",
        "imported mcp__files__write_file (executes)",
        r#"mcp__files__read_text_file -> {"content":"buy milk\n"}"#,
        r#"mcp__files__read_text_file -> INVALID_ARGUMENTS: invalid arguments for tool `mcp__files__read_text_file`: at the top level "path" is a required property"#,
        "mcp__files__write_file -> DENIED: mcp__files__write_file is not read-only",
        "new.txt exists: false",
    ] {
        assert!(
            out.lines().any(|l| l == line),
            "no line {line:?} in:\n{out}"
        );
    }
    let imported = out.lines().filter(|l| l.starts_with("imported ")).count();
    assert!(imported >= 10, "{out}");
    assert!(
        out.lines()
            .filter(|l| l.starts_with("imported "))
            .all(|l| l.starts_with("imported mcp__files__")),
        "{out}"
    );
}

#[test]
fn without_the_server_the_example_says_how_to_install_it() {
    let empty = tempfile::tempdir().unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let output = Command::new(cargo)
        .args(["run", "-q", "--manifest-path"])
        .arg(&manifest)
        .args(["--features", "full", "--example", "mcp_import"])
        .env("TACK_MCP_NODE_DIR", empty.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains(
            "mcp-server-filesystem is missing: run `npm ci --prefix .ci/node --no-audit --no-fund`"
        ),
        "{stderr}"
    );
}
