//! Plugin errors.

use super::RegistrationError;
use crate::hook::OrderError;
use crate::tool::DefinitionError;

/// Why a plugin could not be listed, found or installed.
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
    /// No plugin of that name was submitted through `inventory`.
    #[error("no plugin named `{name}` is registered; known plugins: {known}")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The names that exist, comma-separated.
        known: String,
    },
    /// A tool definition of the plugin is invalid.
    #[error("plugin `{plugin}`: {source}")]
    Definition {
        /// The plugin.
        plugin: String,
        /// The definition error.
        #[source]
        source: DefinitionError,
    },
    /// The registry refused a tool of the plugin.
    #[error("plugin `{plugin}`: {source}")]
    Registration {
        /// The plugin.
        plugin: String,
        /// The registry's error.
        #[source]
        source: RegistrationError,
    },
    /// A listener of the plugin could not be placed in the order it asked for.
    #[error("plugin `{plugin}`: {source}")]
    Order {
        /// The plugin.
        plugin: String,
        /// What was wrong with the order.
        #[source]
        source: OrderError,
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

impl PluginError {
    /// An install failure with a message, for plugins to return.
    pub fn install(plugin: impl Into<String>, message: impl Into<String>) -> Self {
        PluginError::Install {
            plugin: plugin.into(),
            message: message.into(),
        }
    }
}
