//! MCP both ways through the `tack` binary: the reference servers from npm
//! as a session's tools, and `tack mcp serve` to a raw client.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use super::*;

/// `.ci/node/node_modules/.bin/NAME` (or under `TACK_MCP_NODE_DIR`): a
/// notice and `None` when missing, a failure under CI.
fn node_bin(name: &str, test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("TACK_MCP_NODE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.ci/node"));
    let path = dir.join("node_modules/.bin").join(name);
    if path.exists() {
        return Some(path);
    }
    let message = format!(
        "{test}: {} is missing; install the Node tools with `npm install --prefix .ci/node` (see .ci/run) or set TACK_MCP_NODE_DIR",
        path.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{message}");
    }
    println!("skipped, {message}");
    None
}

pub(crate) fn server_json(name: &str, test: &str, args: &[&str]) -> Option<Value> {
    let bin = node_bin(name, test)?;
    let node = node_bin("node", test)?;
    let path = format!(
        "{}:{}",
        node.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Some(json!({"command": bin, "args": args, "env": {"PATH": path}}))
}

#[test]
fn npm_servers_tools_run_through_the_pipeline_with_rules_on_their_names() {
    let test = "npm_servers_tools";
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("note.txt"), "from the filesystem server\n").unwrap();
    let Some(everything) = server_json("mcp-server-everything", test, &["stdio"]) else {
        return;
    };
    let ws_arg = ws.display().to_string();
    let Some(fs) = server_json("mcp-server-filesystem", test, &[&ws_arg]) else {
        return;
    };
    std::fs::write(
        ws.join(".mcp.json"),
        json!({"mcpServers": {"everything": everything}}).to_string(),
    )
    .unwrap();
    // A workspace file that starts programs is used only once trusted.
    tack(&ws).arg("trust").assert().success();
    let extra = dir.path().join("extra.json");
    std::fs::write(&extra, json!({"mcpServers": {"files": fs}}).to_string()).unwrap();
    let settings = dir.path().join("settings.json");
    std::fs::write(
        &settings,
        json!({"permissions": {"deny": ["mcp__everything__get-*"]}}).to_string(),
    )
    .unwrap();
    let note = ws.join("note.txt").display().to_string();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        json!({"turns": [
            {"tool_calls": [{"id": "c1", "name": "mcp__everything__echo", "arguments": "{\"message\": \"hello mcp\"}"}]},
            {"tool_calls": [{"id": "c2", "name": "mcp__everything__get-sum", "arguments": "{\"a\": 1, \"b\": 2}"}]},
            {"tool_calls": [{"id": "c3", "name": "mcp__everything__echo", "arguments": "{\"message\": 5}"}]},
            {"tool_calls": [{"id": "c4", "name": "mcp__files__read_text_file", "arguments": json!({"path": note}).to_string()}]},
            {"text": "done"}
        ]})
        .to_string(),
    )
    .unwrap();
    let log = log_in(&dir, "mcp");
    let out = stdout_of(
        tack(&ws)
            .args(["run", "go", "--mode", "allow-all", "--model"])
            .arg(format!("script:{}", script.display()))
            .arg("--settings")
            .arg(&settings)
            .arg("--mcp-config")
            .arg(&extra)
            .arg("--log")
            .arg(&log),
    );
    let results = of_type(&log, "tool/result");
    assert_eq!(results.len(), 4, "{out}");
    assert_eq!(results[0]["status"], "ok", "{out}");
    assert!(
        results[0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("hello mcp"),
        "{out}"
    );
    // The deny rule on `mcp__everything__get-*` stops the call.
    assert_eq!(results[1]["error"]["code"], "DENIED", "{out}");
    // The server's inputSchema is checked before anything is sent.
    assert_eq!(results[2]["error"]["code"], "INVALID_ARGUMENTS", "{out}");
    assert_eq!(results[3]["status"], "ok", "{out}");
    assert!(
        results[3]["content"]
            .to_string()
            .contains("from the filesystem server"),
        "{out}"
    );
}

