//! `tack mcp serve` as real processes against real clients and attackers:
//! the JSON-RPC error cases, the Python SDK 2.x client in its default mode,
//! the Inspector's CLI, the HTTP token, an idle-connection flood, another
//! local user, and the session's hooks.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::*;

fn ci_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.ci")
}

/// A test tool `.ci/run` installs: a notice and `None` when missing, a
/// failure under CI.
fn installed(path: PathBuf, test: &str, how: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    let message = format!("{test}: {} is missing; {how} (see .ci/run)", path.display());
    if std::env::var_os("CI").is_some() {
        panic!("{message}");
    }
    println!("skipped, {message}");
    None
}

fn node(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("TACK_MCP_NODE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| ci_dir().join("node"));
    installed(
        dir.join("node_modules/.bin/node"),
        test,
        "install the Node tools with `npm ci --prefix .ci/node`",
    )
}

fn python(test: &str) -> Option<PathBuf> {
    installed(
        ci_dir().join("python/venv/bin/python"),
        test,
        "install the Python MCP SDK with `python3 -m venv .ci/python/venv && .ci/python/venv/bin/pip install -r .ci/python/requirements.txt`",
    )
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// `tack mcp serve` on stdio in `ws`.
fn serve_stdio(ws: &Path, log: &Path, extra: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("tack"))
        .args(["mcp", "serve", "--mode", "read-only", "--log"])
        .arg(log)
        .arg("--workspace")
        .arg(ws)
        .args(extra)
        .env("XDG_STATE_HOME", test_state_home())
        .env("XDG_CONFIG_HOME", test_state_home().join("config"))
        .env("HOME", test_state_home().join("home"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Writes `line` and reads the next line of the answer.
fn line_exchange(stdin: &mut impl Write, stdout: &mut impl BufRead, line: &str) -> Value {
    writeln!(stdin, "{line}").unwrap();
    stdin.flush().unwrap();
    let mut answer = String::new();
    stdout.read_line(&mut answer).unwrap();
    serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

fn initialize(version: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string()
}

#[test]
fn json_rpc_error_cases_on_stdio_are_answered_as_the_spec_says() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("a.txt"), "alpha\n").unwrap();

    // A 2025-03-26 session: batches are part of it.
    let mut server = serve_stdio(&ws, &log_in(&dir, "old"), &[]);
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    let init = line_exchange(&mut stdin, &mut stdout, &initialize("2025-03-26"));
    assert_eq!(init["result"]["protocolVersion"], "2025-03-26", "{init}");
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    // A line that is not JSON: a parse error, id null.
    let parse = line_exchange(&mut stdin, &mut stdout, "{this is not json");
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert!(parse["id"].is_null(), "{parse}");
    // A batch: every request answered, in one array.
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "a.txt"}}}
    ]);
    let answers = line_exchange(&mut stdin, &mut stdout, &batch.to_string());
    let answers = answers.as_array().unwrap_or_else(|| panic!("{answers}"));
    assert_eq!(answers.len(), 2, "{answers:?}");
    let ids: Vec<i64> = answers.iter().map(|a| a["id"].as_i64().unwrap()).collect();
    assert!(ids.contains(&1) && ids.contains(&2), "{answers:?}");
    let call = answers.iter().find(|a| a["id"] == 2).unwrap();
    assert!(
        call["result"]["content"].to_string().contains("alpha"),
        "{call}"
    );
    // No `resultType` on a session older than 2026-07-28.
    assert!(call["result"].get("resultType").is_none(), "{call}");
    // A known method with bad params: invalid params.
    let level = json!({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "loudest"}});
    let level = line_exchange(&mut stdin, &mut stdout, &level.to_string());
    assert_eq!(level["error"]["code"], -32602, "{level}");
    assert_eq!(level["id"], 3, "{level}");
    drop(stdin);
    let _ = server.wait();

    // A 2025-06-18 session: no batches there.
    let mut server = serve_stdio(&ws, &log_in(&dir, "new"), &[]);
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    line_exchange(&mut stdin, &mut stdout, &initialize("2025-06-18"));
    let refused = line_exchange(&mut stdin, &mut stdout, &batch.to_string());
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2025-06-18"),
        "{refused}"
    );
    drop(stdin);
    let _ = server.wait();

    // 2026-07-28: no initialize; server/discover, and `resultType` on results.
    let mut server = serve_stdio(&ws, &log_in(&dir, "2026"), &[]);
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}});
    let discover =
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}});
    let discover = line_exchange(&mut stdin, &mut stdout, &discover.to_string());
    let versions = discover["result"]["supportedVersions"]
        .as_array()
        .unwrap_or_else(|| panic!("{discover}"));
    assert!(versions.contains(&json!("2026-07-28")), "{discover}");
    assert_eq!(discover["result"]["resultType"], "complete", "{discover}");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "read_file", "arguments": {"path": "a.txt", "limit": 1}, "_meta": meta}});
    let call = line_exchange(&mut stdin, &mut stdout, &call.to_string());
    assert_eq!(call["result"]["resultType"], "complete", "{call}");
    // The text block is the structured result, serialized.
    let text: Value =
        serde_json::from_str(call["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, call["result"]["structuredContent"], "{call}");
    let list =
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": meta}});
    let list = line_exchange(&mut stdin, &mut stdout, &list.to_string());
    assert!(list["result"]["ttlMs"].is_number(), "{list}");
    drop(stdin);
    let _ = server.wait();
}

#[test]
fn tools_list_schemas_suit_generic_clients() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let out = tack(&ws)
        .args(["tools", "--format", "mcp"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tools: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let text = serde_json::to_string(&tools).unwrap();
    for bad in ["uint64", "uint32", "\"null\""] {
        assert!(!text.contains(bad), "{bad} in {text}");
    }
    let read = tools.iter().find(|t| t["name"] == "read_file").unwrap();
    assert_eq!(read["title"], "Read file");
    assert_eq!(
        read["inputSchema"]["properties"]["limit"]["type"],
        "integer"
    );
    assert!(read["outputSchema"].is_object(), "{read}");
    assert_eq!(read["annotations"]["readOnlyHint"], true);

    // What `tack mcp serve` lists is the same export.
    let mut server = serve_stdio(&ws, &log_in(&dir, "list"), &[]);
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    line_exchange(&mut stdin, &mut stdout, &initialize("2025-06-18"));
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    let list = line_exchange(
        &mut stdin,
        &mut stdout,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
    );
    assert_eq!(list["result"]["tools"], json!(tools));
    drop(stdin);
    let _ = server.wait();
}

#[test]
fn tack_tools_lists_the_configured_mcp_servers_tools_with_their_source() {
    let test = "tools_lists_mcp";
    let Some(node) = node(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let everything = node.parent().unwrap().join("mcp-server-everything");
    let path = format!(
        "{}:{}",
        node.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"everything": {"command": everything, "args": ["stdio"], "env": {"PATH": path}}}}).to_string(),
    )
    .unwrap();
    let out = tack(&ws)
        .args(["tools", "--format", "mcp", "--mcp-config"])
        .arg(&config)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let tools: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let echo = tools
        .iter()
        .find(|t| t["name"] == "mcp__everything__echo")
        .unwrap_or_else(|| panic!("{tools:?}"));
    assert_eq!(echo["title"], "Everything: echo");
    assert!(tools.iter().any(|t| t["name"] == "read_file"));
    assert!(
        stderr.contains("from MCP server `everything` (mcp__everything__*)"),
        "{stderr}"
    );
}

