//! Plugin errors.

use std::fmt;

use crate::hook::OrderError;
use crate::tool::DefinitionError;

/// Why a plugin could not be listed, found or installed, or a tool registry
/// refused a tool.
///
/// The variants a registry returns ([`DuplicateTool`](Self::DuplicateTool),
/// [`ReservedTool`](Self::ReservedTool), [`Unsupported`](Self::Unsupported),
/// [`InvalidSchema`](Self::InvalidSchema)) and [`Order`](Self::Order) name
/// their plugin once it is known ([`in_plugin`](Self::in_plugin)).
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
    /// A tool definition of the plugin is invalid.
    #[error("plugin `{plugin}`: {error}")]
    Definition {
        /// The plugin.
        plugin: String,
        /// The definition error.
        error: DefinitionError,
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
    /// A listener of the plugin could not be placed in the order it asked
    /// for. `?` on a `tap_with`/`register_with` inside
    /// [`Plugin::install`](super::Plugin::install) converts into it; the host
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
    /// registry's (a [`ToolRegistrar`](super::ToolRegistrar) answers without
    /// knowing who registers), or one converted from an [`OrderError`] by `?`.
    /// [`PluginContext`](super::PluginContext)'s `register_*` methods and the
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
            | PluginError::Order { plugin, .. } => {
                if plugin.is_none() {
                    *plugin = Some(name.to_owned());
                }
            }
            PluginError::Duplicate { .. }
            | PluginError::InvalidName { .. }
            | PluginError::Unknown { .. }
            | PluginError::Definition { .. }
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
