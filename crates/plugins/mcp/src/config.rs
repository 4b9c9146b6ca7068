//! The `.mcp.json` configuration: Claude Code's format.
//!
//! ```json
//! {"mcpServers": {
//!   "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": {}},
//!   "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer …"}},
//!   "signed-in": {"type": "http", "url": "https://mcp.example.com/mcp", "oauth": {"clientId": "tack", "callbackPort": 8976}}
//! }}
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::McpError;
use crate::oauth::OAuthSettings;

/// How to reach one MCP server.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ServerConfig {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment.
        env: BTreeMap<String, String>,
        /// Its working directory (default: the host's).
        cwd: Option<PathBuf>,
    },
    /// A server reached over the streamable-HTTP transport.
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:8080/mcp`.
        url: String,
        /// Headers sent with every request (e.g. `Authorization`).
        headers: BTreeMap<String, String>,
        /// How to sign in when the server asks for OAuth (default settings:
        /// dynamic client registration, the scopes the server names). Not
        /// used when `headers` has an `Authorization`.
        oauth: Box<OAuthSettings>,
    },
    /// A tack [`McpServer`](crate::McpServer) in this process, reached over
    /// two in-memory channels of JSON-RPC messages — no JSON text is written
    /// or parsed, so no message size limit applies (for tests, benchmarks and
    /// hosts embedding a server; not in `.mcp.json`).
    InProcess {
        /// The server.
        server: crate::McpServer,
    },
}

impl ServerConfig {
    /// A stdio server running `command` with `args`.
    pub fn stdio(
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        ServerConfig::Stdio {
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: BTreeMap::new(),
            cwd: None,
        }
    }

    /// A streamable-HTTP server at `url`.
    pub fn http(url: impl Into<String>) -> Self {
        ServerConfig::Http {
            url: url.into(),
            headers: BTreeMap::new(),
            oauth: Box::default(),
        }
    }

    /// This server with `oauth` as its OAuth settings (an HTTP server; any
    /// other is returned as it is).
    pub fn with_oauth(mut self, settings: OAuthSettings) -> Self {
        if let ServerConfig::Http { oauth, .. } = &mut self {
            **oauth = settings;
        }
        self
    }
}

/// The servers of an `.mcp.json`, by name (sorted).
///
/// ```
/// use tack_mcp::McpConfig;
/// let config = McpConfig::from_json(r#"{"mcpServers": {"echo": {"command": "echo-server", "args": ["--quiet"]}}}"#).unwrap();
/// assert_eq!(config.servers().count(), 1);
/// let err = McpConfig::from_json(r#"{"mcpServers": {"x": {"type": "sse", "url": "http://h"}}}"#).unwrap_err();
/// assert!(err.to_string().contains("`x`"), "{err}");
/// ```
#[derive(Clone, Debug, Default)]
pub struct McpConfig {
    servers: BTreeMap<String, ServerConfig>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileShape {
    #[serde(rename = "mcpServers", default)]
    mcp_servers: BTreeMap<String, serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StdioShape {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    command: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    cwd: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpShape {
    #[serde(rename = "type")]
    kind: String,
    url: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    oauth: Option<serde_json::Value>,
}

impl McpConfig {
    /// No servers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the server `name`.
    pub fn with_server(mut self, name: impl Into<String>, server: ServerConfig) -> Self {
        self.servers.insert(name.into(), server);
        self
    }

    /// The servers, sorted by name.
    pub fn servers(&self) -> impl Iterator<Item = (&str, &ServerConfig)> {
        self.servers.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Whether there is no server.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Adds every server of `other`, replacing those of the same name.
    pub fn merge(&mut self, other: McpConfig) {
        self.servers.extend(other.servers);
    }

    /// Parses the text of an `.mcp.json`.
    ///
    /// # Errors
    ///
    /// [`McpError::Config`] naming the server and the field that is wrong.
    pub fn from_json(text: &str) -> Result<Self, McpError> {
        let shape: FileShape = serde_json::from_str(text).map_err(|e| McpError::Config {
            message: format!(
                "not an `.mcp.json`: {e}; expected {{\"mcpServers\": {{NAME: {{\"command\": …}} | {{\"type\": \"http\", \"url\": …}}}}}}"
            ),
        })?;
        Self::from_servers(shape.mcp_servers)
    }

    /// Parses the value of an `mcpServers` key (an object of servers by name).
    ///
    /// # Errors
    ///
    /// [`McpError::Config`] naming the server and the field that is wrong.
    pub fn from_servers(servers: BTreeMap<String, serde_json::Value>) -> Result<Self, McpError> {
        let mut config = McpConfig::new();
        for (name, value) in servers {
            let server = parse_server(&name, value)?;
            config.servers.insert(name, server);
        }
        Ok(config)
    }

    /// Reads and parses an `.mcp.json` file.
    ///
    /// # Errors
    ///
    /// [`McpError::Config`] if the file cannot be read or parsed (the message
    /// names the file).
    pub fn from_file(path: &Path) -> Result<Self, McpError> {
        let text = std::fs::read_to_string(path).map_err(|e| McpError::Config {
            message: format!("cannot read {}: {e}", path.display()),
        })?;
        Self::from_json(&text).map_err(|e| McpError::Config {
            message: format!("{}: {e}", path.display()),
        })
    }
}

fn parse_server(name: &str, value: serde_json::Value) -> Result<ServerConfig, McpError> {
    let bad = |message: String| McpError::Config {
        message: format!("MCP server `{name}`: {message}"),
    };
    if name.is_empty() {
        return Err(bad("a server needs a non-empty name".to_owned()));
    }
    let kind = value
        .get("type")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    match kind.as_deref() {
        None | Some("stdio") => {
            let shape: StdioShape = serde_json::from_value(value).map_err(|e| {
                bad(format!(
                    "{e}; a stdio server is {{\"command\": PROGRAM, \"args\": [..], \"env\": {{..}}}}"
                ))
            })?;
            let _ = shape.kind;
            if shape.command.trim().is_empty() {
                return Err(bad("`command` is empty".to_owned()));
            }
            Ok(ServerConfig::Stdio {
                command: shape.command,
                args: shape.args,
                env: shape.env,
                cwd: shape.cwd,
            })
        }
        Some("http") | Some("streamable-http") => {
            let shape: HttpShape = serde_json::from_value(value).map_err(|e| {
                bad(format!(
                    "{e}; an HTTP server is {{\"type\": \"http\", \"url\": URL, \"headers\": {{..}}, \"oauth\": {{..}}}}"
                ))
            })?;
            let _ = shape.kind;
            if !(shape.url.starts_with("http://") || shape.url.starts_with("https://")) {
                return Err(bad(format!(
                    "`url` {:?} is not an http:// or https:// URL",
                    shape.url
                )));
            }
            let oauth = match shape.oauth {
                Some(value) => Box::new(OAuthSettings::from_json(value).map_err(bad)?),
                None => Box::default(),
            };
            Ok(ServerConfig::Http {
                url: shape.url,
                headers: shape.headers,
                oauth,
            })
        }
        Some(other) => Err(bad(format!(
            "transport type `{other}` is not supported: use \"stdio\" (the default, with `command`) or \"http\" (streamable HTTP, with `url`); the legacy SSE transport is not"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_shapes_parse() {
        let config = McpConfig::from_json(
            r#"{"mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "pkg"], "env": {"A": "1"}},
                "gh": {"type": "http", "url": "https://api.example/mcp", "headers": {"Authorization": "Bearer x"}}
            }}"#,
        )
        .unwrap();
        let servers: Vec<_> = config.servers().collect();
        assert_eq!(servers[0].0, "fs");
        assert!(matches!(servers[0].1, ServerConfig::Stdio { command, .. } if command == "npx"));
        assert!(
            matches!(servers[1].1, ServerConfig::Http { url, .. } if url == "https://api.example/mcp")
        );
    }

    #[test]
    fn bad_servers_are_named() {
        for (text, needle) in [
            (r#"{"mcpServers": {"a": {"args": []}}}"#, "`a`"),
            (r#"{"mcpServers": {"b": {"type": "http"}}}"#, "`b`"),
            (
                r#"{"mcpServers": {"c": {"type": "http", "url": "ftp://x"}}}"#,
                "not an http",
            ),
            (
                r#"{"mcpServers": {"d": {"command": "x", "bogus": 1}}}"#,
                "bogus",
            ),
            (r#"{"servers": {}}"#, "mcpServers"),
            (
                r#"{"mcpServers": {"e": {"type": "http", "url": "https://h/mcp", "oauth": {"clientSecret": "x"}}}}"#,
                "MCP server `e`: `oauth.clientSecret`",
            ),
            (r#"not json"#, "not an `.mcp.json`"),
        ] {
            let err = McpConfig::from_json(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }
}