#[test]
fn the_python_sdk_2_client_in_its_default_mode_calls_tools_over_stdio_and_http() {
    let test = "python_sdk_2";
    let Some(python) = python(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("a.txt"), "alpha\nbeta\n").unwrap();
    let check = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["protocolVersion"], "2026-07-28", "{report}");
        assert_eq!(report["read"]["isError"], false, "{report}");
        assert_eq!(
            report["read"]["structuredContent"]["content"], "alpha\n",
            "{report}"
        );
        assert_eq!(report["read"]["resultType"], "complete", "{report}");
        assert_eq!(report["write"]["isError"], true, "{report}");
        assert!(
            report["tools"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["name"] == "bash")
        );
    };
    let stdio_log = log_in(&dir, "py-stdio");
    let out = Command::new(&python)
        .arg(fixture("mcp_py_client.py"))
        .arg("stdio")
        .arg(assert_cmd::cargo::cargo_bin("tack"))
        .arg(&ws)
        .arg(&stdio_log)
        .env("XDG_STATE_HOME", test_state_home())
        .output()
        .unwrap();
    check(out);
    assert_eq!(of_type(&stdio_log, "tool/result").len(), 2);

    let (mut server, url) = serve_http(
        &ws,
        &log_in(&dir, "py-http"),
        &[("TACK_MCP_TOKEN", "py-t0ken")],
        &[],
    );
    let out = Command::new(&python)
        .arg(fixture("mcp_py_client.py"))
        .args(["http", &url, "py-t0ken"])
        .output()
        .unwrap();
    server.kill().unwrap();
    let _ = server.wait();
    check(out);
}

