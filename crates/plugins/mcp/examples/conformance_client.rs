//! tack's MCP client for the conformance suite's client scenarios: the
//! suite runs `conformance_client URL` with `MCP_CONFORMANCE_SCENARIO` set.
//! It connects through [`McpClient`] (the server named `conformance`), and
//! for `tools_call` calls `add_numbers` through a tack pipeline; for
//! `sep-2322-client-request-state` it calls the scenario's `test_mrtr_*`
//! tools, whose servers ask for input (2026-07-28 `input_required`), with a
//! client channel standing for the user that accepts every elicitation.
//! For the `auth/*` scenarios it signs in with tack's OAuth: the suite's
//! authorization server redirects at once, so the "browser" here is an HTTP
//! client that fetches the authorization URL without following the
//! redirect and then follows it itself, to tack's loopback listener.
#![allow(clippy::unwrap_used)]

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use serde_json::json;
use tack_core::CancellationToken;
use tack_core::capability::{
    CapabilityError, ClientChannel, ClientLogLevel, ClientRequest, ClientRequestKind,
    ToolDispatcher,
};
use tack_core::host::PluginHost;
use tack_core::tool::{CallId, ToolCall};
use tack_mcp::{
    AuthorizationPrompt, Authorizer, ClientOptions, ClientSecret, EnterpriseIdp, McpClient,
    McpConfig, OAuthGrant, OAuthSettings, ServerConfig,
};
use tack_pipeline::{Pipeline, ToolRegistry};

/// The user of the calls: accepts every elicitation with `{"confirmed": true}`.
struct Accepting;

impl ClientChannel for Accepting {
    fn progress(
        &self,
        _call: &CallId,
        _progress: f64,
        _total: Option<f64>,
        _message: Option<String>,
    ) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }

    fn log(&self, _call: &CallId, _level: ClientLogLevel, _data: Value) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }

    fn can_ask(&self, _call: &CallId, kind: ClientRequestKind) -> bool {
        kind == ClientRequestKind::Elicitation
    }

    fn ask(
        &self,
        _call: &CallId,
        requests: Vec<ClientRequest>,
    ) -> BoxFuture<'static, Result<Vec<Value>, CapabilityError>> {
        let answers = requests
            .iter()
            .map(|r| match r.kind {
                ClientRequestKind::Elicitation => {
                    Ok(json!({"action": "accept", "content": {"confirmed": true}}))
                }
                kind => Err(CapabilityError::Unsupported { kind }),
            })
            .collect();
        Box::pin(async move { answers })
    }
}

/// The user's browser in the auth scenarios: opens the authorization URL
/// and goes where the authorization server sends it (tack's loopback
/// listener, which takes the code from the redirect).
struct Browser;

impl Authorizer for Browser {
    fn open(&self, prompt: AuthorizationPrompt) -> BoxFuture<'static, Result<(), String>> {
        // The HTTPS stack's crypto provider (tack-mcp installed it already
        // when it started the server; a no-op then).
        let _ = rustls::crypto::ring::default_provider().install_default();
        Box::pin(async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| e.to_string())?;
            let answer = http
                .get(&prompt.url)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let location = answer
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| {
                    format!(
                        "no redirect from the authorization endpoint ({})",
                        answer.status()
                    )
                })?
                .to_owned();
            http.get(&location)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            Ok(())
        })
    }
}

/// The OAuth settings of scenario `scenario` (its context gives a client's
/// id and secret where the suite registered one).
fn oauth_settings(scenario: &str) -> OAuthSettings {
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let mut settings = OAuthSettings::default()
        .with_client_metadata_url("https://conformance-test.local/client-metadata.json");
    if let (Some(id), Some(secret)) = (
        context["client_id"].as_str(),
        context["client_secret"].as_str(),
    ) {
        settings = settings
            .with_client_id(id)
            .with_client_secret(ClientSecret::Value(secret.to_owned()));
        if scenario.starts_with("auth/client-credentials") {
            settings = settings.with_grant(OAuthGrant::ClientCredentials);
        }
    }
    // Client credentials authenticated with a signed JWT.
    if let (Some(id), Some(key)) = (
        context["client_id"].as_str(),
        context["private_key_pem"].as_str(),
    ) {
        settings = settings
            .with_client_id(id)
            .with_private_key(ClientSecret::Value(key.to_owned()))
            .with_grant(OAuthGrant::ClientCredentials);
    }
    // Enterprise-managed: the user's ID token from the identity provider.
    if let (Some(token), Some(issuer), Some(endpoint), Some(client)) = (
        context["idp_id_token"].as_str(),
        context["idp_issuer"].as_str(),
        context["idp_token_endpoint"].as_str(),
        context["idp_client_id"].as_str(),
    ) {
        let idp = EnterpriseIdp::new(
            issuer,
            endpoint,
            client,
            ClientSecret::Value(token.to_owned()),
        );
        settings = settings
            .with_idp(idp)
            .with_grant(OAuthGrant::EnterpriseManaged);
    }
    // A workload identity: the JWT it was issued.
    if let Some(jwt) = context["valid_jwt"].as_str() {
        settings = settings
            .with_assertion(ClientSecret::Value(jwt.to_owned()))
            .with_grant(OAuthGrant::JwtBearer);
        if let Some(id) = context["client_id"].as_str() {
            settings = settings.with_client_id(id);
        }
    }
    settings
}

