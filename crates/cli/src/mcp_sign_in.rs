//! OAuth sign-ins of MCP servers (HTTP servers that answer 401): tack
//! prints the authorization URL on stderr and opens the user's browser
//! (`$BROWSER`, else `open` on macOS and `xdg-open` elsewhere); the
//! browser comes back to tack-mcp's loopback listener on 127.0.0.1. Only
//! where someone watches (stderr a terminal): elsewhere a server asking
//! for a sign-in fails to start, saying to sign in once in a terminal. The
//! tokens are kept in the
//! state directory (`$XDG_STATE_HOME/tack/mcp-oauth.json`, or
//! `~/.local/state/tack/mcp-oauth.json`; mode 0600), outside the workspace.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use futures::future::BoxFuture;
use tack_mcp::{AuthorizationPrompt, Authorizer};

/// The token file: `<state home>/tack/mcp-oauth.json` (none without a
/// state home: tokens then last as long as the session).
pub fn token_file() -> Option<PathBuf> {
    tack_agent::state_home_from_env().map(|state| state.join("tack").join("mcp-oauth.json"))
}

/// The sign-in: shown where stderr is a terminal, refused elsewhere.
pub fn authorizer() -> BrowserSignIn {
    BrowserSignIn {
        watched: std::io::stderr().is_terminal(),
    }
}

/// Prints the authorization URL and opens the browser.
pub struct BrowserSignIn {
    /// Whether someone watches stderr.
    watched: bool,
}

impl Authorizer for BrowserSignIn {
    fn open(&self, prompt: AuthorizationPrompt) -> BoxFuture<'static, Result<(), String>> {
        if !self.watched {
            let file = token_file()
                .map(|f| format!(" in {}", f.display()))
                .unwrap_or_default();
            return Box::pin(async move {
                Err(format!(
                    "signing in needs you at a terminal (stderr is not one here): run `tack` in a terminal once and sign in; the token is kept{file} for the next sessions"
                ))
            });
        }
        let url = prompt.url;
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            let shown = tack_agent::escape_line(&url).into_owned();
            return Box::pin(async move {
                Err(format!(
                    "the authorization URL {shown} is not an http(s) URL"
                ))
            });
        }
        let opened = open_browser(&url);
        // The blank line last: a spinner redrawing its line takes that one.
        eprintln!(
            "\r\x1b[2Ktack: MCP server `{}` asks you to sign in{}:\n  {}\n",
            tack_agent::escape_line(&prompt.server),
            if opened {
                " (your browser is opening; if it does not, open this URL)"
            } else {
                "; open this URL in your browser"
            },
            tack_agent::escape_line(&url),
        );
        Box::pin(async { Ok(()) })
    }
}

/// Starts the user's browser on `url`; whether one started.
fn open_browser(url: &str) -> bool {
    let program = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| {
            if cfg!(target_os = "macos") {
                "open".to_owned()
            } else {
                "xdg-open".to_owned()
            }
        });
    let started = Command::new(program.trim())
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match started {
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
            true
        }
        Err(_) => false,
    }
}
