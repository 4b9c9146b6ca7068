//! Composing plugins into a registry.

use tack_core::hook::Disposables;
use tack_core::host::PluginHost;
use tack_core::plugin::{Plugin, PluginError};
use tack_pipeline::ToolRegistry;

enum Entry {
    Value(Box<dyn Plugin>),
    Named(String),
}

/// Composes plugins, by value or by `inventory` name, into one
/// [`ToolRegistry`] and one [`Disposables`], installed in the order given.
///
/// ```
/// use tack_agent::PluginSet;
/// use tack_timeout::TimeoutPolicy;
/// let set = PluginSet::new()
///     .with(TimeoutPolicy::default())
///     .with_named("builtin-tools")
///     .build()
///     .unwrap();
/// assert!(set.registry.get("read_file", None).is_some());
/// assert_eq!(set.installed, ["timeout", "builtin-tools"]);
/// assert!(PluginSet::new().with_named("no-such-plugin").build().is_err());
/// ```
#[must_use]
pub struct PluginSet {
    registry: ToolRegistry,
    entries: Vec<Entry>,
}

impl std::fmt::Debug for PluginSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginSet")
            .field("plugins", &self.entries.len())
            .finish_non_exhaustive()
    }
}

impl Default for PluginSet {
    fn default() -> Self {
        Self::new()
    }
}

/// The result of [`PluginSet::build`]: the registry and every plugin's
/// footprint. Dropping `disposables` unloads the plugins.
#[derive(Debug)]
#[non_exhaustive]
pub struct InstalledPlugins {
    /// The registry the plugins installed into.
    pub registry: ToolRegistry,
    /// Every plugin's registrations; drop (or dispose) to unload them.
    pub disposables: Disposables,
    /// The installed plugins' names, in installation order.
    pub installed: Vec<String>,
}

impl PluginSet {
    /// An empty set over a new registry.
    pub fn new() -> Self {
        Self::over(ToolRegistry::new())
    }

    /// An empty set over `registry` (e.g. one with a custom pipeline config).
    pub fn over(registry: ToolRegistry) -> Self {
        Self {
            registry,
            entries: Vec::new(),
        }
    }

    /// Adds a plugin value.
    pub fn with(mut self, plugin: impl Plugin) -> Self {
        self.entries.push(Entry::Value(Box::new(plugin)));
        self
    }

    /// Adds a boxed plugin value.
    pub fn with_boxed(mut self, plugin: Box<dyn Plugin>) -> Self {
        self.entries.push(Entry::Value(plugin));
        self
    }

    /// Adds the plugin submitted through `inventory` under `name`.
    pub fn with_named(mut self, name: impl Into<String>) -> Self {
        self.entries.push(Entry::Named(name.into()));
        self
    }

    /// Installs every plugin, in order.
    ///
    /// # Errors
    ///
    /// The first [`PluginError`] (unknown name, duplicate, failed install);
    /// the plugins installed before it are unloaded.
    pub fn build(self) -> Result<InstalledPlugins, PluginError> {
        let registry = self.registry;
        let mut host = PluginHost::new(registry.hooks(), registry.capabilities(), &registry);
        for entry in &self.entries {
            match entry {
                Entry::Value(plugin) => host.install(&**plugin)?,
                Entry::Named(name) => host.install_named(name)?,
            }
        }
        let installed = host
            .installed_names()
            .iter()
            .map(|n| (*n).to_owned())
            .collect();
        let disposables = host.into_disposables();
        Ok(InstalledPlugins {
            registry,
            disposables,
            installed,
        })
    }
}
