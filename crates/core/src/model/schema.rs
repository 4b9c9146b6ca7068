//! The model-visible view of a tool, and exporters to the major tool formats.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::UnknownName;

/// What the model sees of a tool: its name, its description and the JSON
/// Schema of its arguments — and nothing else.
///
/// Built from a [`ToolDefinition`](crate::tool::ToolDefinition) by an explicit
/// whitelist ([`ToolDefinition::schema`](crate::tool::ToolDefinition::schema)), so a
/// field added to the definition later never leaks to the model. Serialized, it
/// has exactly the keys `name`, `description` and `parameters`.
///
/// ```
/// use serde_json::json;
/// use tack_core::host::ToolSchema;
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
    ///
    /// A `Value` holds its own copy of the schema; `tack_core::host::ExportedTool`
    /// writes the same shape without one.
    pub fn to_openai(&self) -> Value {
        let mut outer = Map::with_capacity(2);
        outer.insert("type".to_owned(), Value::from("function"));
        outer.insert("function".to_owned(), self.fields("parameters"));
        Value::Object(outer)
    }

    /// The Anthropic messages shape: `{"name", "description", "input_schema"}`.
    pub fn to_anthropic(&self) -> Value {
        self.fields("input_schema")
    }

    /// The MCP `tools/list` shape: `{"name", "description", "inputSchema"}`.
    pub fn to_mcp(&self) -> Value {
        self.fields("inputSchema")
    }

    /// This schema in `format`.
    pub fn export(&self, format: ToolFormat) -> Value {
        match format {
            ToolFormat::Neutral => self.fields("parameters"),
            ToolFormat::OpenAi => self.to_openai(),
            ToolFormat::Anthropic => self.to_anthropic(),
            ToolFormat::Mcp => self.to_mcp(),
        }
    }

    /// `{"name", "description", <schema_key>: parameters}` (the schema cloned,
    /// not re-serialized).
    fn fields(&self, schema_key: &str) -> Value {
        let mut map = Map::with_capacity(3);
        map.insert("name".to_owned(), Value::from(self.name.as_str()));
        map.insert(
            "description".to_owned(),
            Value::from(self.description.as_str()),
        );
        map.insert(schema_key.to_owned(), Value::clone(&self.parameters));
        Value::Object(map)
    }
}

/// A tool-list format a host sends to a model or client.
///
/// ```
/// use tack_core::host::ToolFormat;
/// assert_eq!("openai".parse::<ToolFormat>().unwrap(), ToolFormat::OpenAi);
/// assert_eq!(
///     "yaml".parse::<ToolFormat>().unwrap_err().to_string(),
///     "unknown tool format `yaml`: expected `neutral`, `openai`, `anthropic` or `mcp`"
/// );
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

impl FromStr for ToolFormat {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "neutral" | "tack" => Ok(ToolFormat::Neutral),
            "openai" => Ok(ToolFormat::OpenAi),
            "anthropic" => Ok(ToolFormat::Anthropic),
            "mcp" => Ok(ToolFormat::Mcp),
            _ => Err(UnknownName::new(
                "tool format",
                s,
                &["neutral", "openai", "anthropic", "mcp"],
            )),
        }
    }
}

/// Exports a list of schemas as a JSON array in `format`, keeping their order.
///
/// This builds a `Value`, which copies every schema; to send the list, prefer
/// [`export_tools_json`], which writes the JSON text straight from the
/// stored schemas.
///
/// ```
/// use serde_json::json;
/// use tack_core::host::ToolSchema;
/// use tack_core::host::{ToolFormat, export_tools};
/// let tools = [ToolSchema::new("a", "A.", json!({"type": "object"}))];
/// assert_eq!(export_tools(&tools, ToolFormat::Mcp)[0]["inputSchema"]["type"], "object");
/// ```
pub fn export_tools(schemas: &[ToolSchema], format: ToolFormat) -> Value {
    Value::Array(schemas.iter().map(|s| s.export(format)).collect())
}

