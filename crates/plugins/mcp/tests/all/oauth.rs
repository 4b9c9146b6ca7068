//! OAuth through tack's client against a server of tack's own tests
//! (`tests/fixtures/oauth_server.mjs`: an MCP server behind OAuth with its
//! authorization server), for what the conformance suite does not look
//! at: the token file kept between clients, the step-up inside a tool
//! call, a host without a sign-in, and a stored token that cannot be
//! refreshed any more.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tack_mcp::{AuthorizationPrompt, Authorizer, ClientOptions, McpConfig, ServerConfig};
use tokio::io::AsyncBufReadExt;

use crate::client_everything::{Host, call, host_with};
use crate::node;

/// The user's browser: signs in at once and goes back where the
/// authorization server sends it (tack's loopback listener). Counts the
/// sign-ins.
#[derive(Clone, Default)]
struct Browser(Arc<AtomicUsize>);

impl Authorizer for Browser {
    fn open(&self, prompt: AuthorizationPrompt) -> BoxFuture<'static, Result<(), String>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            assert!(
                prompt.redirect_uri.starts_with("http://127.0.0.1:"),
                "{prompt:?}"
            );
            assert_eq!(prompt.server, "guarded");
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap();
            let answer = http
                .get(&prompt.url)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let back = answer.headers()[reqwest::header::LOCATION]
                .to_str()
                .unwrap()
                .to_owned();
            assert!(back.starts_with(&prompt.redirect_uri), "{back}");
            http.get(back).send().await.map_err(|e| e.to_string())?;
            Ok(())
        })
    }
}

/// The fixture, running (stopped when dropped), and its MCP URL.
async fn oauth_server(mode: &str, test: &str) -> Option<(tokio::process::Child, String)> {
    // The HTTPS stack's crypto provider, for the test's own HTTP clients.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let node = node::bin("node", test)?;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/oauth_server.mjs"
    );
    let mut child = tokio::process::Command::new(node)
        .arg(script)
        .arg(mode)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let port = lines.next_line().await.unwrap().unwrap();
    Some((child, format!("http://127.0.0.1:{port}/mcp")))
}

async fn stats(url: &str) -> Value {
    let stats = url.replace("/mcp", "/stats");
    reqwest::get(stats).await.unwrap().json().await.unwrap()
}

async fn connect(url: &str, options: ClientOptions) -> Host {
    host_with(
        McpConfig::new().with_server("guarded", ServerConfig::http(url)),
        options,
    )
    .await
}

fn text(out: &tack_core::tool::Outcome) -> String {
    assert!(out.is_success(), "{out:?}");
    out.content[0].as_text().unwrap().to_owned()
}

fn assert_private(file: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_is_kept_in_the_token_file_and_the_next_client_uses_it() {
    let Some((_server, url)) = oauth_server("", "oauth_token_file").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("state/tack/mcp-oauth.json");

    // The first client signs in (the server's 401 at the start), then
    // steps up when the call needs `mcp:call` too (a 403), and the call
    // goes through.
    let browser = Browser::default();
    let host = connect(
        &url,
        ClientOptions::default()
            .authorizer(browser.clone())
            .token_file(&file),
    )
    .await;
    assert!(
        host.plugin.failures().is_empty(),
        "{:?}",
        host.plugin.failures()
    );
    let out = call(&host.pipeline, "mcp__guarded__whoami", json!({})).await;
    assert_eq!(text(&out), "signed in with scopes mcp:read mcp:call");
    assert_eq!(browser.0.load(Ordering::SeqCst), 2);
    host.plugin.shutdown().await;

    // The tokens are in the file, private, under the server's URL; the
    // file is the only place they were written to.
    assert_private(&file);
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        kept["servers"][&url]["token_response"]["access_token"], "tok-2",
        "{kept}"
    );

    // A new client with the same file needs no sign-in.
    let again = Browser::default();
    let host = connect(
        &url,
        ClientOptions::default()
            .authorizer(again.clone())
            .token_file(&file),
    )
    .await;
    assert!(
        host.plugin.failures().is_empty(),
        "{:?}",
        host.plugin.failures()
    );
    let out = call(&host.pipeline, "mcp__guarded__whoami", json!({})).await;
    assert_eq!(text(&out), "signed in with scopes mcp:read mcp:call");
    assert_eq!(again.0.load(Ordering::SeqCst), 0);
    host.plugin.shutdown().await;
    let served = stats(&url).await;
    assert_eq!(served["authorizations"], 2, "{served}");
    assert_eq!(served["tokens"], 2, "{served}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_cannot_show_a_sign_in_gets_a_clear_failure() {
    let Some((_server, url)) = oauth_server("", "oauth_no_authorizer").await else {
        return;
    };
    let host = connect(&url, ClientOptions::default()).await;
    let failures: Vec<String> = host
        .plugin
        .failures()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].contains("`guarded`")
            && failures[0].contains("OAuth sign-in")
            && failures[0].contains("headers"),
        "{failures:?}"
    );
    host.plugin.shutdown().await;
    assert_eq!(stats(&url).await["authorizations"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_token_that_cannot_be_refreshed_leads_to_a_new_sign_in() {
    let Some((_server, url)) = oauth_server("expire", "oauth_expired").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp-oauth.json");
    let first = Browser::default();
    let host = connect(
        &url,
        ClientOptions::default()
            .authorizer(first.clone())
            .token_file(&file),
    )
    .await;
    assert!(
        host.plugin.failures().is_empty(),
        "{:?}",
        host.plugin.failures()
    );
    host.plugin.shutdown().await;
    assert!(first.0.load(Ordering::SeqCst) >= 1);

    // The stored token has expired (the fixture's last two seconds); its
    // refresh is refused; the next client signs in again.
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let second = Browser::default();
    let host = connect(
        &url,
        ClientOptions::default()
            .authorizer(second.clone())
            .token_file(&file),
    )
    .await;
    assert!(
        host.plugin.failures().is_empty(),
        "{:?}",
        host.plugin.failures()
    );
    host.plugin.shutdown().await;
    assert_eq!(second.0.load(Ordering::SeqCst), 1);
    let served = stats(&url).await;
    assert!(served["refreshes"].as_u64().unwrap() >= 1, "{served}");
}

/// The user who says no.
#[derive(Clone, Default)]
struct Declining(Arc<AtomicUsize>);

impl Authorizer for Declining {
    fn open(&self, _prompt: AuthorizationPrompt) -> BoxFuture<'static, Result<(), String>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Err("the user declined".to_owned()) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_sign_in_is_asked_once_and_said_plainly() {
    let Some((_server, url)) = oauth_server("", "oauth_declined").await else {
        return;
    };
    let user = Declining::default();
    let host = connect(&url, ClientOptions::default().authorizer(user.clone())).await;
    let failures: Vec<String> = host
        .plugin
        .failures()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].contains("`guarded`")
            && failures[0].contains("the OAuth sign-in failed")
            && failures[0].contains("the user declined")
            && !failures[0].contains("Transport"),
        "{failures:?}"
    );
    assert_eq!(user.0.load(Ordering::SeqCst), 1);
    host.plugin.shutdown().await;
}
