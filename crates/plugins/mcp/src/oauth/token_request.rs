//! Token requests rmcp has no flow for: the JWT-bearer grant of a workload
//! identity (RFC 7523 section 2.1) and client credentials authenticated
//! with a signed client assertion (`private_key_jwt`). Both carry the
//! `resource` (RFC 8707) and the scopes asked for.

use rmcp::transport::auth::{AuthError, OAuthTokenResponse};

/// The grant type of RFC 7523's JWT-bearer grant.
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// The client assertion type of RFC 7523's client authentication.
const JWT_CLIENT_ASSERTION: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// Asks `endpoint` for a token with `params`, besides the `scope` and the
/// `resource`. The authorization server's refusal is the error, with its
/// `error` and description.
pub(crate) async fn token_request(
    endpoint: &str,
    mut params: Vec<(&'static str, String)>,
    scopes: &[String],
    resource: &str,
) -> Result<OAuthTokenResponse, AuthError> {
    if !scopes.is_empty() {
        params.push(("scope", scopes.join(" ")));
    }
    params.push(("resource", resource.to_owned()));
    let body = reqwest::Url::parse_with_params("http://form.invalid/", &params)
        .map_err(|e| AuthError::InternalError(e.to_string()))?
        .query()
        .unwrap_or_default()
        .to_owned();
    // rustls's crypto provider, unless the host installed one (as the
    // start of an HTTP server did already).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .map_err(|e| AuthError::InternalError(e.to_string()))?;
    let answer = http
        .post(endpoint)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| AuthError::TokenExchangeFailed(format!("token request to {endpoint}: {e}")))?;
    let status = answer.status();
    let text = answer.text().await.map_err(|e| {
        AuthError::TokenExchangeFailed(format!("token answer from {endpoint}: {e}"))
    })?;
    if !status.is_success() {
        let refusal: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let error = refusal["error"].as_str().unwrap_or("no error code");
        let why = refusal["error_description"]
            .as_str()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        return Err(AuthError::TokenExchangeFailed(format!(
            "the authorization server refused the token request ({status}): {error}{why}"
        )));
    }
    serde_json::from_str(&text).map_err(|e| {
        AuthError::TokenExchangeFailed(format!("the token answer from {endpoint} is not one: {e}"))
    })
}

/// The parameters of the JWT-bearer grant with the workload's `assertion`.
pub(crate) fn jwt_bearer(
    assertion: String,
    client_id: Option<&str>,
) -> Vec<(&'static str, String)> {
    let mut params = vec![
        ("grant_type", JWT_BEARER.to_owned()),
        ("assertion", assertion),
    ];
    if let Some(id) = client_id {
        params.push(("client_id", id.to_owned()));
    }
    params
}

/// The parameters of client credentials authenticated with `assertion`.
pub(crate) fn client_credentials_with_assertion(
    assertion: String,
    client_id: &str,
) -> Vec<(&'static str, String)> {
    vec![
        ("grant_type", "client_credentials".to_owned()),
        ("client_id", client_id.to_owned()),
        ("client_assertion_type", JWT_CLIENT_ASSERTION.to_owned()),
        ("client_assertion", assertion),
    ]
}
