//! Plugin errors: why a plugin, one of its tool definitions, or a tool
//! registry refused something. Below the tool model (which builds tool names
//! and definitions with them) and the plugin module (which re-exports it).

use std::fmt;

use serde_json::Value;

use crate::hook::OrderError;

/// Why a plugin could not be listed, found or installed, a tool definition
/// (or a tool name) was refused, or a tool registry refused a tool.
///
/// A plugin's `install` uses `?` on all of them alike:
///
/// ```
/// use tack_core::prelude::*;
///
/// let echo = PluginFn::new("echo", |cx| {
///     let tool = ToolDefinition::builder("echo")
///         .description("Repeat the text.")
///         .input_schema(json!({"type": "object"}))
///         .output(OutputSpec::new(json!({"type": "string"})))
///         .handler(|args, _cx| async move { Ok(args["text"].clone()) })
///         .build()?;
///     cx.register_tool(tool)
/// });
/// # let _ = echo;
/// ```
///
/// The variants a registry returns ([`DuplicateTool`](Self::DuplicateTool),
/// [`ReservedTool`](Self::ReservedTool), [`Unsupported`](Self::Unsupported),
/// [`InvalidSchema`](Self::InvalidSchema)), [`Order`](Self::Order) and those
/// of a tool definition ([`EmptyToolName`](Self::EmptyToolName) to
/// [`ZeroTimeout`](Self::ZeroTimeout)) name their plugin once it is known
/// ([`in_plugin`](Self::in_plugin); the host does it for whatever `install`
/// returns). A definition error built outside a plugin names none, and says
/// which tool and what was wrong all the same.
///
/// Each message is complete on its own (what failed, and how to fix it); a
/// wrapped error is a field of its variant and part of the message, not a
/// separate `source()`, so a report that walks sources does not print it
/// twice.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PluginError {
    /// Two plugins share a name.
    #[error(
        "two plugins are named `{name}`: plugin names must be unique in a host (rename one, or install only one of them)"
    )]
    Duplicate {
        /// The name.
        name: String,
    },
    /// A plugin name is empty or has characters outside `A-Z a-z 0-9 _ - . /`.
    #[error(
        "plugin name `{name}` is invalid: use 1 to 64 characters from A-Z, a-z, 0-9, `_`, `-`, `.` and `/`"
    )]
    InvalidName {
        /// The name.
        name: String,
    },
    /// No plugin of that name is linked into the program: either the name
    /// is wrong, or the crate that submits it through `inventory` is a
    /// dependency nothing refers to, so the linker dropped it.
    #[error("{}", unknown_message(name, known, *provider))]
    Unknown {
        /// The name asked for.
        name: String,
        /// The names of the plugins that are linked, sorted.
        known: Vec<String>,
        /// The crate that provides `name`, when it is one of tack's own
        /// plugins (`tack_tools` for `builtin-tools`).
        provider: Option<&'static str>,
    },
    /// A tool registry already has a tool of that name in the layer.
    #[error(
        "{}a tool named `{name}` is already registered in the {scope} layer: dispose the existing one first, or register in an agent scope to shadow it",
        Prefix(plugin)
    )]
    DuplicateTool {
        /// The plugin that registered the tool (`None` for a registration
        /// made outside a plugin, see [`in_plugin`](Self::in_plugin)).
        plugin: Option<String>,
        /// The tool's name.
        name: String,
        /// The layer.
        scope: String,
    },
    /// The tool name is reserved (e.g. `run_code`).
    #[error("{}the tool name `{name}` is reserved: {reason}", Prefix(plugin))]
    ReservedTool {
        /// The plugin that registered the tool, as for
        /// [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The tool's name.
        name: String,
        /// Why.
        reason: String,
    },
    /// The tool registry does not offer the operation (e.g. an atomic
    /// [`replace_tools`](crate::plugin::ToolRegistrar::replace_tools)).
    #[error(
        "{}this tool registry does not support {operation}: use a registry that does (tack-pipeline's ToolRegistry does)",
        Prefix(plugin)
    )]
    Unsupported {
        /// The plugin that asked, as for [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The operation.
        operation: String,
    },
    /// The tool registry could not use a tool's schema (e.g. it does not
    /// compile).
    #[error(
        "{}tool `{name}` has a schema the registry cannot use: {reason}",
        Prefix(plugin)
    )]
    InvalidSchema {
        /// The plugin that registered the tool, as for
        /// [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The tool's name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A tool name is empty.
    #[error(
        "{}tool name is empty: use 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`",
        Prefix(plugin)
    )]
    EmptyToolName {
        /// The plugin whose tool it is, as for
        /// [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
    },
    /// A tool name is longer than
    /// [`ToolName::MAX_LEN`](crate::tool::ToolName::MAX_LEN).
    #[error(
        "{}tool name `{name}` is {len} characters long: the limit is 64 (A-Z, a-z, 0-9, `_`, `-`)",
        Prefix(plugin)
    )]
    ToolNameTooLong {
        /// The plugin, as for [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The rejected name.
        name: String,
        /// Its length in characters.
        len: usize,
    },
    /// A tool name contains a character outside `A–Z a–z 0–9 _ -`.
    #[error(
        "{}tool name `{name}` has {found:?} at position {position}: only A-Z, a-z, 0-9, `_` and `-` are allowed",
        Prefix(plugin)
    )]
    InvalidToolNameCharacter {
        /// The plugin, as for [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The rejected name.
        name: String,
        /// The first offending character.
        found: char,
        /// Its position, counted in characters from 0.
        position: usize,
    },
    /// A tool definition has no description, or only whitespace.
    #[error(
        "{}tool `{tool}` has no description: tell the model what it does and when to use it",
        Prefix(plugin)
    )]
    EmptyDescription {
        /// The plugin, as for [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The tool.
        tool: String,
    },
    /// A tool definition has no input schema.
    #[error(
        "{}tool `{tool}` has no input schema: give the JSON Schema of its arguments object",
        Prefix(plugin)
    )]
    MissingInputSchema {
        /// The plugin, as for [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The tool.
        tool: String,
    },
    /// A tool's input schema is not a JSON object.
    #[error(
        "{}the input schema of tool `{tool}` must be a JSON Schema object, found {found}",
        Prefix(plugin)
    )]
    InputSchemaNotObject {
        /// The plugin, as for [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The tool.
        tool: String,
        /// What was found instead ("an array", "a boolean" …).
        found: &'static str,
    },
    /// A tool's input schema does not say `"type": "object"`.
    #[error(
        "{}the input schema of tool `{tool}` must say `\"type\": \"object\"` (tool arguments are always a JSON object), found {}",
        Prefix(plugin),
        found.as_deref().map_or_else(|| "no `type`".to_owned(), |t| format!("`\"type\": {t}`"))
    )]
    InputSchemaNotObjectType {
        /// The plugin, as for [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The tool.
        tool: String,
        /// The `type` found, as JSON, if any.
        found: Option<String>,
    },
    /// A tool definition has no output declaration.
    #[error(
        "{}tool `{tool}` has no output declaration: give an OutputSpec with the JSON Schema of its result",
        Prefix(plugin)
    )]
    MissingOutput {
        /// The plugin, as for [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The tool.
        tool: String,
    },
    /// A tool's output schema cannot be used.
    #[error(
        "{}the output schema of tool `{tool}` is invalid: {reason}",
        Prefix(plugin)
    )]
    OutputSchemaInvalid {
        /// The plugin, as for [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
    },
    /// Generating a tool's schema from a type failed (its `JsonSchema` impl
    /// panicked).
    #[error(
        "{}could not generate the {which} schema of tool `{tool}`: {message}",
        Prefix(plugin)
    )]
    SchemaGeneration {
        /// The plugin, as for [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The tool.
        tool: String,
        /// `input` or `output`.
        which: &'static str,
        /// What went wrong.
        message: String,
    },
    /// A tool's schema nests deeper than
    /// [`ToolDefinition::MAX_SCHEMA_DEPTH`](crate::tool::ToolDefinition::MAX_SCHEMA_DEPTH).
    #[error(
        "{}the {which} schema of tool `{tool}` goes deeper than {limit} levels (JSON objects and \
         arrays, with each local `$ref` followed into what it points to): flatten it, with \
         fewer nested objects and arrays and shorter chains of `$ref`s",
        Prefix(plugin)
    )]
    SchemaTooDeep {
        /// The plugin, as for [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The tool.
        tool: String,
        /// `input` or `output`.
        which: &'static str,
        /// The limit.
        limit: usize,
    },
    /// A keyword sits in a tool's schema whose declared `type` it does not
    /// constrain (`items` on an object, `properties` on an array,
    /// `minLength` on an integer): JSON Schema would ignore it, so it would
    /// silently constrain nothing. (Its larger fields are boxed, so a
    /// `PluginError` stays small.)
    #[error(
        "{}the {which} schema of tool `{tool}` has `{keyword}` at `{pointer}` in a schema with \
         `\"type\": {declared}`, but `{keyword}` constrains only {applies_to}, so it would be \
         ignored: move it into the schema it is meant for, fix that schema's `type`, or remove \
         it (a schema that must keep it as written can be built with \
         `ToolDefinitionBuilder::allow_misplaced_keywords`)",
        Prefix(plugin)
    )]
    MisplacedKeyword {
        /// The plugin, as for [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The tool.
        tool: String,
        /// `input` or `output`.
        which: &'static str,
        /// The JSON pointer of the keyword in the schema.
        pointer: Box<str>,
        /// The keyword.
        keyword: Box<str>,
        /// The declared `type` (a type name, or a list of them).
        declared: Box<Value>,
        /// What the keyword constrains, in words.
        applies_to: &'static str,
    },
    /// A tool definition has no handler.
    #[error(
        "{}tool `{tool}` has no handler: give the body that runs a call",
        Prefix(plugin)
    )]
    MissingHandler {
        /// The plugin, as for [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The tool.
        tool: String,
    },
    /// A tool definition declares a zero timeout.
    #[error(
        "{}tool `{tool}` declares a timeout of 0: a timeout must be positive (leave it unset for no deadline)",
        Prefix(plugin)
    )]
    ZeroTimeout {
        /// The plugin, as for [`DuplicateTool`](Self::DuplicateTool).
        plugin: Option<String>,
        /// The tool.
        tool: String,
    },
    /// A listener of the plugin could not be placed in the order it asked
    /// for. `?` on a `tap_with`/`register_with` inside
    /// [`Plugin::install`](crate::plugin::Plugin::install) converts into it; the host
    /// fills in the plugin's name.
    #[error("{}{error}", Prefix(plugin))]
    Order {
        /// The plugin (`None` until the host fills it in).
        plugin: Option<String>,
        /// What was wrong with the order.
        error: OrderError,
    },
    /// The plugin's own install logic failed.
    #[error("plugin `{plugin}` failed to install: {message}")]
    Install {
        /// The plugin.
        plugin: String,
        /// What it said.
        message: String,
    },
    /// The plugin's install panicked (its partial footprint was removed).
    #[error("plugin `{plugin}` panicked while installing: {message}")]
    Panicked {
        /// The plugin.
        plugin: String,
        /// The panic message.
        message: String,
    },
}