/// One tool in one [`ToolFormat`], borrowed: serializing it writes the
/// shape of the format straight from the stored name, description and
/// argument schema, copying none of them.
///
/// The same three fields as [`ToolSchema`] (a whitelist: nothing else of a
/// tool can reach the model through it), in the same shapes as
/// [`ToolSchema::export`].
///
/// ```
/// use serde_json::json;
/// use tack_core::host::ToolSchema;
/// use tack_core::host::{ExportedTool, ToolFormat};
///
/// let schema = ToolSchema::new("echo", "Repeat the text.", json!({"type": "object"}));
/// let text = serde_json::to_string(&ExportedTool::of(&schema, ToolFormat::OpenAi)).unwrap();
/// assert_eq!(
///     serde_json::from_str::<serde_json::Value>(&text).unwrap(),
///     schema.to_openai()
/// );
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ExportedTool<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    /// The JSON text of `parameters`, when rendered beforehand.
    rendered: Option<&'a RenderedTool>,
    format: ToolFormat,
}

/// The JSON texts of a tool's model-visible parts (name, description,
/// argument schema), written once (when the tool is registered, say) so that
/// exporting the tool copies text instead of escaping and serializing them
/// again: see [`ExportedTool::with_rendered`].
///
/// ```
/// use serde_json::json;
/// use tack_core::host::RenderedTool;
/// let rendered = RenderedTool::of("echo", "Say \"hi\".", &json!({"type": "object"}));
/// assert_eq!(rendered.name(), r#""echo""#);
/// assert_eq!(rendered.description(), r#""Say \"hi\".""#);
/// assert_eq!(rendered.parameters(), r#"{"type":"object"}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderedTool {
    name: Box<str>,
    description: Box<str>,
    parameters: Box<str>,
}

impl RenderedTool {
    /// The compact JSON texts of the three parts, as `serde_json` writes them.
    pub fn of(name: &str, description: &str, parameters: &Value) -> Self {
        fn text<T: Serialize + ?Sized>(value: &T) -> Box<str> {
            let mut out = Vec::new();
            write_json(&mut out, value);
            String::from_utf8(out)
                .unwrap_or_else(|e| unreachable!("serde_json writes UTF-8: {e}"))
                .into_boxed_str()
        }
        Self {
            name: text(name),
            description: text(description),
            parameters: text(parameters),
        }
    }

    /// The name as a JSON string.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description as a JSON string.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The argument schema as JSON text.
    pub fn parameters(&self) -> &str {
        &self.parameters
    }
}

impl<'a> ExportedTool<'a> {
    /// A tool from its three model-visible parts.
    pub fn new(
        name: &'a str,
        description: &'a str,
        parameters: &'a Value,
        format: ToolFormat,
    ) -> Self {
        Self {
            name,
            description,
            parameters,
            rendered: None,
            format,
        }
    }

    /// The same tool, written from `rendered` (which must be
    /// [`RenderedTool::of`] the same three parts) instead of escaped and
    /// serialized again: by [`tools_json`], the fast path of an export.
    /// Serializing the tool through serde still writes the parts themselves.
    ///
    /// ```
    /// use serde_json::json;
    /// use tack_core::host::{ExportedTool, RenderedTool, ToolFormat, tools_json};
    /// let schema = json!({"type": "object"});
    /// let rendered = RenderedTool::of("a", "A.", &schema);
    /// let tool = ExportedTool::new("a", "A.", &schema, ToolFormat::Mcp);
    /// assert_eq!(tools_json([tool.with_rendered(&rendered)]), tools_json([tool]));
    /// ```
    pub fn with_rendered(self, rendered: &'a RenderedTool) -> Self {
        debug_assert_eq!(
            rendered,
            &RenderedTool::of(self.name, self.description, self.parameters),
            "the texts of another tool"
        );
        Self {
            rendered: Some(rendered),
            ..self
        }
    }

