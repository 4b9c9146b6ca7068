//! The streamable-HTTP client of a server that may ask for OAuth: rmcp's
//! `AuthClient` (the token on every request, refreshed when it expires or
//! is refused), and around it the sign-in when the server answers 401 and
//! the step-up when it answers 403 `insufficient_scope`, after which the
//! request is sent again.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{AuthClient, AuthError};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse};

use super::flow::OAuthSession;

/// The most step-ups for one request: a server that keeps asking for more
/// scopes is not followed forever.
const MAX_STEP_UPS: u32 = 2;

type Result<T> = std::result::Result<T, StreamableHttpError<reqwest::Error>>;

/// See the module documentation.
#[derive(Clone)]
pub(crate) struct OAuthHttpClient {
    inner: AuthClient<reqwest::Client>,
    session: Arc<OAuthSession>,
}

impl OAuthHttpClient {
    pub(crate) fn new(inner: AuthClient<reqwest::Client>, session: Arc<OAuthSession>) -> Self {
        OAuthHttpClient { inner, session }
    }

    /// Runs `call`, signing in once on a 401 and stepping up on a 403 that
    /// asks for scopes not asked for yet, each followed by the call again.
    async fn authorized<T, F, Fut>(&self, call: F) -> Result<T>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let mut signed_in = false;
        let mut step_ups = 0;
        loop {
            let seen = self.session.generation();
            match call().await {
                Err(StreamableHttpError::AuthRequired(challenge)) if !signed_in => {
                    signed_in = true;
                    self.session
                        .authorize(Some(&challenge.www_authenticate_header), seen, false)
                        .await?;
                }
                // The stored token expired and could not be refreshed (a
                // token from an earlier session, say): sign in afresh.
                Err(StreamableHttpError::Auth(
                    AuthError::AuthorizationRequired
                    | AuthError::TokenRefreshFailed(_)
                    | AuthError::TokenRefreshRejected(_),
                )) if !signed_in => {
                    signed_in = true;
                    self.session.authorize(None, seen, false).await?;
                }
                Err(StreamableHttpError::InsufficientScope(challenge))
                    if step_ups < MAX_STEP_UPS
                        && self
                            .session
                            .step_up_can_help(&challenge.www_authenticate_header)
                            .await =>
                {
                    step_ups += 1;
                    self.session
                        .authorize(Some(&challenge.www_authenticate_header), seen, true)
                        .await?;
                }
                other => return other,
            }
        }
    }
}

/// The most redirects followed for one request.
const MAX_REDIRECTS: usize = 10;

/// The HTTP client of the MCP requests, as rmcp's transport builds its own:
/// no idle connections kept (a reused connection whose last body was not
/// read whole stalls on delayed ACKs), and only same-origin 307 and 308
/// redirects followed (a 301, 302 or 303 would turn the POST into a GET
/// without its message, and another origin would be sent the session id,
/// the headers and the token).
pub(crate) fn transport_client() -> std::result::Result<reqwest::Client, reqwest::Error> {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(policy)
        .build()
}

impl StreamableHttpClient for OAuthHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse> {
        self.authorized(|| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse> {
        self.authorized(|| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse> {
        self.authorized(|| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<()> {
        // Ending a session never starts a sign-in.
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, std::result::Result<Sse, SseError>>> {
        self.authorized(|| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, std::result::Result<Sse, SseError>>> {
        self.authorized(|| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}
