//! OAuth 2.1 for streamable-HTTP servers, as the MCP authorization spec
//! describes it. A server that answers 401 with a `WWW-Authenticate`
//! challenge is signed in to: its protected resource metadata and its
//! authorization server's metadata are discovered, tack's client is
//! identified (the settings' pre-registered client, a client ID metadata
//! document, or dynamic client registration), the user signs in through
//! the host's [`Authorizer`] and comes back to a loopback listener
//! (authorization code with PKCE S256 and the `resource` parameter), and
//! the tokens are kept in the host's token file (mode 0600, by server URL)
//! and refreshed. A 403 `insufficient_scope` asks the user again for the
//! scopes needed too. Settings: [`OAuthSettings`].

mod authorizer;
mod client_assertion;
mod flow;
mod http_client;
mod loopback;
mod settings;
mod token_file;
mod token_request;

pub use authorizer::{AuthorizationPrompt, Authorizer};
pub(crate) use flow::{OAuthContext, OAuthSession};
pub(crate) use http_client::OAuthHttpClient;
pub use settings::{ClientSecret, EnterpriseIdp, OAuthGrant, OAuthSettings};
pub(crate) use token_file::TokenFile;
