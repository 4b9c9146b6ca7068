//! Plugin errors.

use super::RegistrationError;
use crate::hook::OrderError;
use crate::tool::DefinitionError;

/// Why a plugin could not be listed, found or installed.
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
    /// The registry refused a tool of the plugin.
    #[error("plugin `{plugin}`: {error}")]
    Registration {
        /// The plugin.
        plugin: String,
        /// The registry's error.
        error: RegistrationError,
    },
    /// A listener of the plugin could not be placed in the order it asked
    /// for. `?` on a `tap_with`/`register_with` inside
    /// [`Plugin::install`](super::Plugin::install) converts into it; the host
    /// fills in the plugin's name.
    #[error("plugin `{plugin}`: {error}")]
    Order {
        /// The plugin (empty until the host fills it in).
        plugin: String,
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
            plugin: String::new(),
            error,
        }
    }
}

impl PluginError {
    /// Names `plugin` in an error that does not name its plugin yet (one
    /// converted from an [`OrderError`] by `?`).
    pub(crate) fn in_plugin(mut self, name: &str) -> Self {
        if let PluginError::Order { plugin, .. } = &mut self
            && plugin.is_empty()
        {
            name.clone_into(plugin);
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