impl From<OrderError> for PluginError {
    fn from(error: OrderError) -> Self {
        PluginError::Order {
            plugin: None,
            error,
        }
    }
}

impl PluginError {
    /// Names `plugin` in an error that does not name one yet: a tool
    /// registry's (a [`ToolRegistrar`](crate::plugin::ToolRegistrar) answers
    /// without knowing who registers), a tool definition's, or one converted
    /// from an [`OrderError`] by `?`.
    /// [`PluginContext`](crate::plugin::PluginContext)'s `register_*` methods and the
    /// host's install do it; an error that names its plugin is returned as
    /// it is.
    ///
    /// ```
    /// use tack_core::plugin::PluginError;
    /// let refused = PluginError::ReservedTool {
    ///     plugin: None,
    ///     name: "run_code".into(),
    ///     reason: "it is the code-mode transport".into(),
    /// };
    /// assert_eq!(
    ///     refused.to_string(),
    ///     "the tool name `run_code` is reserved: it is the code-mode transport"
    /// );
    /// assert_eq!(
    ///     refused.in_plugin("kit").to_string(),
    ///     "plugin `kit`: the tool name `run_code` is reserved: it is the code-mode transport"
    /// );
    /// ```
    #[must_use]
    pub fn in_plugin(mut self, name: &str) -> Self {
        match &mut self {
            PluginError::DuplicateTool { plugin, .. }
            | PluginError::ReservedTool { plugin, .. }
            | PluginError::Unsupported { plugin, .. }
            | PluginError::InvalidSchema { plugin, .. }
            | PluginError::Order { plugin, .. }
            | PluginError::EmptyToolName { plugin }
            | PluginError::ToolNameTooLong { plugin, .. }
            | PluginError::InvalidToolNameCharacter { plugin, .. }
            | PluginError::EmptyDescription { plugin, .. }
            | PluginError::MissingInputSchema { plugin, .. }
            | PluginError::InputSchemaNotObject { plugin, .. }
            | PluginError::InputSchemaNotObjectType { plugin, .. }
            | PluginError::MissingOutput { plugin, .. }
            | PluginError::OutputSchemaInvalid { plugin, .. }
            | PluginError::SchemaGeneration { plugin, .. }
            | PluginError::SchemaTooDeep { plugin, .. }
            | PluginError::MisplacedKeyword { plugin, .. }
            | PluginError::MissingHandler { plugin, .. }
            | PluginError::ZeroTimeout { plugin, .. } => {
                if plugin.is_none() {
                    *plugin = Some(name.to_owned());
                }
            }
            PluginError::Duplicate { .. }
            | PluginError::InvalidName { .. }
            | PluginError::Unknown { .. }
            | PluginError::Install { .. }
            | PluginError::Panicked { .. } => {}
        }
        self
    }

