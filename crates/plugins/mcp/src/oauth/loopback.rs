//! The loopback listener the user's browser comes back to after signing
//! in: `http://127.0.0.1:PORT/callback?code=…&state=…`, on a random port
//! unless the settings fix one. It answers the browser with a short page
//! and hands the callback URL to the flow (never logged: it holds the
//! authorization code).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The path the browser is sent back to.
pub(crate) const CALLBACK_PATH: &str = "/callback";

/// The largest request head read from the browser.
const MAX_HEAD: usize = 16 * 1024;

/// A listener waiting for one authorization redirect.
pub(crate) struct Loopback {
    listener: TcpListener,
    port: u16,
}

impl Loopback {
    /// Listens on 127.0.0.1, on `port` or any free one.
    pub(crate) async fn bind(port: Option<u16>) -> Result<Self, String> {
        let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
            .await
            .map_err(|e| match port {
                Some(port) => format!(
                    "cannot listen on 127.0.0.1:{port} for the authorization redirect ({e}); free the port or change `oauth.callbackPort`"
                ),
                None => format!("cannot listen on 127.0.0.1 for the authorization redirect: {e}"),
            })?;
        let port = listener
            .local_addr()
            .map_err(|e| format!("loopback listener: {e}"))?
            .port();
        Ok(Loopback { listener, port })
    }

    /// The redirect URI to register and send.
    pub(crate) fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    /// Waits for the browser's redirect: the full callback URL. Requests
    /// for other paths (a browser's `/favicon.ico`) are answered 404 and
    /// waited past; an `error` in the redirect is returned as the error.
    pub(crate) async fn wait(self) -> Result<String, String> {
        loop {
            let (mut stream, _) = self
                .listener
                .accept()
                .await
                .map_err(|e| format!("loopback listener: {e}"))?;
            let target =
                match tokio::time::timeout(Duration::from_secs(10), read_target(&mut stream)).await
                {
                    Ok(Some(target)) => target,
                    _ => continue,
                };
            let url = format!("http://127.0.0.1:{}{target}", self.port);
            let Some(query) = callback_query(&target) else {
                let _ = respond(&mut stream, "404 Not Found", "Not found.").await;
                continue;
            };
            if let Some(error) = redirect_error(query) {
                let _ = respond(
                    &mut stream,
                    "200 OK",
                    "Authorization failed; you can close this tab and return to tack.",
                )
                .await;
                return Err(error);
            }
            let _ = respond(
                &mut stream,
                "200 OK",
                "Authorization complete; you can close this tab and return to tack.",
            )
            .await;
            return Ok(url);
        }
    }
}

/// The request target of a `GET` (path and query), if the head is one.
async fn read_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 || head.len() + n > MAX_HEAD {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    request_target(&String::from_utf8_lossy(&head)).map(str::to_owned)
}

/// The target of a request line `GET TARGET HTTP/1.x`.
fn request_target(head: &str) -> Option<&str> {
    let line = head.lines().next()?;
    let mut parts = line.split(' ');
    (parts.next()? == "GET").then_some(())?;
    let target = parts.next()?;
    parts.next()?.starts_with("HTTP/").then_some(target)
}

/// The query of a target on the callback path.
fn callback_query(target: &str) -> Option<&str> {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    (path == CALLBACK_PATH).then_some(query)
}

/// The authorization server's `error` (and its description), if the
/// redirect carries one.
fn redirect_error(query: &str) -> Option<String> {
    let mut error = None;
    let mut description = None;
    for (key, value) in form_urlencoded_pairs(query) {
        match key.as_str() {
            "error" => error = Some(value),
            "error_description" => description = Some(value),
            _ => {}
        }
    }
    let error = error?;
    Some(match description {
        Some(description) => {
            format!("the authorization server refused: {error} ({description})")
        }
        None => format!("the authorization server refused: {error}"),
    })
}

fn form_urlencoded_pairs(query: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(&format!("http://127.0.0.1/?{query}"))
        .map(|url| {
            url.query_pairs()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect()
        })
        .unwrap_or_default()
}

async fn respond(
    stream: &mut tokio::net::TcpStream,
    status: &str,
    text: &str,
) -> std::io::Result<()> {
    let body = format!("<!doctype html><meta charset=\"utf-8\"><title>tack</title><p>{text}</p>\n");
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines_and_callback_queries() {
        assert_eq!(
            request_target("GET /callback?code=a&state=b HTTP/1.1\r\nHost: x\r\n\r\n"),
            Some("/callback?code=a&state=b")
        );
        assert_eq!(request_target("POST /callback HTTP/1.1\r\n"), None);
        assert_eq!(request_target("GET /callback\r\n"), None);
        assert_eq!(callback_query("/callback?code=a"), Some("code=a"));
        assert_eq!(callback_query("/favicon.ico"), None);
        assert_eq!(callback_query("/callbackx?code=a"), None);
        assert_eq!(
            redirect_error("error=access_denied&error_description=no%20way").as_deref(),
            Some("the authorization server refused: access_denied (no way)")
        );
        assert_eq!(redirect_error("code=a&state=b"), None);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_redirect_is_received_past_other_requests() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let loopback = Loopback::bind(None).await.unwrap();
        let redirect = loopback.redirect_uri();
        assert!(redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"));
        let waiting = tokio::spawn(loopback.wait());
        let base = redirect.trim_end_matches("/callback").to_owned();
        let client = reqwest::Client::new();
        let favicon = client
            .get(format!("{base}/favicon.ico"))
            .send()
            .await
            .unwrap();
        assert_eq!(favicon.status(), 404);
        let page = client
            .get(format!("{redirect}?code=c0de&state=s1"))
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), 200);
        assert!(
            page.text()
                .await
                .unwrap()
                .contains("Authorization complete")
        );
        let url = waiting.await.unwrap().unwrap();
        assert_eq!(url, format!("{redirect}?code=c0de&state=s1"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_refusal_is_an_error() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let loopback = Loopback::bind(None).await.unwrap();
        let redirect = loopback.redirect_uri();
        let waiting = tokio::spawn(loopback.wait());
        reqwest::get(format!("{redirect}?error=access_denied&state=s"))
            .await
            .unwrap();
        let err = waiting.await.unwrap().unwrap_err();
        assert!(err.contains("access_denied"), "{err}");
    }
}