    /// About how long this tool's JSON text is (exact for a rendered schema
    /// and strings without escapes).
    fn estimated_len(&self) -> usize {
        // `{"function":{"description":"","name":"","parameters":},"type":"function"}`
        const SHAPE: usize = 76;
        match self.rendered {
            Some(r) => r.name.len() + r.description.len() + r.parameters.len() + SHAPE,
            None => self.name.len() + self.description.len() + 256 + SHAPE,
        }
    }

    /// Appends this tool's JSON text to `out`: the bytes serde writes for
    /// it, with the schema copied from its text when there is one.
    fn write_to(&self, out: &mut Vec<u8>) {
        match self.format {
            ToolFormat::Neutral => self.write_fields(out, "parameters"),
            ToolFormat::OpenAi => {
                out.extend_from_slice(br#"{"function":"#);
                self.write_fields(out, "parameters");
                out.extend_from_slice(br#","type":"function"}"#);
            }
            ToolFormat::Anthropic => self.write_fields(out, "input_schema"),
            ToolFormat::Mcp => self.write_fields(out, "inputSchema"),
        }
    }

    /// `{"description", "name", <schema key>}` in sorted key order, as
    /// [`Fields`] serializes them.
    fn write_fields(&self, out: &mut Vec<u8>, schema_key: &'static str) {
        out.extend_from_slice(br#"{"description":"#);
        match self.rendered {
            Some(r) => out.extend_from_slice(r.description.as_bytes()),
            None => write_json(out, self.description),
        }
        if schema_key < "name" {
            self.write_schema(out, schema_key);
            self.write_name(out);
        } else {
            self.write_name(out);
            self.write_schema(out, schema_key);
        }
        out.push(b'}');
    }

    fn write_name(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(br#","name":"#);
        match self.rendered {
            Some(r) => out.extend_from_slice(r.name.as_bytes()),
            None => write_json(out, self.name),
        }
    }

    fn write_schema(&self, out: &mut Vec<u8>, schema_key: &'static str) {
        out.extend_from_slice(b",\"");
        out.extend_from_slice(schema_key.as_bytes());
        out.extend_from_slice(b"\":");
        match self.rendered {
            Some(r) => out.extend_from_slice(r.parameters.as_bytes()),
            None => write_json(out, self.parameters),
        }
    }

    /// `schema` in `format`.
    pub fn of(schema: &'a ToolSchema, format: ToolFormat) -> Self {
        Self::new(
            &schema.name,
            &schema.description,
            &schema.parameters,
            format,
        )
    }
}

/// `{"name", "description", <schema key>: parameters}`, keys in the sorted
/// order a serialized `Value` has, so the text is byte for byte that of
/// [`export_tools`].
struct Fields<'a> {
    tool: &'a ExportedTool<'a>,
    schema_key: &'static str,
}

impl Serialize for Fields<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("description", self.tool.description)?;
        if self.schema_key < "name" {
            map.serialize_entry(self.schema_key, self.tool.parameters)?;
            map.serialize_entry("name", self.tool.name)?;
        } else {
            map.serialize_entry("name", self.tool.name)?;
            map.serialize_entry(self.schema_key, self.tool.parameters)?;
        }
        map.end()
    }
}

impl Serialize for ExportedTool<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let fields = |schema_key| Fields {
            tool: self,
            schema_key,
        };
        match self.format {
            ToolFormat::Neutral => fields("parameters").serialize(serializer),
            ToolFormat::OpenAi => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("function", &fields("parameters"))?;
                map.serialize_entry("type", "function")?;
                map.end()
            }
            ToolFormat::Anthropic => fields("input_schema").serialize(serializer),
            ToolFormat::Mcp => fields("inputSchema").serialize(serializer),
        }
    }
}

