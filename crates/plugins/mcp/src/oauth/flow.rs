//! One server's authorization: discovery from the server's challenge, the
//! client registration, the sign-in through the host, the token exchange,
//! the step-up to more scopes, and the grants without a user (client
//! credentials, a workload's JWT, enterprise-managed). rmcp's
//! `AuthorizationManager` does the protocol (protected resource metadata,
//! authorization server metadata with the spec's fallbacks, dynamic client
//! registration, PKCE S256, the `resource` parameter, the issuer checks,
//! refreshing, client credentials with a secret) and rmcp's `enterprise`
//! module the enterprise-managed exchanges; this module decides when, with
//! which client and scopes, and makes the two token requests rmcp has no
//! flow for (`token_request`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
};
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadata,
    ClientCredentialsConfig, CredentialStore, InMemoryCredentialStore, OAuthClientConfig,
    OAuthTokenResponse, StoredCredentials, WWWAuthenticateParams, default_oauth_http_client,
};
use tokio::sync::Mutex;

use super::authorizer::{AuthorizationPrompt, Authorizer};
use super::loopback::Loopback;
use super::settings::{OAuthGrant, OAuthSettings};
use super::token_file::TokenFile;
use super::{client_assertion, token_request};

/// The client name tack registers with.
const CLIENT_NAME: &str = "tack";

/// A credential store shared by rmcp's manager and the grants rmcp has no
/// flow for (which save their tokens into it themselves).
#[derive(Clone)]
struct SharedStore(Arc<dyn CredentialStore>);

#[async_trait::async_trait]
impl CredentialStore for SharedStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.0.load().await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.0.save(credentials).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.0.clear().await
    }
}

/// What a server's authorization needs from the client's options.
#[derive(Clone)]
pub(crate) struct OAuthContext {
    pub(crate) authorizer: Option<Arc<dyn Authorizer>>,
    pub(crate) token_file: Option<TokenFile>,
    pub(crate) timeout: Duration,
}

/// One server's authorization state, shared by its HTTP requests.
pub(crate) struct OAuthSession {
    server: String,
    url: String,
    settings: OAuthSettings,
    context: OAuthContext,
    /// Shared with rmcp's `AuthClient`, which puts the token on requests
    /// and refreshes it.
    pub(crate) manager: Arc<Mutex<AuthorizationManager>>,
    /// The manager's credential store.
    store: SharedStore,
    /// One sign-in at a time.
    running: Mutex<()>,
    /// How many authorizations completed (a request that waited for
    /// another's sign-in does not start its own).
    completed: std::sync::atomic::AtomicU64,
    /// Whether a sign-in is waiting for the user (the start deadline does
    /// not run out meanwhile).
    pub(crate) authorizing: Arc<AtomicBool>,
    /// Why the last authorization failed (for the start error, which
    /// otherwise shows it inside rmcp's transport error).
    failure: std::sync::Mutex<Option<String>>,
}

impl OAuthSession {
    /// The session of the server `server` at `url`, and the HTTP client
    /// that puts its token on requests (with the tokens stored for the
    /// server, if any: refreshed or replaced when the server refuses them).
    pub(crate) async fn connect(
        server: &str,
        url: &str,
        settings: OAuthSettings,
        context: OAuthContext,
    ) -> Result<(Self, AuthClient<reqwest::Client>), String> {
        // rustls's crypto provider for the HTTP clients made here, unless
        // the host installed one (as the start of an HTTP server does).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut manager = AuthorizationManager::new(url)
            .await
            .map_err(|e| format!("OAuth for {url}: {e}"))?;
        let store = SharedStore(match &context.token_file {
            Some(file) => Arc::new(file.for_server(url)),
            None => Arc::new(InMemoryCredentialStore::new()),
        });
        manager.set_credential_store(store.clone());
        if let Err(e) = manager.initialize_from_store().await {
            tracing::debug!(server, "stored OAuth credentials not used: {e}");
        }
        let http = super::http_client::transport_client()
            .map_err(|e| format!("cannot make an HTTP client for {url}: {e}"))?;
        let client = AuthClient::new(http, manager);
        let session = OAuthSession {
            server: server.to_owned(),
            url: url.to_owned(),
            settings,
            context,
            manager: Arc::clone(&client.auth_manager),
            store,
            running: Mutex::new(()),
            completed: Default::default(),
            authorizing: Arc::new(AtomicBool::new(false)),
            failure: std::sync::Mutex::new(None),
        };
        Ok((session, client))
    }

