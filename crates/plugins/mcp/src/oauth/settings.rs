//! A server's `oauth` settings: who tack is to the server's authorization
//! server, and which grant it uses.
//!
//! ```json
//! {"type": "http", "url": "https://mcp.example.com/mcp",
//!  "oauth": {"clientId": "tack-cli", "clientSecretEnv": "EXAMPLE_MCP_SECRET",
//!            "scopes": ["mcp:read"], "callbackPort": 8976}}
//! ```
//!
//! Secrets are never written in the settings: `clientSecretEnv` names an
//! environment variable and `clientSecretFile` a file that holds them.

use std::path::PathBuf;

use serde::Deserialize;

/// How tack gets a token from a server's authorization server.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OAuthGrant {
    /// The user authorizes tack in a browser (authorization code with
    /// PKCE); the browser comes back to a loopback listener of tack's.
    #[default]
    AuthorizationCode,
    /// tack authenticates as itself with its client id and secret (or a
    /// JWT signed with its private key, `private_key_jwt`), no user
    /// involved (client credentials; for machine-to-machine servers).
    ClientCredentials,
    /// tack presents a JWT its workload was issued (a workload identity, as
    /// a CI system or a cluster gives one) for a token (RFC 7523's
    /// JWT-bearer grant); no user involved.
    JwtBearer,
    /// Enterprise-managed authorization: tack exchanges the user's ID
    /// token from the enterprise's identity provider ([`OAuthSettings::idp`])
    /// for an identity assertion grant there, and that for a token at the
    /// server's authorization server; no browser.
    EnterpriseManaged,
}

/// The enterprise identity provider of [`OAuthGrant::EnterpriseManaged`]:
/// where tack exchanges the user's ID token, as which client.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EnterpriseIdp {
    /// Its issuer identifier.
    pub issuer: String,
    /// Its token endpoint.
    pub token_endpoint: String,
    /// tack's client id there.
    pub client_id: String,
    /// That client's secret (none: a public client).
    pub client_secret: Option<ClientSecret>,
    /// The user's ID token it issued (to tack's client there).
    pub id_token: ClientSecret,
}

impl EnterpriseIdp {
    /// The identity provider `issuer` with `token_endpoint`, tack's public
    /// client `client_id` there, and the user's ID token from `id_token`.
    pub fn new(
        issuer: impl Into<String>,
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        id_token: ClientSecret,
    ) -> Self {
        EnterpriseIdp {
            issuer: issuer.into(),
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
            id_token,
        }
    }

    /// Sets the secret of tack's client at the identity provider.
    pub fn with_client_secret(mut self, secret: ClientSecret) -> Self {
        self.client_secret = Some(secret);
        self
    }
}

/// Where a secret (a client secret, a private key, a workload's JWT) is
/// read from: when a token is needed, not when the settings are parsed.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientSecret {
    /// The value of this environment variable.
    Env(String),
    /// The contents of this file (surrounding whitespace removed).
    File(PathBuf),
    /// This value (a host's own; settings files cannot give one).
    Value(String),
}

impl std::fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientSecret::Env(name) => f.debug_tuple("Env").field(name).finish(),
            ClientSecret::File(path) => f.debug_tuple("File").field(path).finish(),
            ClientSecret::Value(_) => f.write_str("Value([REDACTED])"),
        }
    }
}

impl ClientSecret {
    /// The secret.
    ///
    /// # Errors
    ///
    /// The variable is not set or the file cannot be read (the message says
    /// which and how to fix it, never the secret).
    pub fn read(&self) -> Result<String, String> {
        match self {
            ClientSecret::Env(name) => match std::env::var(name) {
                Ok(value) if !value.trim().is_empty() => Ok(value.trim().to_owned()),
                _ => Err(format!(
                    "the environment variable {name} the settings name is not set (or empty); set it"
                )),
            },
            ClientSecret::File(path) => match std::fs::read_to_string(path) {
                Ok(text) if !text.trim().is_empty() => Ok(text.trim().to_owned()),
                Ok(_) => Err(format!(
                    "the file {} the settings name is empty",
                    path.display()
                )),
                Err(e) => Err(format!(
                    "cannot read {} (named by the settings): {e}",
                    path.display()
                )),
            },
            ClientSecret::Value(value) => Ok(value.clone()),
        }
    }
}