/// The JSON text of `tools` as one array, in their order, written straight
/// from the borrowed parts (no schema is copied).
///
/// ```
/// use serde_json::json;
/// use tack_core::host::ToolSchema;
/// use tack_core::host::{ExportedTool, ToolFormat, export_tools, tools_json};
///
/// let tools = [
///     ToolSchema::new("a", "A.", json!({"type": "object"})),
///     ToolSchema::new("b", "B.", json!({"type": "object", "required": ["x"]})),
/// ];
/// let text = tools_json(tools.iter().map(|t| ExportedTool::of(t, ToolFormat::Anthropic)));
/// let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
/// assert_eq!(parsed, export_tools(&tools, ToolFormat::Anthropic));
/// ```
pub fn tools_json<'a>(tools: impl IntoIterator<Item = ExportedTool<'a>>) -> String {
    let tools: Vec<ExportedTool<'a>> = tools.into_iter().collect();
    // Room for the whole text at once (escapes aside): no copy as it grows.
    let room: usize = tools.iter().map(ExportedTool::estimated_len).sum();
    let mut out = Vec::with_capacity(room + 2);
    out.push(b'[');
    for (i, tool) in tools.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        tool.write_to(&mut out);
    }
    out.push(b']');
    String::from_utf8(out).unwrap_or_else(|e| unreachable!("serde_json writes UTF-8: {e}"))
}

/// Appends the compact JSON text of `value` (a string or a `Value`).
fn write_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Writing strings and `Value`s (whose keys are strings) into memory
    // cannot fail.
    if let Err(error) = serde_json::to_writer(&mut *out, value) {
        unreachable!("serializing into memory failed: {error}");
    }
}

/// The JSON text of `schemas` as one array in `format`: what
/// [`export_tools`] builds, written straight from the stored schemas.
///
/// ```
/// use serde_json::json;
/// use tack_core::host::ToolSchema;
/// use tack_core::host::{ToolFormat, export_tools, export_tools_json};
/// let tools = [ToolSchema::new("a", "A.", json!({"type": "object"}))];
/// let text = export_tools_json(&tools, ToolFormat::OpenAi);
/// assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), export_tools(&tools, ToolFormat::OpenAi));
/// ```
pub fn export_tools_json(schemas: &[ToolSchema], format: ToolFormat) -> String {
    tools_json(schemas.iter().map(|s| ExportedTool::of(s, format)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<ToolSchema> {
        vec![
            ToolSchema::new(
                "read",
                "Read a \"file\".",
                json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            ),
            ToolSchema::new("noop", "", json!({})),
        ]
    }

    /// Every format with the text serde writes for `tools` in it.
    fn formats_and_serde_text(tools: &[ToolSchema]) -> Vec<(ToolFormat, String)> {
        [
            ToolFormat::Neutral,
            ToolFormat::OpenAi,
            ToolFormat::Anthropic,
            ToolFormat::Mcp,
        ]
        .into_iter()
        .map(|format| {
            let value = serde_json::to_string(&export_tools(tools, format)).unwrap();
            (format, value)
        })
        .collect()
    }

    #[test]
    fn the_text_is_byte_for_byte_that_of_the_value_in_every_format() {
        let tools = tools();
        for (format, value) in formats_and_serde_text(&tools) {
            assert_eq!(export_tools_json(&tools, format), value, "{format}");
        }
    }

    #[test]
    fn rendered_text_and_serde_write_the_same_bytes() {
        let tools = tools();
        let texts: Vec<RenderedTool> = tools
            .iter()
            .map(|t| RenderedTool::of(&t.name, &t.description, &t.parameters))
            .collect();
        for (format, value) in formats_and_serde_text(&tools) {
            let rendered = tools_json(
                tools
                    .iter()
                    .zip(&texts)
                    .map(|(t, text)| ExportedTool::of(t, format).with_rendered(text)),
            );
            assert_eq!(rendered, value, "{format}");
            let through_serde = serde_json::to_string(
                &tools
                    .iter()
                    .zip(&texts)
                    .map(|(t, text)| ExportedTool::of(t, format).with_rendered(text))
                    .collect::<Vec<_>>(),
            )
            .unwrap();
            assert_eq!(through_serde, value, "{format}");
        }
    }

    #[test]
    fn an_empty_list_is_an_empty_array() {
        assert_eq!(export_tools_json(&[], ToolFormat::OpenAi), "[]");
    }
}
