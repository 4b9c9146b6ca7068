//! The host's part of a sign-in: showing the user the authorization URL.

use futures::future::BoxFuture;

/// One sign-in the user is asked for.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AuthorizationPrompt {
    /// The MCP server's configured name.
    pub server: String,
    /// The MCP server's URL.
    pub server_url: String,
    /// The page to open in the user's browser: the authorization server's
    /// sign-in and consent.
    pub url: String,
    /// Where the authorization server sends the browser back: tack's
    /// loopback listener (`http://127.0.0.1:PORT/callback`), which waits for
    /// it and takes the authorization code from it.
    pub redirect_uri: String,
}

/// How a host has the user sign in to an MCP server's authorization
/// server: open [`AuthorizationPrompt::url`] in a browser, or print it for
/// the user to open. tack-mcp listens for the browser's return on
/// [`AuthorizationPrompt::redirect_uri`]; the sign-in fails if the browser
/// has not come back within [`ClientOptions::authorization_timeout`](crate::ClientOptions::authorization_timeout).
///
/// ```
/// use futures::future::BoxFuture;
/// use tack_mcp::{AuthorizationPrompt, Authorizer};
///
/// struct Print;
/// impl Authorizer for Print {
///     fn open(&self, prompt: AuthorizationPrompt) -> BoxFuture<'static, Result<(), String>> {
///         eprintln!("MCP server `{}` asks you to sign in: open {}", prompt.server, prompt.url);
///         Box::pin(async { Ok(()) })
///     }
/// }
/// ```
pub trait Authorizer: Send + Sync + 'static {
    /// Shows the user `prompt.url`. The future may end at once (a browser
    /// was started) or when the user is done; an `Err` ends the sign-in
    /// with that reason.
    fn open(&self, prompt: AuthorizationPrompt) -> BoxFuture<'static, Result<(), String>>;
}