#[test]
fn a_server_that_cannot_start_is_named_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(
        ws.join(".mcp.json"),
        r#"{"mcpServers": {"ghost": {"command": "/nonexistent/ghost-mcp"}}}"#,
    )
    .unwrap();
    tack(&ws).arg("trust").assert().success();
    let log = log_in(&dir, "ghost");
    tack(&ws)
        .args(["run", "读文件 README.md", "--log"])
        .arg(&log)
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "MCP server `ghost` failed to start",
        ));
}

#[test]
fn a_bad_mcp_config_is_refused_with_its_file_and_server() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(
        ws.join(".mcp.json"),
        r#"{"mcpServers": {"x": {"type": "sse", "url": "http://h"}}}"#,
    )
    .unwrap();
    tack(&ws)
        .args(["run", "hi"])
        .assert()
        .failure()
        .stderr(predicates::str::contains(".mcp.json"))
        .stderr(predicates::str::contains("`x`"));
}

#[test]
fn a_bad_mcp_timeout_is_refused_with_what_to_give() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(
        ws.join(".mcp.json"),
        r#"{"mcpServers": {"ghost": {"command": "/nonexistent/ghost-mcp"}}}"#,
    )
    .unwrap();
    tack(&ws).arg("trust").assert().success();
    for (value, says) in [("abc", "MCP_TIMEOUT=\"abc\""), ("0", "MCP_TIMEOUT=0")] {
        tack(&ws)
            .args(["run", "hi", "--log"])
            .arg(log_in(&dir, value))
            .env("MCP_TIMEOUT", value)
            .assert()
            .failure()
            .stderr(predicates::str::contains(says))
            .stderr(predicates::str::contains("MCP_TIMEOUT=10000"));
    }
}

/// One JSON-RPC line out, one in.
fn exchange(stdin: &mut impl Write, stdout: &mut impl BufRead, message: Value) -> Value {
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
    loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the server closed stdout"
        );
        let value: Value = serde_json::from_str(&line).unwrap();
        // Skip notifications.
        if value.get("id").is_some() {
            return value;
        }
    }
}

#[test]
fn tack_mcp_serve_on_stdio_lists_and_calls_tools_through_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("a.txt"), "alpha\n").unwrap();
    let log = log_in(&dir, "serve");
    let bin = assert_cmd::cargo::cargo_bin("tack");
    let mut child = std::process::Command::new(bin)
        .args(["mcp", "serve", "--mode", "read-only", "--log"])
        .arg(&log)
        .arg("--workspace")
        .arg(&ws)
        .env("XDG_STATE_HOME", dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let init = exchange(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "tack", "{init}");
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    let list = exchange(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    let tools = list["result"]["tools"].as_array().unwrap();
    let read = tools
        .iter()
        .find(|t| t["name"] == "read_file")
        .expect("read_file is served");
    assert_eq!(read["annotations"]["readOnlyHint"], true);
    assert_eq!(read["inputSchema"]["type"], "object");
    let write = tools
        .iter()
        .find(|t| t["name"] == "write_file")
        .expect("write_file is served");
    assert_eq!(write["annotations"]["readOnlyHint"], false);

    let ok = exchange(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": "a.txt"}}}),
    );
    assert_eq!(ok["result"]["isError"], false, "{ok}");
    assert!(ok["result"].to_string().contains("alpha"), "{ok}");

    // read-only mode: a write is denied, with the reason, and nothing is written.
    let denied = exchange(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "write_file", "arguments": {"path": "b.txt", "content": "x"}}}),
    );
    assert_eq!(denied["result"]["isError"], true, "{denied}");
    assert!(
        denied["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("DENIED"),
        "{denied}"
    );
    assert!(!ws.join("b.txt").exists());

    let unknown = exchange(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "nope", "arguments": {}}}),
    );
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool `nope`"),
        "{unknown}"
    );

    // Malformed JSON-RPC gets an error and the session goes on.
    writeln!(stdin, "{{not json").unwrap();
    let after = exchange(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 6, "method": "ping"}),
    );
    assert!(
        after.get("result").is_some() || after.get("error").is_some(),
        "{after}"
    );

    drop(stdin);
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the server exits when stdin closes"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Both calls are in the session log.
    let results = of_type(&log, "tool/result");
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[1]["error"]["code"], "DENIED");
}

