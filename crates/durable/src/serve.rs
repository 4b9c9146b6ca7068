//! Serving the session object on a port.

use std::sync::Arc;

use restate_sdk::endpoint::Endpoint;
use restate_sdk::http_server::HttpServer;
use tokio::net::TcpListener;

use crate::host::SessionHost;
use crate::session::TackSession;

/// An endpoint could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// A request-identity key is not one.
    #[error(
        "`{key}` is not a Restate request-identity public key ({reason}); give the `publickeyv1_…` key of the server's request-identity-private-key-pem-file"
    )]
    IdentityKey {
        /// The key given.
        key: String,
        /// Why it was refused.
        reason: String,
    },
}

/// The Restate endpoint serving `host`'s sessions (the `TackSession`
/// virtual object). With `identity_keys` (Restate's request-signing public
/// keys, `publickeyv1_…`), a request not signed by one of them is refused;
/// with none, every request that reaches the endpoint is served.
///
/// # Errors
///
/// [`ServeError::IdentityKey`].
pub fn endpoint(
    host: Arc<dyn SessionHost>,
    identity_keys: &[String],
) -> Result<Endpoint, ServeError> {
    let mut builder = Endpoint::builder();
    for key in identity_keys {
        builder = builder
            .identity_key(key)
            .map_err(|e| ServeError::IdentityKey {
                key: key.clone(),
                reason: e.to_string(),
            })?;
    }
    Ok(builder.bind(TackSession::new(host)).build())
}

/// Serves `endpoint` (see [`endpoint`]) on `listener` (HTTP/2, as Restate
/// calls endpoints) until the process ends. Register the endpoint's URL with
/// the Restate server (`POST {admin}/deployments {"uri": …}`) to route
/// sessions to it; several endpoints can serve the same sessions.
pub async fn serve(listener: TcpListener, endpoint: Endpoint) {
    HttpServer::new(endpoint).serve(listener).await;
}
