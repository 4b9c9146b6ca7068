//! Bad peers on either side: clear errors, nothing hangs.

use std::time::Duration;

use std::sync::Arc;

use serde_json::{Value, json};
use tack_core::tool::{ErrorCode, Outcome};
use tack_mcp::{ClientOptions, HttpOptions, McpClient, McpConfig, ServerConfig};
use tack_pipeline::{Pipeline, ToolRegistry};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::client_everything::{Host, call, host, host_with};
use crate::fixture::{self, echo, serve};
use crate::node;

fn bad_server(mode: &str, test: &str) -> Option<ServerConfig> {
    let node = node::bin("node", test)?;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/bad_server.mjs");
    Some(ServerConfig::stdio(
        node.display().to_string(),
        [script, mode],
    ))
}

/// Calls `tool` on `host`; the test fails if the call has not ended within
/// `secs` seconds (a hang is what these tests look for).
async fn call_within(host: &Host, tool: &str, arguments: Value, secs: u64) -> Arc<Outcome> {
    tokio::time::timeout(
        Duration::from_secs(secs),
        call(&host.pipeline, tool, arguments),
    )
    .await
    .unwrap_or_else(|_| panic!("`{tool}` did not end within {secs} s"))
}

/// Asserts that `out` failed as EXECUTION_FAILED with a message naming every
/// one of `parts`; returns the failure's kind.
fn assert_failed_naming(out: &Outcome, parts: &[&str]) -> Option<String> {
    assert_eq!(
        out.error_code(),
        Some(ErrorCode::ExecutionFailed),
        "{out:?}"
    );
    let failure = out
        .failure_info()
        .expect("a failed call carries its failure");
    for part in parts {
        assert!(failure.message().contains(part), "{part} in {failure:?}");
    }
    failure.kind().map(str::to_owned)
}