/// Runs the TypeScript SDK client fixture; its JSON report.
fn ts_client(test: &str, args: &[String]) -> Option<Value> {
    let node = node_bin("node", test)?;
    let sdk = node.parent()?.parent()?.join("@modelcontextprotocol/sdk");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/mcp_ts_client.mjs"
    );
    let out = std::process::Command::new(node)
        .arg(script)
        .arg(sdk)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

fn check_ts_report(report: &Value, ws: &std::path::Path) {
    let tools = report["tools"].as_array().unwrap();
    let read = tools.iter().find(|t| t["name"] == "read_file").unwrap();
    assert_eq!(read["annotations"]["readOnlyHint"], true, "{report}");
    assert_eq!(report["read"]["isError"], false, "{report}");
    assert!(report["read"].to_string().contains("alpha"), "{report}");
    assert_eq!(report["write"]["isError"], true, "{report}");
    assert!(report["write"].to_string().contains("DENIED"), "{report}");
    assert!(!ws.join("b.txt").exists());
    assert!(
        report["unknown"].as_str().unwrap().contains("unknown tool"),
        "{report}"
    );
}

#[test]
fn the_typescript_sdk_client_drives_tack_mcp_serve_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("a.txt"), "alpha\n").unwrap();
    let log = log_in(&dir, "ts-stdio");
    let tack_bin = assert_cmd::cargo::cargo_bin("tack");
    let Some(report) = ts_client(
        "ts_sdk_stdio",
        &[
            "stdio".into(),
            tack_bin.display().to_string(),
            ws.display().to_string(),
            log.display().to_string(),
        ],
    ) else {
        return;
    };
    check_ts_report(&report, &ws);
    assert_eq!(of_type(&log, "tool/result").len(), 2);
}

#[test]
fn the_typescript_sdk_client_drives_tack_mcp_serve_over_http_with_a_token() {
    if node_bin("node", "ts_sdk_http").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("a.txt"), "alpha\n").unwrap();
    let log = log_in(&dir, "ts-http");
    let mut server = std::process::Command::new(assert_cmd::cargo::cargo_bin("tack"))
        .args([
            "mcp",
            "serve",
            "--http",
            "127.0.0.1:0",
            "--mode",
            "read-only",
            "--log",
        ])
        .arg(&log)
        .arg("--workspace")
        .arg(&ws)
        .env("TACK_MCP_TOKEN", "t0ken")
        .env("XDG_STATE_HOME", dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(server.stderr.take().unwrap());
    let url = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the server ended early"
        );
        if let Some(url) = line.trim().strip_prefix("tack: MCP endpoint ") {
            break url.to_owned();
        }
    };
    let report = ts_client("ts_sdk_http", &["http".into(), url, "t0ken".into()]);
    server.kill().unwrap();
    let _ = server.wait();
    check_ts_report(&report.unwrap(), &ws);
    assert_eq!(of_type(&log, "tool/result").len(), 2);
}

