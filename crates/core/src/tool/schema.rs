//! The model-visible view of a tool, and exporters to the major tool formats.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What the model sees of a tool: its name, its description and the JSON
/// Schema of its arguments — and nothing else.
///
/// Built from a [`ToolDefinition`](super::ToolDefinition) by an explicit
/// whitelist ([`ToolDefinition::schema`](super::ToolDefinition::schema)), so a
/// field added to the definition later never leaks to the model. Serialized, it
/// has exactly the keys `name`, `description` and `parameters`.
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::ToolSchema;
///
/// let schema = ToolSchema::new("echo", "Repeat the text.", json!({"type": "object"}));
/// assert_eq!(
///     serde_json::to_value(&schema).unwrap(),
///     json!({"name": "echo", "description": "Repeat the text.", "parameters": {"type": "object"}})
/// );
/// assert_eq!(schema.to_anthropic()["input_schema"], json!({"type": "object"}));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSchema {
    /// The tool's name.
    pub name: String,
    /// When the model should use the tool.
    pub description: String,
    /// The JSON Schema of the arguments object (shared, immutable).
    pub parameters: Arc<Value>,
}

impl ToolSchema {
    /// A schema from its three parts.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: impl Into<Arc<Value>>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters: parameters.into(),
        }
    }

    /// The OpenAI chat-completions shape:
    /// `{"type": "function", "function": {"name", "description", "parameters"}}`.
    pub fn to_openai(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": *self.parameters,
            }
        })
    }

    /// The Anthropic messages shape: `{"name", "description", "input_schema"}`.
    pub fn to_anthropic(&self) -> Value {
        json!({
            "name": self.name,
            "description": self.description,
            "input_schema": *self.parameters,
        })
    }

    /// The MCP `tools/list` shape: `{"name", "description", "inputSchema"}`.
    pub fn to_mcp(&self) -> Value {
        json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": *self.parameters,
        })
    }

    /// This schema in `format`.
    pub fn export(&self, format: ToolFormat) -> Value {
        match format {
            ToolFormat::Neutral => json!({
                "name": self.name,
                "description": self.description,
                "parameters": *self.parameters,
            }),
            ToolFormat::OpenAi => self.to_openai(),
            ToolFormat::Anthropic => self.to_anthropic(),
            ToolFormat::Mcp => self.to_mcp(),
        }
    }
}

/// A tool-list format a host sends to a model or client.
///
/// ```
/// use tack_core::tool::ToolFormat;
/// assert_eq!("openai".parse::<ToolFormat>().unwrap(), ToolFormat::OpenAi);
/// assert!("yaml".parse::<ToolFormat>().unwrap_err().to_string().contains("openai, anthropic, mcp"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolFormat {
    /// tack's own: `{"name", "description", "parameters"}`.
    Neutral,
    /// OpenAI chat completions (`tools` array entries).
    OpenAi,
    /// Anthropic messages (`tools` array entries).
    Anthropic,
    /// Model Context Protocol (`tools/list` result entries).
    Mcp,
}

impl fmt::Display for ToolFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ToolFormat::Neutral => "neutral",
            ToolFormat::OpenAi => "openai",
            ToolFormat::Anthropic => "anthropic",
            ToolFormat::Mcp => "mcp",
        })
    }
}

/// An unknown [`ToolFormat`] name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool format `{0}`: use one of neutral, openai, anthropic, mcp")]
pub struct UnknownFormat(pub String);

impl FromStr for ToolFormat {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "neutral" | "tack" => Ok(ToolFormat::Neutral),
            "openai" => Ok(ToolFormat::OpenAi),
            "anthropic" => Ok(ToolFormat::Anthropic),
            "mcp" => Ok(ToolFormat::Mcp),
            _ => Err(UnknownFormat(s.to_owned())),
        }
    }
}

/// Exports a list of schemas as a JSON array in `format`, keeping their order.
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::{ToolFormat, ToolSchema, export_tools};
/// let tools = [ToolSchema::new("a", "A.", json!({"type": "object"}))];
/// assert_eq!(export_tools(&tools, ToolFormat::Mcp)[0]["inputSchema"]["type"], "object");
/// ```
pub fn export_tools(schemas: &[ToolSchema], format: ToolFormat) -> Value {
    Value::Array(schemas.iter().map(|s| s.export(format)).collect())
}