/// Asserts that every configured server started.
fn assert_started(host: &Host) {
    assert!(
        host.plugin.failures().is_empty(),
        "{:?}",
        host.plugin.failures()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_mid_call_gives_a_clear_error_naming_it() {
    let Some(server) = bad_server("exit-mid-call", "exit_mid_call") else {
        return;
    };
    let host = host(McpConfig::new().with_server("flaky", server)).await;
    let out = call_within(&host, "mcp__flaky__work", json!({}), 20).await;
    assert_failed_naming(&out, &["`flaky`"]);
    // The next call restarts it (and it exits again): still a clear error.
    let again = call_within(&host, "mcp__flaky__work", json!({}), 20).await;
    assert_failed_naming(&again, &["`flaky`"]);
    host.plugin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_is_ended_by_the_pipeline_timeout_and_told() {
    let Some(server) = bad_server("silent-call", "silent_call") else {
        return;
    };
    let host = host(McpConfig::new().with_server("mute", server)).await;
    let cancel = tack_core::CancellationToken::new();
    let running = tack_core::capability::ToolDispatcher::dispatch(
        &host.pipeline,
        tack_core::tool::ToolCall::new("c1", "mcp__mute__work", "{}"),
        cancel.clone(),
    );
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let out = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the call ends");
    assert_eq!(out.error_code(), Some(ErrorCode::Cancelled), "{out:?}");
    host.plugin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_initialize_times_out_at_start() {
    let config = McpConfig::new().with_server("asleep", ServerConfig::stdio("sleep", ["600"]));
    let registry = ToolRegistry::new();
    let started = std::time::Instant::now();
    let plugin = McpClient::connect(
        &config,
        ClientOptions::default().startup_timeout(Duration::from_millis(500)),
        std::sync::Arc::new(registry.clone()),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let failures: Vec<String> = plugin.failures().iter().map(ToString::to_string).collect();
    assert!(
        failures[0].contains("`asleep`") && failures[0].contains("initialize"),
        "{failures:?}"
    );
    plugin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_rpc_from_a_server_does_not_hang_the_client() {
    let Some(server) = bad_server("garbage", "garbage") else {
        return;
    };
    let host = host(McpConfig::new().with_server("noisy", server)).await;
    // Either it could not start (named) or its tools work: never a hang.
    if host.plugin.failures().is_empty() {
        let out = call_within(&host, "mcp__noisy__work", json!({}), 20).await;
        assert!(
            out.is_success() || out.failure_info().unwrap().message().contains("`noisy`"),
            "{out:?}"
        );
    } else {
        assert!(host.plugin.failures()[0].to_string().contains("`noisy`"));
    }
    host.plugin.shutdown().await;
}

fn text_of(out: &Outcome) -> String {
    assert!(out.is_success(), "{out:?}");
    out.content[0].as_text().unwrap().to_owned()
}

fn assert_too_large(out: &Outcome, server: &str, limit: &str) {
    let server = format!("`{server}`");
    let kind = assert_failed_naming(out, &[&server, limit, "max_message_bytes"]);
    assert_eq!(kind.as_deref(), Some("mcp_message_too_large"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_answer_from_a_server_ends_the_call_and_the_server_still_serves() {
    let Some(server) = bad_server("huge", "huge") else {
        return;
    };
    let host = host(McpConfig::new().with_server("big", server)).await;
    assert_started(&host);
    let first = text_of(&*call(&host.pipeline, "mcp__big__work", json!({"small": true})).await);
    for _ in 0..2 {
        // A 32 MiB text answer, over the 8 MiB default: the call ends with
        // an error naming the server, the limit and how to raise it ...
        let out = call_within(&host, "mcp__big__work", json!({}), 60).await;
        assert_too_large(&out, "big", "8 MiB");
        // ... and the same server process answers the next call: the stream
        // is still in step, nothing was restarted.
        let next = call_within(&host, "mcp__big__work", json!({"small": true}), 60).await;
        assert_eq!(text_of(&next), first);
    }
    host.plugin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_nested_past_the_parsers_limit_fails_its_call_and_the_server_still_serves() {
    let Some(server) = bad_server("deep-answer", "deep_answer") else {
        return;
    };
    let host = host(McpConfig::new().with_server("nest", server)).await;
    let out = call_within(&host, "mcp__nest__work", json!({}), 20).await;
    assert_failed_naming(&out, &["`nest`", "not valid MCP"]);
    let next = call(&host.pipeline, "mcp__nest__work", json!({"small": true})).await;
    assert_eq!(text_of(&next), "worked");
    host.plugin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_raised_limit_lets_a_huge_answer_through() {
    let Some(server) = bad_server("huge", "huge_raised") else {
        return;
    };
    let host = host_with(
        McpConfig::new().with_server("big", server),
        ClientOptions::default().max_message_bytes(40 * 1024 * 1024),
    )
    .await;
    let out = call_within(&host, "mcp__big__work", json!({}), 120).await;
    assert_eq!(text_of(&out).len(), 32 * 1024 * 1024);
    host.plugin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_unfinished_answer_then_an_exit_ends_the_call_and_the_next_restarts_it() {
    let Some(server) = bad_server("huge-then-exit", "huge_then_exit") else {
        return;
    };
    let host = host(McpConfig::new().with_server("dying", server)).await;
    let ends = || call_within(&host, "mcp__dying__work", json!({}), 60);
    // Its start names the request it answers: the call fails as too large
    // as soon as the limit is passed.
    assert_too_large(&*ends().await, "dying", "8 MiB");
    // The rest is still arriving when the call returns, so the next call may
    // be sent on that connection and see the server exit: a clear error
    // naming it. The call after that starts the server again, which does the
    // same: too large again.
    let next = ends().await;
    if next.failure_info().unwrap().kind() == Some("mcp_transport") {
        assert_failed_naming(&next, &["`dying`", "restarted on the next call"]);
        assert_too_large(&*ends().await, "dying", "8 MiB");
    } else {
        assert_too_large(&next, "dying", "8 MiB");
    }
    host.plugin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_never_ends_fails_its_call_at_the_limit_and_the_connection_is_given_up() {
    let Some(server) = bad_server("endless", "endless") else {
        return;
    };
    let host = host_with(
        McpConfig::new().with_server("tap", server),
        ClientOptions::default().max_message_bytes(64 * 1024),
    )
    .await;
    let out = call_within(&host, "mcp__tap__work", json!({}), 60).await;
    // Failed as soon as 64 KiB of it had gone by, not when (never) it ends.
    assert_too_large(&out, "tap", "64 KiB");
    // Past 16 × the limit the connection is closed and the server stopped;
    // the next call restarts it (and gets the same treatment).
    let again = call_within(&host, "mcp__tap__work", json!({}), 60).await;
    assert_failed_naming(&again, &["`tap`"]);
    host.plugin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noise_that_never_ends_closes_the_connection_and_the_call_says_why() {
    let Some(server) = bad_server("endless-noise", "endless_noise") else {
        return;
    };
    let host = host_with(
        McpConfig::new().with_server("hiss", server),
        ClientOptions::default().max_message_bytes(64 * 1024),
    )
    .await;
    for _ in 0..2 {
        let out = call_within(&host, "mcp__hiss__work", json!({}), 60).await;
        assert_failed_naming(&out, &["`hiss`", "1 MiB", "without ending", "restarted"]);
    }
    host.plugin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_answer_over_http_ends_the_call_and_the_server_still_serves() {
    let served = serve(vec![fixture::big()], HttpOptions::default()).await;
    let host = host_with(
        McpConfig::new().with_server("far", ServerConfig::http(served.url.clone())),
        ClientOptions::default().max_message_bytes(1024 * 1024),
    )
    .await;
    assert_started(&host);
    for _ in 0..2 {
        let out = call_within(
            &host,
            "mcp__far__big",
            json!({"bytes": 2 * 1024 * 1024}),
            60,
        )
        .await;
        // rmcp ends the answer's SSE stream at the limit: the call says so,
        // naming the server and the limit.
        assert_failed_naming(
            &out,
            &["`far`", "1 MiB", "max_message_bytes", "still connected"],
        );
        let small = call(&host.pipeline, "mcp__far__big", json!({"bytes": 10})).await;
        assert_eq!(text_of(&small).len(), 10, "{small:?}");
    }
    host.plugin.shutdown().await;
    served.shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_bomb_is_refused_at_registration_and_the_rest_registered() {
    let Some(server) = bad_server("bomb", "bomb") else {
        return;
    };
    let bomb = host(McpConfig::new().with_server("b", server)).await;
    assert_eq!(bomb.plugin.tool_names(), ["mcp__b__work"]);
    bomb.plugin.shutdown().await;

    // Deeper than any JSON parser goes: the server is refused, named.
    let Some(server) = bad_server("bomb-deep", "bomb") else {
        return;
    };
    let deep = host(McpConfig::new().with_server("deep", server)).await;
    assert!(deep.plugin.tool_names().is_empty());
    let failures: Vec<String> = deep
        .plugin
        .failures()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(failures[0].contains("`deep`"), "{failures:?}");
    deep.plugin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_whose_schema_has_a_misplaced_keyword_is_imported_as_written() {
    let Some(server) = bad_server("misplaced", "misplaced") else {
        return;
    };
    let host = host(McpConfig::new().with_server("m", server)).await;
    assert_started(&host);
    // `minLength` on an integer constrains nothing; the server's schema is
    // kept as it is and the tool registered (with a warning naming it).
    assert_eq!(host.plugin.tool_names(), ["mcp__m__loose", "mcp__m__work"]);
    let schema = host
        .registry
        .visible(None)
        .iter()
        .find(|t| t.definition().name().as_str() == "mcp__m__loose")
        .map(|t| t.definition().input_schema().clone())
        .unwrap();
    assert_eq!(schema["properties"]["n"]["minLength"], 1);
    let out = call_within(&host, "mcp__m__loose", json!({"n": 3}), 30).await;
    assert!(out.is_success(), "{out:?}");
    host.plugin.shutdown().await;
}

/// One raw HTTP/1.1 request; the status line and body.
///
/// The answer is read while the request is written: a server refusing a
/// huge body answers and closes before reading all of it, and the rest of the
/// write then fails (a broken pipe), which is no error here; reading only
/// after writing could lose the answer to the reset that follows.
async fn raw(addr: std::net::SocketAddr, request: String) -> String {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let mut out = Vec::new();
    let reading = async {
        let _ = tokio::time::timeout(Duration::from_secs(5), reader.read_to_end(&mut out)).await;
    };
    let writing = async {
        let _ = writer.write_all(request.as_bytes()).await;
    };
    // The write half stays open until both end (a half-close could end the
    // exchange early).
    tokio::join!(reading, writing);
    drop(writer);
    String::from_utf8_lossy(&out).into_owned()
}

fn post(host: &str, extra: &str, body: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_refuses_foreign_hosts_origins_missing_tokens_and_huge_bodies() {
    let served = serve(vec![echo()], HttpOptions::default().bearer_token("s3cret")).await;
    let addr = served.addr;
    let local = addr.to_string();
    let auth = "Authorization: Bearer s3cret\r\n";

    let ok = raw(addr, post(&local, auth, &initialize())).await;
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");

    let no_token = raw(addr, post(&local, "", &initialize())).await;
    assert!(no_token.starts_with("HTTP/1.1 401"), "{no_token}");
    let wrong = raw(
        addr,
        post(&local, "Authorization: Bearer nope\r\n", &initialize()),
    )
    .await;
    assert!(wrong.starts_with("HTTP/1.1 401"), "{wrong}");

    // DNS rebinding: a foreign Host, or a foreign browser Origin.
    let rebound = raw(addr, post("evil.example", auth, &initialize())).await;
    assert!(
        rebound.starts_with("HTTP/1.1 403") || rebound.starts_with("HTTP/1.1 400"),
        "{rebound}"
    );
    let origin = raw(
        addr,
        post(
            &local,
            &format!("{auth}Origin: http://evil.example\r\n"),
            &initialize(),
        ),
    )
    .await;
    assert!(
        origin.starts_with("HTTP/1.1 403") || origin.starts_with("HTTP/1.1 400"),
        "{origin}"
    );

    // Bodies over the limit.
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"x\":\"{}\"}}}}",
        "a".repeat(5 * 1024 * 1024)
    );
    let big = raw(addr, post(&local, auth, &huge)).await;
    assert!(
        big.starts_with("HTTP/1.1 413"),
        "{}",
        &big[..big.len().min(200)]
    );

    // Malformed JSON-RPC: an error answer, not a hang.
    let garbage = raw(addr, post(&local, auth, "{not json")).await;
    assert!(garbage.starts_with("HTTP/1.1 4"), "{garbage}");

    let elsewhere = raw(
        addr,
        format!("GET /other HTTP/1.1\r\nHost: {local}\r\n{auth}Connection: close\r\n\r\n"),
    )
    .await;
    assert!(elsewhere.starts_with("HTTP/1.1 404"), "{elsewhere}");
    assert!(served.registry.get("echo", None).is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_re_registers_the_servers_tools() {
    let Some(server) = bad_server("changing", "list_changed") else {
        return;
    };
    let host = host(McpConfig::new().with_server("c", server)).await;
    assert_eq!(host.plugin.tool_names(), ["mcp__c__work"]);
    let out = call(&host.pipeline, "mcp__c__work", json!({})).await;
    assert!(out.is_success(), "{out:?}");
    let mut names = Vec::new();
    for _ in 0..100 {
        names = host.plugin.tool_names();
        if names.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(names, ["mcp__c__extra", "mcp__c__work"]);
    let extra = host.registry.get("mcp__c__extra", None).unwrap();
    assert_eq!(extra.definition().tier(), tack_core::tool::Tier::ReadOnly);
    let out = call(&host.pipeline, "mcp__c__extra", json!({})).await;
    assert!(out.is_success(), "{out:?}");
    host.plugin.shutdown().await;
    assert!(host.registry.get("mcp__c__extra", None).is_none());
}

/// A changed tool is swapped in one step: calls racing a stream of
/// `tools/list_changed` re-registrations never get UNKNOWN_TOOL for a tool
/// listed before and after, and a reader spinning on the registry never
/// finds it missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_swaps_a_changed_tool_without_a_window() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let Some(server) = bad_server("flipping", "list_changed_atomic") else {
        return;
    };
    let host = host(McpConfig::new().with_server("c", server)).await;
    assert_eq!(host.plugin.tool_names(), ["mcp__c__flip", "mcp__c__work"]);
    let description = |registry: &ToolRegistry| {
        registry
            .get("mcp__c__work", None)
            .map(|t| t.definition().description().to_owned())
    };
    assert_eq!(
        description(&host.registry).as_deref(),
        Some("does work, version 0")
    );
    let done = Arc::new(AtomicBool::new(false));
    let misses = Arc::new(AtomicUsize::new(0));
    let reader = {
        let (registry, done, misses) = (host.registry.clone(), done.clone(), misses.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if registry.get("mcp__c__work", None).is_none() {
                    misses.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    let caller = {
        let (pipeline, done) = (host.pipeline.clone(), done.clone());
        tokio::spawn(async move {
            let mut failures = Vec::new();
            let mut calls = 0;
            while !done.load(Ordering::Relaxed) {
                let out = call(&pipeline, "mcp__c__work", json!({})).await;
                calls += 1;
                if !out.is_success() {
                    failures.push(format!("{out:?}"));
                }
            }
            (calls, failures)
        })
    };
    const FLIPS: usize = 40;
    for _ in 0..FLIPS {
        let out = call(&host.pipeline, "mcp__c__flip", json!({})).await;
        assert!(out.is_success(), "{out:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let last = format!("does work, version {FLIPS}");
    for _ in 0..200 {
        if description(&host.registry).as_deref() == Some(last.as_str()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    done.store(true, Ordering::Relaxed);
    reader.join().unwrap();
    let (calls, failures) = caller.await.unwrap();
    assert_eq!(description(&host.registry).as_deref(), Some(last.as_str()));
    assert!(calls > 0);
    assert!(
        failures.is_empty(),
        "{} of {calls} calls failed: {:?}",
        failures.len(),
        failures.first()
    );
    assert_eq!(
        misses.load(Ordering::Relaxed),
        0,
        "the tool was missing from the registry mid-swap"
    );
    host.plugin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_mid_call_leaves_the_server_serving() {
    let cancelled = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let served = serve(
        vec![echo(), crate::fixture::sleep(cancelled)],
        HttpOptions::default(),
    )
    .await;
    let addr = served.addr;
    let local = addr.to_string();
    // A session, then a long call whose connection is dropped mid-way.
    let init = raw(addr, post(&local, "", &initialize())).await;
    let session = init
        .lines()
        .find_map(|l| {
            l.strip_prefix("mcp-session-id: ")
                .or_else(|| l.strip_prefix("Mcp-Session-Id: "))
        })
        .map(|s| s.trim().to_owned());
    let header = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-06-18\r\n"))
        .unwrap_or_default();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"ms": 30000}}})
    .to_string();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(post(&local, &header, &call).as_bytes())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    drop(stream);
    // The server goes on: a new client gets through at once.
    let again = tokio::time::timeout(
        Duration::from_secs(10),
        raw(addr, post(&local, "", &initialize())),
    )
    .await
    .expect("the server still answers");
    assert!(again.starts_with("HTTP/1.1 200"), "{again}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_past_the_limit_are_refused() {
    let mut options = HttpOptions::default();
    options.max_sessions = 1;
    let served = serve(vec![echo()], options).await;
    let local = served.addr.to_string();
    let first = raw(served.addr, post(&local, "", &initialize())).await;
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    let second = raw(served.addr, post(&local, "", &initialize())).await;
    assert!(second.starts_with("HTTP/1.1 503"), "{second}");
    assert!(second.contains("limit"), "{second}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uninstalling_the_plugin_disposes_the_tools_and_stops_the_servers() {
    let Some(node) = node::bin("node", "uninstall") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/bad_server.mjs");
    let server = ServerConfig::stdio(
        "sh",
        [
            "-c".to_owned(),
            format!(
                "echo $$ > '{}'; exec '{}' '{script}' plain",
                pid_file.display(),
                node.display()
            ),
        ],
    );
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let plugin = McpClient::connect(
        &McpConfig::new().with_server("u", server),
        ClientOptions::default(),
        std::sync::Arc::new(registry.clone()),
    )
    .await;
    let mut host =
        tack_core::host::PluginHost::new(pipeline.hooks(), pipeline.capabilities(), &registry);
    host.install(&plugin).unwrap();
    assert!(registry.get("mcp__u__work", None).is_some());
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_owned();
    let proc_dir = std::path::PathBuf::from(format!("/proc/{pid}"));
    assert!(proc_dir.exists());

    assert!(host.uninstall(tack_mcp::PLUGIN_NAME));
    assert!(registry.get("mcp__u__work", None).is_none());
    // The child is gone (killed, then reaped by the transport).
    let mut gone = false;
    for _ in 0..100 {
        let state = std::fs::read_to_string(proc_dir.join("stat")).unwrap_or_default();
        if state.is_empty() || state.contains(") Z ") {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "the server process {pid} still runs after uninstall");
    let out = call(&pipeline, "mcp__u__work", json!({})).await;
    assert_eq!(out.error_code(), Some(ErrorCode::UnknownTool));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_json_body_over_http_ends_the_call_and_the_server_still_serves() {
    use tokio::io::AsyncBufReadExt;
    let Some(node) = node::bin("node", "huge_json_body") else {
        return;
    };
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/bad_http_server.mjs"
    );
    let mut child = tokio::process::Command::new(node)
        .arg(script)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let port = lines.next_line().await.unwrap().unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let host = host(McpConfig::new().with_server("json", ServerConfig::http(url))).await;
    assert_started(&host);
    for _ in 0..2 {
        let out = call_within(&host, "mcp__json__work", json!({}), 60).await;
        assert_too_large(&out, "json", "8 MiB");
        let small = call(&host.pipeline, "mcp__json__work", json!({"small": true})).await;
        assert_eq!(text_of(&small), "worked");
    }
    host.plugin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_request_on_stdio_gets_an_error_answer_and_the_session_goes_on() {
    use tokio::io::AsyncBufReadExt;
    let registry = ToolRegistry::new();
    let _echo = registry.register(echo()).unwrap();
    let pipeline = Pipeline::new(registry);
    let server = fixture::server_for(&pipeline).with_max_message_bytes(64 * 1024);
    let (client, server_side) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_side);
    tokio::spawn(server.serve_stream(read, write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = tokio::io::BufReader::new(client_read).lines();
    let mut next = async || {
        tokio::time::timeout(Duration::from_secs(20), lines.next_line())
            .await
            .expect("an answer")
            .unwrap()
            .unwrap()
    };
    let mut send = async |message: String| {
        client_write.write_all(message.as_bytes()).await.unwrap();
        client_write.write_all(b"\n").await.unwrap();
    };
    send(initialize()).await;
    assert!(next().await.contains("\"result\""));
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string()).await;
    // 1 MiB of arguments, over the 64 KiB limit: an error answer for id 2,
    // not silence.
    let huge = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x".repeat(1 << 20)}}});
    send(huge.to_string()).await;
    let answer: serde_json::Value = serde_json::from_str(&next().await).unwrap();
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("64 KiB"), "{message}");
    // The session is in step: the next call is answered.
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}}})
        .to_string(),
    )
    .await;
    let answer: serde_json::Value = serde_json::from_str(&next().await).unwrap();
    assert_eq!(answer["id"], 3, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["text"], "hi",
        "{answer}"
    );
}