#[test]
fn the_inspector_cli_sends_numeric_arguments_tack_takes() {
    let test = "inspector_cli";
    let Some(node) = node(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("a.txt"), "alpha\nbeta\n").unwrap();
    let log = log_in(&dir, "inspector");
    let cli = node
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("@modelcontextprotocol/inspector-cli/build");
    let out = Command::new(&node)
        .arg(cli.join("cli.js"))
        // It finds its own package.json from its directory.
        .current_dir(&cli)
        .env(
            "PATH",
            format!(
                "{}:{}",
                node.parent().unwrap().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .arg("--cli")
        .arg(assert_cmd::cargo::cargo_bin("tack"))
        .args(["mcp", "serve", "--mode", "read-only", "--log"])
        .arg(&log)
        .arg("--workspace")
        .arg(&ws)
        .args([
            "--method",
            "tools/call",
            "--tool-name",
            "read_file",
            "--tool-arg",
            "path=a.txt",
            "--tool-arg",
            "limit=1",
        ])
        .env("XDG_STATE_HOME", test_state_home())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let start = stdout.find('{').unwrap_or_else(|| panic!("{stdout}"));
    let result: Value =
        serde_json::from_str(&stdout[start..]).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["structuredContent"]["content"], "alpha\n",
        "{result}"
    );
    // The Inspector sent `limit` as the number 1.
    let calls = of_type(&log, "tool/call");
    let arguments: Value = serde_json::from_str(calls[0]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments["limit"], 1, "{calls:?}");
}

/// `tack mcp serve --http 127.0.0.1:0` in `ws` with `env`; the process and
/// its endpoint URL (stderr goes on being read, so the server never blocks
/// on it).
fn serve_http(ws: &Path, log: &Path, env: &[(&str, &str)], extra: &[&str]) -> (Child, String) {
    let (child, url, _) = serve_http_noting(ws, log, env, extra);
    (child, url)
}

/// As [`serve_http`], also giving what stderr said up to the endpoint.
fn serve_http_noting(
    ws: &Path,
    log: &Path,
    env: &[(&str, &str)],
    extra: &[&str],
) -> (Child, String, String) {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("tack"));
    cmd.args(["mcp", "serve", "--http", "127.0.0.1:0", "--log"])
        .arg(log)
        .arg("--workspace")
        .arg(ws)
        .args(extra)
        .env_remove("TACK_MCP_TOKEN")
        .env("XDG_STATE_HOME", test_state_home())
        .env("XDG_CONFIG_HOME", test_state_home().join("config"))
        .env("HOME", test_state_home().join("home"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut server = cmd.spawn().unwrap();
    let mut stderr = BufReader::new(server.stderr.take().unwrap());
    let mut said = String::new();
    let url = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the server ended early: {said}"
        );
        said.push_str(&line);
        if let Some(url) = line.trim().strip_prefix("tack: MCP endpoint ") {
            break url.to_owned();
        }
    };
    // What it says after the endpoint: how to get in.
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    said.push_str(&line);
    std::thread::spawn(move || {
        let mut rest = Vec::new();
        let _ = stderr.read_to_end(&mut rest);
    });
    (server, url, said)
}

/// An `initialize` POST to `url` with `token` (if any); the status line.
fn post_initialize(url: &str, token: Option<&str>) -> String {
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let body = initialize("2025-06-18");
    let auth = token.map_or_else(String::new, |t| format!("Authorization: Bearer {t}\r\n"));
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.lines().next().unwrap_or("").to_owned()
}