    /// How many authorizations completed so far.
    pub(crate) fn generation(&self) -> u64 {
        self.completed.load(Ordering::SeqCst)
    }

    /// Why the last authorization failed (none after a success, and
    /// before any since [`forget_failure`](Self::forget_failure)).
    pub(crate) fn failure(&self) -> Option<String> {
        self.failure.lock().ok().and_then(|f| f.clone())
    }

    /// Forgets the last failure (a new start of the server).
    pub(crate) fn forget_failure(&self) {
        if let Ok(mut failure) = self.failure.lock() {
            *failure = None;
        }
    }

    /// Authorizes after the server's `challenge` (its `WWW-Authenticate`;
    /// none when the stored token could not be refreshed), unless another
    /// request did since `seen` (a [`generation`](Self::generation)).
    /// `step_up`: the scopes the server said were insufficient (a 403).
    pub(crate) async fn authorize(
        &self,
        challenge: Option<&str>,
        seen: u64,
        step_up: bool,
    ) -> Result<(), AuthError> {
        let result = self.authorize_once(challenge, seen, step_up).await;
        if let Ok(mut failure) = self.failure.lock() {
            *failure = result.as_ref().err().map(ToString::to_string);
        }
        result
    }

    async fn authorize_once(
        &self,
        challenge: Option<&str>,
        seen: u64,
        step_up: bool,
    ) -> Result<(), AuthError> {
        let _one = self.running.lock().await;
        if self.generation() != seen {
            return Ok(());
        }
        let mut manager = self.manager.lock().await;
        let resolution = manager.resolve_metadata_from_challenge(challenge).await?;
        let metadata = resolution.metadata.clone();
        manager.set_metadata(resolution.metadata);
        match self.settings.grant {
            OAuthGrant::ClientCredentials if self.settings.private_key.is_some() => {
                self.signed_client_credentials(&mut manager, &metadata)
                    .await?;
            }
            OAuthGrant::ClientCredentials => self.client_credentials(&mut manager).await?,
            OAuthGrant::JwtBearer => self.jwt_bearer(&mut manager, &metadata).await?,
            OAuthGrant::EnterpriseManaged => self.enterprise(&mut manager, &metadata).await?,
            _ => {
                let scopes = self.scopes(&manager, challenge, step_up).await;
                self.authorization_code(&mut manager, &metadata, scopes)
                    .await?;
            }
        }
        self.completed.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// The scopes to ask for: the settings' if any; on a step-up, those
    /// asked for before and those the challenge names; otherwise the
    /// challenge's `scope`, else the protected resource metadata's
    /// `scopes_supported`, else none (rmcp's initial selection).
    async fn scopes(
        &self,
        manager: &AuthorizationManager,
        challenge: Option<&str>,
        step_up: bool,
    ) -> Vec<String> {
        let challenged = challenged_scopes(challenge.unwrap_or_default(), &self.url);
        let current = manager.get_current_scopes().await;
        match pick_scopes(step_up, &self.settings.scopes, current, challenged) {
            Some(scopes) => scopes,
            None => manager.select_initial_scopes(&[]).await,
        }
    }

    /// Whether a 403's `challenge` asks for scopes not asked for yet (a
    /// step-up can help), or only for those already granted (it cannot).
    pub(crate) async fn step_up_can_help(&self, challenge: &str) -> bool {
        let challenged = challenged_scopes(challenge, &self.url);
        if challenged.is_empty() {
            return false;
        }
        let current = self.manager.lock().await.get_current_scopes().await;
        challenged.iter().any(|scope| !current.contains(scope))
    }

    async fn authorization_code(
        &self,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
        scopes: Vec<String>,
    ) -> Result<(), AuthError> {
        let Some(authorizer) = self.context.authorizer.clone() else {
            return Err(AuthError::AuthorizationFailed(format!(
                "the server at {} asks for an OAuth sign-in, and this host has no way to show one (it gave tack-mcp no authorizer); sign in from a host that can, or give the server a token with `headers`",
                self.url
            )));
        };
        let loopback = Loopback::bind(self.settings.callback_port)
            .await
            .map_err(AuthError::AuthorizationFailed)?;
        let redirect_uri = loopback.redirect_uri();
        let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let config = self
            .client(manager, metadata, &redirect_uri, &scopes, &scope_refs)
            .await?;
        manager.configure_client(config)?;
        let url = manager.get_authorization_url(&scope_refs).await?;
        let prompt = AuthorizationPrompt {
            server: self.server.clone(),
            server_url: self.url.clone(),
            url,
            redirect_uri,
        };
        self.authorizing.store(true, Ordering::SeqCst);
        let returned = tokio::time::timeout(self.context.timeout, async {
            let opened = authorizer.open(prompt);
            let waited = loopback.wait();
            tokio::pin!(opened, waited);
            let mut open = true;
            loop {
                tokio::select! {
                    back = &mut waited => break back,
                    shown = &mut opened, if open => {
                        open = false;
                        if let Err(why) = shown {
                            break Err(format!("the sign-in could not be shown: {why}"));
                        }
                    }
                }
            }
        })
        .await;
        self.authorizing.store(false, Ordering::SeqCst);
        let callback_url = match returned {
            Ok(back) => back.map_err(AuthError::AuthorizationFailed)?,
            Err(_) => {
                return Err(AuthError::AuthorizationFailed(format!(
                    "the browser did not come back from the sign-in within {:?}",
                    self.context.timeout
                )));
            }
        };
        let callback = AuthorizationCallback::from_redirect_url(&callback_url)?;
        manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await?;
        Ok(())
    }

    /// The client to authorize as, in the spec's order: the settings'
    /// pre-registered client; a client ID metadata document where the
    /// authorization server supports them; dynamic client registration.
    async fn client(
        &self,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
        redirect_uri: &str,
        scopes: &[String],
        scope_refs: &[&str],
    ) -> Result<OAuthClientConfig, AuthError> {
        if let Some(client_id) = &self.settings.client_id {
            let mut config =
                OAuthClientConfig::new(client_id, redirect_uri).with_scopes(scopes.to_vec());
            if let Some(secret) = &self.settings.client_secret {
                let secret = secret
                    .read()
                    .map_err(|e| AuthError::AuthorizationFailed(format!("client secret: {e}")))?;
                config = config.with_client_secret(secret);
            }
            return Ok(config);
        }
        let metadata_documents = metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        if let Some(document) = &self.settings.client_metadata_url
            && metadata_documents
        {
            return Ok(OAuthClientConfig::new(document, redirect_uri).with_scopes(scopes.to_vec()));
        }
        manager
            .register_client(CLIENT_NAME, redirect_uri, scope_refs)
            .await
            .map_err(|e| {
                AuthError::RegistrationFailed(format!(
                    "{e}; if the authorization server does not let clients register themselves, register tack with it and set `oauth.clientId` (and `oauth.clientSecretEnv`) for the server"
                ))
            })
    }

    async fn client_credentials(
        &self,
        manager: &mut AuthorizationManager,
    ) -> Result<(), AuthError> {
        let (Some(client_id), Some(secret)) =
            (&self.settings.client_id, &self.settings.client_secret)
        else {
            return Err(AuthError::ClientCredentialsError(
                "the client-credentials grant needs `oauth.clientId` and `oauth.clientSecretEnv`"
                    .to_owned(),
            ));
        };
        let config = ClientCredentialsConfig::ClientSecret {
            client_id: client_id.clone(),
            client_secret: secret
                .read()
                .map_err(|e| AuthError::ClientCredentialsError(format!("client secret: {e}")))?,
            scopes: self.settings.scopes.clone(),
            resource: Some(self.url.clone()),
        };
        manager.validate_client_credentials_metadata(&config)?;
        manager.configure_client_credentials(&config)?;
        manager.exchange_client_credentials(&config).await?;
        Ok(())
    }
}

impl OAuthSession {
    /// Client credentials with a client assertion signed with the
    /// settings' private key (`private_key_jwt`).
    async fn signed_client_credentials(
        &self,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
    ) -> Result<(), AuthError> {
        let (Some(client_id), Some(key)) = (&self.settings.client_id, &self.settings.private_key)
        else {
            return Err(AuthError::ClientCredentialsError(
                "`private_key_jwt` needs `oauth.clientId` and `oauth.privateKeyFile`".to_owned(),
            ));
        };
        let pem = key
            .read()
            .map_err(|e| AuthError::ClientCredentialsError(format!("private key: {e}")))?;
        let audience = metadata
            .issuer
            .clone()
            .unwrap_or_else(|| metadata.token_endpoint.clone());
        let assertion = client_assertion::es256_assertion(&pem, client_id, &audience, now())
            .map_err(AuthError::ClientCredentialsError)?;
        let params = token_request::client_credentials_with_assertion(assertion, client_id);
        self.grant_by_hand(manager, metadata, client_id, params)
            .await
    }