/// A server's OAuth settings (the `oauth` key of an HTTP server). With none
/// at all, a server that asks for authorization still gets it: tack
/// registers itself with the authorization server (dynamic client
/// registration) and asks for the scopes the server names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OAuthSettings {
    /// A client id registered with the authorization server beforehand
    /// (no dynamic registration then).
    pub client_id: Option<String>,
    /// The secret of [`client_id`](Self::client_id), for a confidential
    /// client.
    pub client_secret: Option<ClientSecret>,
    /// The private key of [`client_id`](Self::client_id) (a P-256 key in
    /// PKCS#8 PEM), for client credentials authenticated with a signed JWT
    /// (`private_key_jwt`, ES256) instead of a secret.
    pub private_key: Option<ClientSecret>,
    /// The workload's JWT, for [`OAuthGrant::JwtBearer`] (read anew for
    /// every token request: such files are rotated).
    pub assertion: Option<ClientSecret>,
    /// The identity provider of [`OAuthGrant::EnterpriseManaged`].
    pub idp: Option<EnterpriseIdp>,
    /// The scopes to ask for, instead of those the server names (its
    /// `WWW-Authenticate` challenge, else its protected resource metadata).
    pub scopes: Vec<String>,
    /// The loopback port the browser comes back to (default: any free
    /// port); an authorization server that registered tack's redirect URI
    /// with a fixed port needs it.
    pub callback_port: Option<u16>,
    /// The HTTPS URL of a client ID metadata document describing tack,
    /// used as the client id where the authorization server supports them.
    pub client_metadata_url: Option<String>,
    /// Which grant (default: the authorization code, in a browser).
    pub grant: OAuthGrant,
}

impl OAuthSettings {
    /// Settings with a pre-registered client id.
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Sets where the client secret is read from.
    pub fn with_client_secret(mut self, secret: ClientSecret) -> Self {
        self.client_secret = Some(secret);
        self
    }

    /// Sets the scopes to ask for.
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the loopback port the browser comes back to.
    pub fn with_callback_port(mut self, port: u16) -> Self {
        self.callback_port = Some(port);
        self
    }

    /// Sets the client ID metadata document URL.
    pub fn with_client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Sets where the private key is read from.
    pub fn with_private_key(mut self, key: ClientSecret) -> Self {
        self.private_key = Some(key);
        self
    }

    /// Sets where the workload's JWT is read from.
    pub fn with_assertion(mut self, assertion: ClientSecret) -> Self {
        self.assertion = Some(assertion);
        self
    }

    /// Sets the enterprise identity provider.
    pub fn with_idp(mut self, idp: EnterpriseIdp) -> Self {
        self.idp = Some(idp);
        self
    }

    /// Sets the grant.
    pub fn with_grant(mut self, grant: OAuthGrant) -> Self {
        self.grant = grant;
        self
    }