#[test]
fn a_client_confirms_calls_the_mode_allows_and_an_ask_rule_puts_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("a.txt"), "alpha\n").unwrap();
    let log = log_in(&dir, "ts-ask");
    let settings = dir.path().join("settings.json");
    std::fs::write(
        &settings,
        json!({"permissions": {"ask": ["write_file"]}}).to_string(),
    )
    .unwrap();
    let tack_bin = assert_cmd::cargo::cargo_bin("tack");
    let Some(report) = ts_client(
        "ts_sdk_elicitation",
        &[
            "stdio-ask".into(),
            tack_bin.display().to_string(),
            ws.display().to_string(),
            log.display().to_string(),
            "allow-all".into(),
            settings.display().to_string(),
        ],
    ) else {
        return;
    };
    // Under allow-all an ask rule puts the write to the client, which confirms it.
    assert_eq!(report["write"]["isError"], false, "{report}");
    assert_eq!(std::fs::read_to_string(ws.join("b.txt")).unwrap(), "x");
    assert_eq!(report["elicited"], 1, "{report}");
    assert_eq!(of_type(&log, "approval/outcome").len(), 1);
}

#[test]
fn a_client_cannot_approve_what_the_servers_mode_does_not_allow() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("a.txt"), "alpha\n").unwrap();
    let log = log_in(&dir, "ts-ask-denied");
    let tack_bin = assert_cmd::cargo::cargo_bin("tack");
    let Some(report) = ts_client(
        "ts_sdk_elicitation_denied",
        &[
            "stdio-ask".into(),
            tack_bin.display().to_string(),
            ws.display().to_string(),
            log.display().to_string(),
        ],
    ) else {
        return;
    };
    // Mode ask: the write needs the server's user, and the client that would
    // say yes to anything is not asked.
    assert_eq!(report["write"]["isError"], true, "{report}");
    assert!(
        report["write"].to_string().contains("--mode accept-edits"),
        "{report}"
    );
    assert!(!ws.join("b.txt").exists());
    assert_eq!(report["elicited"], 0, "{report}");
}

/// An HTTP server that asks for an OAuth sign-in (tack-mcp's test fixture,
/// with its own authorization server), when stderr is not a terminal: the
/// server fails to start, saying to sign in once in a terminal, and the run
/// goes on without its tools.
#[test]
fn a_server_asking_for_a_sign_in_off_a_terminal_says_to_sign_in_at_one() {
    let test = "oauth_off_terminal";
    let Some(node) = node_bin("node", test) else {
        return;
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../plugins/mcp/tests/fixtures/oauth_server.mjs");
    let mut server = std::process::Command::new(node)
        .arg(script)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut port = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut port)
        .unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", port.trim());
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(
        ws.join(".mcp.json"),
        json!({"mcpServers": {"guarded": {"type": "http", "url": url}}}).to_string(),
    )
    .unwrap();
    tack(&ws).arg("trust").assert().success();
    let log = log_in(&dir, "guarded");
    let run = tack(&ws)
        .args(["run", "读文件 README.md", "--log"])
        .arg(&log)
        .assert();
    // rmcp's OAuth code logs what a sign-in exchanges at debug level: `-vv`
    // leaves it out, naming its target in `RUST_LOG` lets it in.
    let debug = |rust_log: Option<&str>| {
        let mut cmd = tack(&ws);
        cmd.args(["-vv", "run", "读文件 README.md", "--log"])
            .arg(log_in(&dir, "debug"));
        match rust_log {
            Some(directives) => cmd.env("RUST_LOG", directives),
            None => cmd.env_remove("RUST_LOG"),
        };
        String::from_utf8(cmd.output().unwrap().stderr).unwrap()
    };
    let quiet = debug(None);
    let named = debug(Some("rmcp::transport::auth=debug"));
    server.kill().unwrap();
    server.wait().unwrap();
    run.success()
        .stderr(predicates::str::contains(
            "MCP server `guarded` failed to start",
        ))
        .stderr(predicates::str::contains(
            "signing in needs you at a terminal",
        ));
    assert!(
        quiet.contains("DEBUG"),
        "-vv printed no debug line: {quiet}"
    );
    assert!(!quiet.contains("rmcp::transport::auth"), "{quiet}");
    assert!(named.contains("rmcp::transport::auth"), "{named}");
}