    /// The JWT-bearer grant with the workload's JWT.
    async fn jwt_bearer(
        &self,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
    ) -> Result<(), AuthError> {
        let Some(source) = &self.settings.assertion else {
            return Err(AuthError::AuthorizationFailed(
                "the JWT-bearer grant needs `oauth.assertionFile` or `oauth.assertionEnv`"
                    .to_owned(),
            ));
        };
        let assertion = source
            .read()
            .map_err(|e| AuthError::AuthorizationFailed(format!("workload JWT: {e}")))?;
        let client_id = self.settings.client_id.as_deref();
        let params = token_request::jwt_bearer(assertion, client_id);
        self.grant_by_hand(manager, metadata, client_id.unwrap_or(CLIENT_NAME), params)
            .await
    }

    /// Asks the token endpoint with `params` and keeps the token.
    async fn grant_by_hand(
        &self,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
        client_id: &str,
        params: Vec<(&'static str, String)>,
    ) -> Result<(), AuthError> {
        let scopes = self.settings.scopes.clone();
        let token =
            token_request::token_request(&metadata.token_endpoint, params, &scopes, &self.url)
                .await?;
        self.keep(manager, metadata, client_id, token, scopes).await
    }

    /// Enterprise-managed authorization (rmcp's exchanges): the user's ID
    /// token for an identity assertion grant at the identity provider, that
    /// for a token at the server's authorization server.
    async fn enterprise(
        &self,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
    ) -> Result<(), AuthError> {
        let failed = |why: String| {
            AuthError::AuthorizationFailed(format!("enterprise-managed authorization: {why}"))
        };
        let (Some(idp), Some(client_id)) = (&self.settings.idp, &self.settings.client_id) else {
            return Err(failed(
                "it needs `oauth.idp` and `oauth.clientId`".to_owned(),
            ));
        };
        let secret = |source: &Option<super::ClientSecret>, basic: bool| {
            Ok::<_, AuthError>(match source {
                None => EmaClientAuthentication::None,
                Some(source) => {
                    let secret = oauth2::ClientSecret::new(
                        source
                            .read()
                            .map_err(|e| failed(format!("client secret: {e}")))?,
                    );
                    if basic {
                        EmaClientAuthentication::ClientSecretBasic(secret)
                    } else {
                        EmaClientAuthentication::ClientSecretPost(secret)
                    }
                }
            })
        };
        let id_token = idp
            .id_token
            .read()
            .map_err(|e| failed(format!("the ID token: {e}")))?;
        let provider =
            EmaAuthorizationServer::new(&idp.issuer, &idp.token_endpoint, &idp.client_id)
                .with_client_authentication(secret(&idp.client_secret, true)?);
        let Some(issuer) = metadata.issuer.clone() else {
            return Err(failed(
                "the authorization server's metadata names no issuer".to_owned(),
            ));
        };
        // HTTP Basic unless the authorization server takes only the body.
        let basic = metadata
            .additional_fields
            .get("token_endpoint_auth_methods_supported")
            .and_then(serde_json::Value::as_array)
            .is_none_or(|methods| methods.iter().any(|m| m == "client_secret_basic"));
        let server = EmaAuthorizationServer::new(issuer, &metadata.token_endpoint, client_id)
            .with_client_authentication(secret(&self.settings.client_secret, basic)?);
        let http = default_oauth_http_client()?;
        let token = EmaExchangeRequest::new_with_id_token(provider, server, &self.url, &id_token)
            .with_scopes(self.settings.scopes.clone())
            .exchange(&http, &http)
            .await
            .map_err(|e| failed(e.to_string()))?;
        let scopes: Vec<String> = token.scopes.iter().cloned().collect();
        let answer = serde_json::json!({
            "access_token": token.access_token.secret(),
            "token_type": "Bearer",
            "expires_in": token.expires_in.map(|d| d.as_secs()),
            "scope": scopes.join(" "),
        });
        let token: OAuthTokenResponse =
            serde_json::from_value(answer).map_err(|e| AuthError::InternalError(e.to_string()))?;
        self.keep(manager, metadata, client_id, token, scopes).await
    }

    /// Keeps `token` as rmcp keeps its own (no refresh: when it expires,
    /// the grant is made again).
    async fn keep(
        &self,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
        client_id: &str,
        token: OAuthTokenResponse,
        scopes: Vec<String>,
    ) -> Result<(), AuthError> {
        let granted = serde_json::to_value(&token)
            .ok()
            .and_then(|answer| answer["scope"].as_str().map(str::to_owned))
            .filter(|scope| !scope.trim().is_empty())
            .map(|scope| scope.split_whitespace().map(str::to_owned).collect())
            .unwrap_or(scopes);
        self.store
            .save(
                StoredCredentials::new(client_id.to_owned(), Some(token), granted, Some(now()))
                    .with_issuer(metadata.issuer.clone()),
            )
            .await?;
        manager.configure_client_id(client_id)
    }
}

/// Seconds since the Unix epoch.
fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// The scopes a `WWW-Authenticate` challenge names.
pub(crate) fn challenged_scopes(challenge: &str, url: &str) -> Vec<String> {
    let Ok(base) = reqwest::Url::parse(url) else {
        return Vec::new();
    };
    WWWAuthenticateParams::parse(challenge, &base)
        .scope
        .map(|scope| scope.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The scopes of a sign-in, when they do not come from discovery (`None`:
/// rmcp's initial selection, the challenge's `scope`, else the protected
/// resource metadata's `scopes_supported`, else none): on a step-up, those
/// asked for before, the settings' and the `challenged` ones; otherwise the
/// settings' if any.
fn pick_scopes(
    step_up: bool,
    configured: &[String],
    current: Vec<String>,
    challenged: Vec<String>,
) -> Option<Vec<String>> {
    if step_up {
        return Some(union(union(current, configured.to_vec()), challenged));
    }
    (!configured.is_empty()).then(|| union(configured.to_vec(), Vec::new()))
}

/// `first` then the scopes of `then` not in it, each once.
fn union(first: Vec<String>, then: Vec<String>) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for scope in first.into_iter().chain(then) {
        if !all.contains(&scope) {
            all.push(scope);
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenged_scopes_are_read_from_the_header() {
        let url = "https://mcp.example.com/mcp";
        assert_eq!(
            challenged_scopes(
                r#"Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp""#,
                url
            ),
            ["mcp:read", "mcp:write"]
        );
        assert!(challenged_scopes("Bearer realm=\"x\"", url).is_empty());
    }

    fn strings(all: &[&str]) -> Vec<String> {
        all.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn scopes_come_from_the_settings_or_discovery_and_a_step_up_adds_to_them() {
        // No settings: discovery chooses (the challenge, then the metadata).
        assert_eq!(
            pick_scopes(false, &[], vec![], strings(&["mcp:read"])),
            None
        );
        // The settings' scopes replace the server's, each once.
        assert_eq!(
            pick_scopes(
                false,
                &strings(&["a", "b", "a"]),
                vec![],
                strings(&["mcp:read"])
            ),
            Some(strings(&["a", "b"]))
        );
        // A step-up keeps what was asked for and adds what the 403 names.
        assert_eq!(
            pick_scopes(
                true,
                &strings(&["a"]),
                strings(&["mcp:read", "a"]),
                strings(&["mcp:read", "mcp:write"])
            ),
            Some(strings(&["mcp:read", "a", "mcp:write"]))
        );
    }

    #[test]
    fn a_step_up_asks_for_the_union() {
        assert_eq!(
            union(
                vec!["mcp:basic".to_owned(), "mcp:read".to_owned()],
                vec!["mcp:read".to_owned(), "mcp:write".to_owned()]
            ),
            ["mcp:basic", "mcp:read", "mcp:write"]
        );
    }
}