async fn call(pipeline: &Pipeline, id: &str, tool: &str, arguments: Value) -> bool {
    let call = ToolCall::new(id, tool, arguments.to_string());
    let outcome = pipeline.dispatch(call, CancellationToken::new()).await;
    println!("{}", serde_json::to_string(&*outcome).unwrap());
    outcome.is_success()
}

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().next_back() else {
        eprintln!("usage: conformance_client URL");
        return ExitCode::FAILURE;
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry.clone());
    let server = ServerConfig::http(url).with_oauth(oauth_settings(&scenario));
    let config = McpConfig::new().with_server("conformance", server);
    let plugin = McpClient::connect(
        &config,
        ClientOptions::default()
            .startup_timeout(Duration::from_secs(10))
            .authorizer(Browser),
        Arc::new(registry.clone()),
    )
    .await;
    if let Some(failure) = plugin.failures().first() {
        eprintln!("{failure}");
        return ExitCode::FAILURE;
    }
    let mut host = PluginHost::new(pipeline.hooks(), pipeline.capabilities(), &registry);
    host.install(&plugin).unwrap();
    let _user = pipeline.capabilities().provide_client(Arc::new(Accepting));
    let ok = match scenario.as_str() {
        "tools_call" => {
            call(
                &pipeline,
                "c1",
                "mcp__conformance__add_numbers",
                json!({"a": 2, "b": 3}),
            )
            .await
        }
        "sep-2322-client-request-state" => {
            let tool = |name: &str| format!("mcp__conformance__{name}");
            let (echo, no_state) = (tool("test_mrtr_echo_state"), tool("test_mrtr_no_state"));
            let (echo, no_state) = tokio::join!(
                call(&pipeline, "c1", &echo, json!({})),
                call(&pipeline, "c2", &no_state, json!({})),
            );
            let unrelated = call(&pipeline, "c3", &tool("test_mrtr_unrelated"), json!({})).await;
            let plain = call(
                &pipeline,
                "c4",
                &tool("test_mrtr_no_result_type"),
                json!({}),
            )
            .await;
            echo && no_state && unrelated && plain
        }
        // The scenario's own calls (its context names them): their
        // `x-mcp-header` arguments travel as `Mcp-Param-*` headers too.
        "http-custom-headers" => {
            let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
                .ok()
                .and_then(|text| serde_json::from_str(&text).ok())
                .unwrap_or_default();
            let mut ok = true;
            let calls = context["toolCalls"].as_array().cloned().unwrap_or_default();
            for (index, planned) in calls.iter().enumerate() {
                let name = planned["name"].as_str().unwrap_or_default();
                let tool = format!("mcp__conformance__{name}");
                ok &= call(
                    &pipeline,
                    &format!("c{index}"),
                    &tool,
                    planned["arguments"].clone(),
                )
                .await;
            }
            ok
        }
        // Every tool the client kept: a tool whose `x-mcp-header`
        // annotation is invalid must not be among them.
        "http-invalid-tool-headers" => {
            let kept: Vec<String> = registry
                .visible(None)
                .iter()
                .map(|tool| tool.definition().name().to_string())
                .filter(|name| name.starts_with("mcp__conformance__"))
                .collect();
            let mut ok = !kept.is_empty();
            for (index, tool) in kept.iter().enumerate() {
                ok &= call(
                    &pipeline,
                    &format!("c{index}"),
                    tool,
                    json!({"region": "us-west1"}),
                )
                .await;
            }
            ok
        }
        // Every tool the server offers, called once (a call may need more
        // scopes: the step-up scenarios).
        auth if auth.starts_with("auth/") => {
            let tools: Vec<String> = registry
                .visible(None)
                .iter()
                .map(|tool| tool.definition().name().to_string())
                .filter(|name| name.starts_with("mcp__conformance__"))
                .collect();
            for (index, tool) in tools.iter().enumerate() {
                call(&pipeline, &format!("c{index}"), tool, json!({})).await;
            }
            true
        }
        _ => true,
    };
    let code = if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    };
    plugin.shutdown().await;
    code
}
