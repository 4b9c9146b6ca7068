//! Serving the session object on a port.

use restate_sdk::endpoint::Endpoint;
use restate_sdk::http_server::HttpServer;
use std::sync::Arc;
use tokio::net::TcpListener;

use crate::host::SessionHost;
use crate::session::TackSession;

/// An endpoint could not be served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The address could not be bound.
    #[error("cannot listen on {address}: {source} (choose another port, or free this one)")]
    Bind {
        /// The address.
        address: String,
        /// Why.
        source: std::io::Error,
    },
}

/// The Restate endpoint serving `host`'s sessions (the `TackSession`
/// virtual object).
pub fn endpoint(host: Arc<dyn SessionHost>) -> Endpoint {
    Endpoint::builder().bind(TackSession::new(host)).build()
}

/// Serves `host`'s sessions on `listener` (HTTP/2, as Restate calls
/// endpoints) until the process ends. Register the endpoint's URL with the
/// Restate server (`POST {admin}/deployments {"uri": …}`) to route sessions
/// to it; several endpoints can serve the same sessions.
pub async fn serve(listener: TcpListener, host: Arc<dyn SessionHost>) {
    HttpServer::new(endpoint(host)).serve(listener).await;
}