#[test]
fn http_needs_a_token_by_default_and_never_takes_it_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let state = dir.path().join("state");
    let state_s = state.display().to_string();
    let (mut server, url, said) = serve_http_noting(
        &ws,
        &log_in(&dir, "token"),
        &[("XDG_STATE_HOME", &state_s)],
        &[],
    );
    // A new token, in a file only its owner can read, and where it is said.
    let file = state.join("tack/mcp-serve.token");
    assert!(said.contains(&file.display().to_string()), "{said}");
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o600);
    let token = std::fs::read_to_string(&file).unwrap().trim().to_owned();
    assert_eq!(token.len(), 64);
    assert!(post_initialize(&url, None).contains("401"));
    assert!(post_initialize(&url, Some("wrong")).contains("401"));
    assert!(post_initialize(&url, Some(&token)).contains("200"));
    // Not in what every local user can read of the process.
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", server.id())).unwrap();
    assert!(!String::from_utf8_lossy(&cmdline).contains(&token));
    server.kill().unwrap();
    let _ = server.wait();

    // From the environment: not on the command line either.
    let (mut server, url) = serve_http(
        &ws,
        &log_in(&dir, "env"),
        &[("TACK_MCP_TOKEN", "env-s3cret")],
        &[],
    );
    assert!(post_initialize(&url, None).contains("401"));
    assert!(post_initialize(&url, Some("env-s3cret")).contains("200"));
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", server.id())).unwrap();
    assert!(!String::from_utf8_lossy(&cmdline).contains("env-s3cret"));
    server.kill().unwrap();
    let _ = server.wait();

    // A token file others can read is refused; there is no --token.
    let shared = dir.path().join("shared.token");
    std::fs::write(&shared, "s3cret\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = tack(&ws)
        .args(["mcp", "serve", "--http", "127.0.0.1:0", "--token-file"])
        .arg(&shared)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("chmod 600"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = tack(&ws)
        .args(["mcp", "serve", "--http", "127.0.0.1:0", "--token", "s3cret"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    // --no-auth only on loopback.
    let out = tack(&ws)
        .args(["mcp", "serve", "--http", "0.0.0.0:0", "--no-auth"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("loopback"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (mut server, url) = serve_http(&ws, &log_in(&dir, "open"), &[], &["--no-auth"]);
    assert!(post_initialize(&url, None).contains("200"));
    server.kill().unwrap();
    let _ = server.wait();
}

#[test]
fn a_flood_of_idle_connections_does_not_keep_a_client_with_the_token_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let (mut server, url) = serve_http(
        &ws,
        &log_in(&dir, "flood"),
        &[("TACK_MCP_TOKEN", "fl00d")],
        &[],
    );
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let idle: Vec<std::net::TcpStream> = (0..100)
        .map(|_| std::net::TcpStream::connect(&addr).unwrap())
        .collect();
    let started = Instant::now();
    let status = post_initialize(&url, Some("fl00d"));
    assert!(status.contains("200"), "{status}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    drop(idle);
    server.kill().unwrap();
    let _ = server.wait();
}

#[test]
fn another_local_user_can_neither_get_in_nor_approve_its_own_commands() {
    let test = "another_user";
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    let setpriv = Command::new("setpriv")
        .arg("--help")
        .output()
        .is_ok_and(|o| o.status.success());
    if !is_root || !setpriv {
        println!("skipped, {test}: needs root and setpriv to act as uid 65534");
        return;
    }
    let Some(node) = node(test) else { return };
    let reachable = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&node)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !reachable {
        println!(
            "skipped, {test}: uid 65534 cannot run {} (a directory on the way is closed to it)",
            node.display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "us3r-s3cret\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    // The other user may reach the directory, not read the token.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    let marker = ws.join("pwned");
    let token_arg = token_file.display().to_string();
    let (mut server, url) = serve_http(
        &ws,
        &log_in(&dir, "intruder"),
        &[],
        &["--mode", "ask", "--token-file", &token_arg],
    );
    let sdk = node
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("@modelcontextprotocol/sdk");
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&node)
        .arg(fixture("mcp_ts_intruder.mjs"))
        .arg(&sdk)
        .arg(&url)
        .arg(&token_file)
        // Handed the token (a leak): it still cannot grant itself a command.
        .arg("us3r-s3cret")
        .arg(&marker)
        .env("HOME", "/nonexistent")
        .output()
        .unwrap();
    server.kill().unwrap();
    let _ = server.wait();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["tokenFile"], "EACCES", "{report}");
    assert!(
        report["withoutToken"]
            .as_str()
            .unwrap()
            .contains("needs `Authorization: Bearer TOKEN`"),
        "{report}"
    );
    assert_eq!(report["bash"]["isError"], true, "{report}");
    assert_eq!(report["elicited"], 0, "{report}");
    assert!(!marker.exists());
}

#[test]
fn the_sessions_hooks_apply_to_calls_over_mcp_serve() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("a.txt"), "alpha\n").unwrap();
    let settings = dir.path().join("hooks.json");
    std::fs::write(
        &settings,
        json!({"hooks": {"PreToolUse": [{"matcher": "Read|read_file", "hooks": [
            {"type": "command", "command": "echo 'reading is off today' >&2; exit 2"}]}]}})
        .to_string(),
    )
    .unwrap();
    let settings_arg = settings.display().to_string();
    let mut server = serve_stdio(&ws, &log_in(&dir, "hooks"), &["--settings", &settings_arg]);
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    line_exchange(&mut stdin, &mut stdout, &initialize("2025-06-18"));
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "a.txt"}}});
    let call = line_exchange(&mut stdin, &mut stdout, &call.to_string());
    assert_eq!(call["result"]["isError"], true, "{call}");
    assert!(call.to_string().contains("reading is off today"), "{call}");
    assert!(!call.to_string().contains("alpha"), "{call}");
    drop(stdin);
    let _ = server.wait();
}