    /// An install failure with a message, for plugins to return.
    pub fn install(plugin: impl Into<String>, message: impl Into<String>) -> Self {
        PluginError::Install {
            plugin: plugin.into(),
            message: message.into(),
        }
    }
}

/// `plugin `name`: ` before the message of an error that names its plugin,
/// nothing before one that does not.
struct Prefix<'a>(&'a Option<String>);

impl fmt::Display for Prefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(plugin) => write!(f, "plugin `{plugin}`: "),
            None => Ok(()),
        }
    }
}

fn unknown_message(name: &str, known: &[String], provider: Option<&str>) -> String {
    let linked = if known.is_empty() {
        "none are".to_owned()
    } else {
        let names: Vec<String> = known.iter().map(|n| format!("`{n}`")).collect();
        format!("the linked ones are {}", names.join(", "))
    };
    let how = match provider {
        Some(krate) => format!(
            "`{name}` is provided by the `{}` crate: depend on it and write `use {krate} as _;` in your binary (an unused dependency is dropped by the linker, and its plugins with it)",
            krate.replace('_', "-")
        ),
        None => "if a crate provides it, depend on that crate and write `use that_crate as _;` in your binary (an unused dependency is dropped by the linker, and its plugins with it), or check the name".to_owned(),
    };
    format!("no plugin named `{name}` is linked into this program ({linked}); {how}")
}