    /// Parses the `oauth` value of a server's settings.
    ///
    /// # Errors
    ///
    /// What is wrong and how to fix it.
    pub fn from_json(value: serde_json::Value) -> Result<Self, String> {
        if let Some(object) = value.as_object() {
            for inline in ["clientSecret", "client_secret", "secret"] {
                if object.contains_key(inline) {
                    return Err(format!(
                        "`oauth.{inline}`: a secret is not written in the settings; put it in an environment variable and name that with `clientSecretEnv`, or in a file (mode 0600) named by `clientSecretFile`"
                    ));
                }
            }
        }
        let shape: Shape = serde_json::from_value(value).map_err(|e| {
            format!(
                "`oauth`: {e}; it is {{\"clientId\": ID, \"clientSecretEnv\": VAR | \"clientSecretFile\": PATH | \"privateKeyFile\": PATH, \"scopes\": [..], \"callbackPort\": PORT, \"clientMetadataUrl\": URL, \"grant\": \"authorization_code\" | \"client_credentials\" | \"jwt_bearer\" | \"enterprise_managed\", \"assertionEnv\": VAR | \"assertionFile\": PATH, \"idp\": {{..}}}}, every key optional"
            )
        })?;
        let client_secret = source(
            "clientSecretEnv",
            shape.client_secret_env,
            "clientSecretFile",
            shape.client_secret_file,
        )?;
        let assertion = source(
            "assertionEnv",
            shape.assertion_env,
            "assertionFile",
            shape.assertion_file,
        )?;
        let private_key = shape.private_key_file.map(ClientSecret::File);
        if private_key.is_some() && client_secret.is_some() {
            return Err("`oauth`: give a client secret or `privateKeyFile`, not both".to_owned());
        }
        if let Some(id) = &shape.client_id
            && id.trim().is_empty()
        {
            return Err("`oauth.clientId` is empty; give the client id the authorization server issued, or leave the key out to have tack register itself".to_owned());
        }
        if (client_secret.is_some() || private_key.is_some()) && shape.client_id.is_none() {
            return Err(
                "`oauth`: a client secret or private key needs the `clientId` it belongs to"
                    .to_owned(),
            );
        }
        for scope in &shape.scopes {
            if scope.is_empty() || scope.chars().any(char::is_whitespace) {
                return Err(format!(
                    "`oauth.scopes`: {scope:?} is not one scope; give each scope as its own string, e.g. [\"mcp:read\", \"mcp:write\"]"
                ));
            }
        }
        if shape.callback_port == Some(0) {
            return Err("`oauth.callbackPort` 0: give a port from 1 to 65535, or leave the key out for any free port".to_owned());
        }
        if let Some(url) = &shape.client_metadata_url {
            let path = url
                .strip_prefix("https://")
                .and_then(|rest| rest.split_once('/'));
            if !matches!(path, Some((host, path)) if !host.is_empty() && !path.is_empty()) {
                return Err(format!(
                    "`oauth.clientMetadataUrl` {url:?} must be an https:// URL with a path, e.g. \"https://example.com/tack-client.json\""
                ));
            }
        }
        let grant = match shape.grant.as_deref() {
            None | Some("authorization_code") => OAuthGrant::AuthorizationCode,
            Some("client_credentials") => {
                if shape.client_id.is_none() || (client_secret.is_none() && private_key.is_none()) {
                    return Err("`oauth.grant` \"client_credentials\" needs `clientId` and `clientSecretEnv` (or `clientSecretFile`, or `privateKeyFile`)".to_owned());
                }
                OAuthGrant::ClientCredentials
            }
            Some("jwt_bearer") => OAuthGrant::JwtBearer,
            Some("enterprise_managed") => OAuthGrant::EnterpriseManaged,
            Some(other) => {
                return Err(format!(
                    "`oauth.grant` {other:?} is not supported: use \"authorization_code\" (the default: the user signs in in a browser), \"client_credentials\", \"jwt_bearer\" or \"enterprise_managed\""
                ));
            }
        };
        if (grant == OAuthGrant::JwtBearer) != assertion.is_some() {
            return Err(if assertion.is_some() {
                "`oauth`: `assertionEnv` and `assertionFile` are for `\"grant\": \"jwt_bearer\"`"
                    .to_owned()
            } else {
                "`oauth.grant` \"jwt_bearer\" needs the workload's JWT: `assertionFile` (a file holding it) or `assertionEnv` (a variable)".to_owned()
            });
        }
        let idp = shape.idp.map(EnterpriseIdp::from_shape).transpose()?;
        if (grant == OAuthGrant::EnterpriseManaged) != idp.is_some() {
            return Err(if idp.is_some() {
                "`oauth.idp` is for `\"grant\": \"enterprise_managed\"`".to_owned()
            } else {
                "`oauth.grant` \"enterprise_managed\" needs `idp`: {\"issuer\": URL, \"tokenEndpoint\": URL, \"clientId\": ID, \"idTokenEnv\": VAR | \"idTokenFile\": PATH}".to_owned()
            });
        }
        if grant == OAuthGrant::EnterpriseManaged && shape.client_id.is_none() {
            return Err("`oauth.grant` \"enterprise_managed\" needs `clientId`: tack's client at the MCP server's authorization server".to_owned());
        }
        Ok(OAuthSettings {
            idp,
            client_id: shape.client_id,
            client_secret,
            private_key,
            assertion,
            scopes: shape.scopes,
            callback_port: shape.callback_port,
            client_metadata_url: shape.client_metadata_url,
            grant,
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Shape {
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    client_secret_env: Option<String>,
    #[serde(default)]
    client_secret_file: Option<PathBuf>,
    #[serde(default)]
    private_key_file: Option<PathBuf>,
    #[serde(default)]
    assertion_env: Option<String>,
    #[serde(default)]
    assertion_file: Option<PathBuf>,
    #[serde(default)]
    scopes: Vec<String>,
    #[serde(default)]
    callback_port: Option<u16>,
    #[serde(default)]
    client_metadata_url: Option<String>,
    #[serde(default)]
    grant: Option<String>,
    #[serde(default)]
    idp: Option<IdpShape>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct IdpShape {
    issuer: String,
    token_endpoint: String,
    client_id: String,
    #[serde(default)]
    client_secret_env: Option<String>,
    #[serde(default)]
    client_secret_file: Option<PathBuf>,
    #[serde(default)]
    id_token_env: Option<String>,
    #[serde(default)]
    id_token_file: Option<PathBuf>,
}

impl EnterpriseIdp {
    fn from_shape(shape: IdpShape) -> Result<Self, String> {
        for (key, url) in [
            ("issuer", &shape.issuer),
            ("tokenEndpoint", &shape.token_endpoint),
        ] {
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(format!("`oauth.idp.{key}` {url:?} is not an http(s) URL"));
            }
        }
        let id_token = source(
            "idp.idTokenEnv",
            shape.id_token_env,
            "idp.idTokenFile",
            shape.id_token_file,
        )?
        .ok_or_else(|| {
            "`oauth.idp` needs the user's ID token: `idTokenEnv` (a variable) or `idTokenFile` (a file)".to_owned()
        })?;
        Ok(EnterpriseIdp {
            issuer: shape.issuer,
            token_endpoint: shape.token_endpoint,
            client_id: shape.client_id,
            client_secret: source(
                "idp.clientSecretEnv",
                shape.client_secret_env,
                "idp.clientSecretFile",
                shape.client_secret_file,
            )?,
            id_token,
        })
    }
}

/// A secret given by a variable's name or a file, not both.
fn source(
    env_key: &str,
    env: Option<String>,
    file_key: &str,
    file: Option<PathBuf>,
) -> Result<Option<ClientSecret>, String> {
    match (env, file) {
        (Some(_), Some(_)) => Err(format!(
            "`oauth`: give `{env_key}` or `{file_key}`, not both"
        )),
        (Some(name), None) => {
            if name.is_empty() || name.contains('=') || name.contains('\0') {
                return Err(format!(
                    "`oauth.{env_key}` {name:?} is not an environment variable name (e.g. \"EXAMPLE_MCP_SECRET\")"
                ));
            }
            Ok(Some(ClientSecret::Env(name)))
        }
        (None, Some(path)) => Ok(Some(ClientSecret::File(path))),
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn full_settings_parse() {
        let settings = OAuthSettings::from_json(json!({
            "clientId": "tack", "clientSecretEnv": "SECRET_VAR", "scopes": ["a", "b"],
            "callbackPort": 8976, "clientMetadataUrl": "https://example.com/tack.json",
            "grant": "client_credentials"
        }))
        .unwrap();
        assert_eq!(settings.client_id.as_deref(), Some("tack"));
        assert_eq!(
            settings.client_secret,
            Some(ClientSecret::Env("SECRET_VAR".to_owned()))
        );
        assert_eq!(settings.scopes, ["a", "b"]);
        assert_eq!(settings.callback_port, Some(8976));
        assert_eq!(settings.grant, OAuthGrant::ClientCredentials);
        assert_eq!(
            OAuthSettings::from_json(json!({})).unwrap(),
            OAuthSettings::default()
        );
        let workload = OAuthSettings::from_json(json!({
            "grant": "jwt_bearer", "assertionFile": "/var/run/secrets/token"
        }))
        .unwrap();
        assert_eq!(workload.grant, OAuthGrant::JwtBearer);
        assert_eq!(
            workload.assertion,
            Some(ClientSecret::File("/var/run/secrets/token".into()))
        );
        let keyed = OAuthSettings::from_json(json!({
            "clientId": "svc", "privateKeyFile": "/k.pem", "grant": "client_credentials"
        }))
        .unwrap();
        assert_eq!(keyed.private_key, Some(ClientSecret::File("/k.pem".into())));
        let enterprise = OAuthSettings::from_json(json!({
            "grant": "enterprise_managed", "clientId": "mcp-client", "clientSecretEnv": "S",
            "idp": {"issuer": "https://idp.example", "tokenEndpoint": "https://idp.example/token",
                    "clientId": "tack", "idTokenFile": "/run/id-token"}
        }))
        .unwrap();
        assert_eq!(
            enterprise.idp,
            Some(EnterpriseIdp::new(
                "https://idp.example",
                "https://idp.example/token",
                "tack",
                ClientSecret::File("/run/id-token".into())
            ))
        );
    }

    #[test]
    fn bad_settings_say_how_to_fix_them() {
        for (value, needle) in [
            (json!({"clientSecret": "s3cret"}), "clientSecretEnv"),
            (
                json!({"clientId": "x", "clientSecretEnv": "A", "clientSecretFile": "/f"}),
                "not both",
            ),
            (json!({"clientSecretEnv": "A"}), "needs the `clientId`"),
            (
                json!({"assertionEnv": "A=B", "grant": "jwt_bearer"}),
                "not an environment variable",
            ),
            (json!({"clientId": " "}), "is empty"),
            (json!({"scopes": ["a b"]}), "its own string"),
            (json!({"callbackPort": 0}), "1 to 65535"),
            (json!({"callbackPort": 70000}), "callbackPort"),
            (
                json!({"clientMetadataUrl": "http://example.com/x"}),
                "https://",
            ),
            (json!({"grant": "client_credentials"}), "needs `clientId`"),
            (json!({"grant": "password"}), "not supported"),
            (json!({"grant": "jwt_bearer"}), "assertionFile"),
            (json!({"assertionFile": "/t"}), "jwt_bearer"),
            (
                json!({"clientId": "x", "clientSecretEnv": "A", "privateKeyFile": "/k"}),
                "not both",
            ),
            (json!({"privateKeyFile": "/k"}), "needs the `clientId`"),
            (
                json!({"grant": "enterprise_managed", "clientId": "c"}),
                "needs `idp`",
            ),
            (
                json!({"grant": "enterprise_managed", "clientId": "c", "idp": {"issuer": "https://i", "tokenEndpoint": "https://i/t", "clientId": "x"}}),
                "idTokenEnv",
            ),
            (
                json!({"grant": "enterprise_managed", "clientId": "c", "idp": {"issuer": "i", "tokenEndpoint": "https://i/t", "clientId": "x", "idTokenEnv": "T"}}),
                "not an http(s) URL",
            ),
            (json!({"bogus": 1}), "bogus"),
            (json!("yes"), "`oauth`"),
        ] {
            let err = OAuthSettings::from_json(value.clone()).unwrap_err();
            assert!(err.contains(needle), "{value}: {err}");
            assert!(!err.contains("s3cret"), "{err}");
        }
    }

    #[test]
    fn secrets_come_from_files_and_never_show() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("secret");
        std::fs::write(&file, "s3cret\n").unwrap();
        assert_eq!(ClientSecret::File(file.clone()).read().unwrap(), "s3cret");
        let missing = ClientSecret::Env("TACK_MCP_TEST_UNSET_SECRET_VAR".to_owned())
            .read()
            .unwrap_err();
        assert!(missing.contains("not set"), "{missing}");
        let shown = format!("{:?}", ClientSecret::Value("s3cret".to_owned()));
        assert!(!shown.contains("s3cret"), "{shown}");
    }
}