/// The Python SDK client of `mcp_py_served_calls.py` against `tack mcp
/// serve --mode MODE` with an ask rule on `write_file` and the reference
/// `everything` server imported; its report.
fn served_calls(
    test: &str,
    connect: &str,
    mode: &str,
) -> Option<(Value, PathBuf, tempfile::TempDir)> {
    let python = python(test)?;
    let everything = super::mcp::server_json("mcp-server-everything", test, &["stdio"])?;
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let settings = dir.path().join("settings.json");
    std::fs::write(
        &settings,
        json!({"permissions": {"ask": ["write_file"]}}).to_string(),
    )
    .unwrap();
    let mcp_config = dir.path().join("mcp.json");
    std::fs::write(
        &mcp_config,
        json!({"mcpServers": {"everything": everything}}).to_string(),
    )
    .unwrap();
    let log = log_in(&dir, connect);
    let out = Command::new(&python)
        .arg(fixture("mcp_py_served_calls.py"))
        .arg(connect)
        .arg(assert_cmd::cargo::cargo_bin("tack"))
        .arg(&ws)
        .arg(&log)
        .arg(mode)
        .arg(&settings)
        .arg(&mcp_config)
        .env("XDG_STATE_HOME", test_state_home())
        .env("XDG_CONFIG_HOME", test_state_home().join("config"))
        .env("HOME", test_state_home().join("home"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    Some((report, ws, dir))
}

#[test]
fn a_2026_client_confirms_a_call_through_input_required_and_hears_its_progress() {
    let Some((report, ws, _dir)) = served_calls("py_served_2026", "auto", "allow-all") else {
        return;
    };
    assert_eq!(report["protocolVersion"], "2026-07-28", "{report}");
    // The ask rule puts the write to the client: an input_required result,
    // answered by the SDK's elicitation callback, and the call sent again.
    assert_eq!(report["write"]["isError"], false, "{report}");
    assert_eq!(report["asked"].as_array().unwrap().len(), 1, "{report}");
    assert!(
        report["asked"][0].as_str().unwrap().contains("write_file"),
        "{report}"
    );
    assert_eq!(std::fs::read_to_string(ws.join("b.txt")).unwrap(), "x");
    // The imported tool's progress reaches the client of the served call.
    assert_eq!(report["long"]["isError"], false, "{report}");
    assert_progress(&report);
}

#[test]
fn a_2026_client_cannot_confirm_beyond_the_servers_mode() {
    let Some((report, ws, _dir)) = served_calls("py_served_2026_ask", "auto", "ask") else {
        return;
    };
    assert_eq!(report["protocolVersion"], "2026-07-28", "{report}");
    // Mode ask: the write needs the server's user; the client is not asked.
    assert_eq!(report["write"]["isError"], true, "{report}");
    assert!(
        report["write"].to_string().contains("--mode accept-edits"),
        "{report}"
    );
    assert_eq!(report["asked"].as_array().unwrap().len(), 0, "{report}");
    assert!(!ws.join("b.txt").exists());
}

#[test]
fn a_2025_client_confirms_a_call_mid_call_and_hears_its_progress() {
    let Some((report, ws, _dir)) = served_calls("py_served_2025", "legacy", "allow-all") else {
        return;
    };
    assert_eq!(report["protocolVersion"], "2025-11-25", "{report}");
    assert_eq!(report["write"]["isError"], false, "{report}");
    assert_eq!(report["asked"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(std::fs::read_to_string(ws.join("b.txt")).unwrap(), "x");
    assert_progress(&report);
}

/// The long-running call's progress reached the client, in order. (A
/// report sent right before the answer can be forwarded after it, and a
/// client drops it then: rmcp hands notifications to tasks of their own.)
fn assert_progress(report: &Value) {
    let progress: Vec<f64> = report["progress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert!(!progress.is_empty() && progress.len() <= 3, "{report}");
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{report}");
    assert!(
        report["progress"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["total"] == 3.0),
        "{report}"
    );
}

#[test]
fn session_start_and_end_hooks_fire_for_a_served_session() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let seen = dir.path().join("seen.jsonl");
    let record = format!("cat >> '{}'; echo >> '{}'", seen.display(), seen.display());
    let settings = dir.path().join("hooks.json");
    std::fs::write(
        &settings,
        json!({"hooks": {
            "SessionStart": [{"hooks": [{"type": "command", "command": record}]}],
            "SessionEnd": [{"hooks": [{"type": "command", "command": record}]}]
        }})
        .to_string(),
    )
    .unwrap();
    let settings_arg = settings.display().to_string();
    let mut server = serve_stdio(
        &ws,
        &log_in(&dir, "session"),
        &["--settings", &settings_arg],
    );
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    // SessionStart ran before the first request was read.
    line_exchange(&mut stdin, &mut stdout, &initialize("2025-11-25"));
    let events = |path: &Path| -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let started = events(&seen);
    assert_eq!(started.len(), 1, "{started:?}");
    assert_eq!(started[0]["hook_event_name"], "SessionStart");
    assert_eq!(started[0]["source"], "startup");
    // The client goes away: the session ends, and SessionEnd runs.
    drop(stdin);
    assert!(server.wait().unwrap().success());
    let all = events(&seen);
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[1]["hook_event_name"], "SessionEnd");
    assert_eq!(all[1]["reason"], "exit");
}

#[test]
fn run_code_is_served_in_code_mode_and_its_sub_calls_run_through_the_pipeline() {
    let test = "py_run_code";
    let Some(python) = python(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("a.txt"), "alpha\nbeta\n").unwrap();
    let log = log_in(&dir, "code");
    let code = "const r = await tools.read_file({path: 'a.txt'}); console.log('lines', r.total_lines); return r.content;";
    let out = Command::new(&python)
        .arg(fixture("mcp_py_run_code.py"))
        .arg(assert_cmd::cargo::cargo_bin("tack"))
        .arg(&ws)
        .arg(&log)
        .arg(code)
        .env("XDG_STATE_HOME", test_state_home())
        .env("XDG_CONFIG_HOME", test_state_home().join("config"))
        .env("HOME", test_state_home().join("home"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Under `code` only `run_code` is listed; the SDK it calls is in the
    // server's instructions.
    assert_eq!(report["tools"], json!(["run_code"]), "{report}");
    let instructions = report["instructions"].as_str().unwrap();
    assert!(instructions.contains("read_file"), "{instructions}");
    assert_eq!(report["run"]["isError"], false, "{report}");
    assert_eq!(
        report["run"]["structuredContent"]["result"], "alpha\nbeta\n",
        "{report}"
    );
    assert_eq!(report["run"]["structuredContent"]["logs"][0], "lines 2");
    // A direct call of a tool only programs call is refused (it is not
    // listed), as the model's is in `tack run`.
    assert!(
        report["direct"]["error"]
            .as_str()
            .unwrap()
            .contains("unknown tool `read_file`"),
        "{report}"
    );
    // The program's call went through the pipeline and is in the log.
    let starts = of_type(&log, "tool/code-dispatch-start");
    assert_eq!(starts.len(), 1, "{starts:?}");
}
