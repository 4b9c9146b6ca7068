//! Composing plugins into a pipeline (its registry, hook points and capability slots).

use tack_core::hook::Disposables;
use tack_core::host::PluginHost;
use tack_core::plugin::{Plugin, PluginError};
use tack_pipeline::Pipeline;

enum Entry {
    Value(Box<dyn Plugin>),
    Named(String),
}

/// Composes plugins, by value or by `inventory` name, into one [`Pipeline`]
/// (its registry, hook points and capability slots) and one [`Disposables`],
/// installed in the order given.
///
/// ```
/// use tack_agent::PluginSet;
/// use tack_timeout::TimeoutPolicy;
/// let set = PluginSet::new()
///     .with(TimeoutPolicy::default())
///     .with_named("builtin-tools")
///     .build()
///     .unwrap();
/// assert!(set.pipeline.registry().get("read_file", None).is_some());
/// assert_eq!(set.installed, ["timeout", "builtin-tools"]);
/// assert!(PluginSet::new().with_named("no-such-plugin").build().is_err());
/// ```
#[must_use]
pub struct PluginSet {
    pipeline: Pipeline,
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

/// The result of [`PluginSet::build`]: the pipeline and every plugin's
/// footprint. Dropping `disposables` unloads the plugins.
#[derive(Debug)]
#[non_exhaustive]
pub struct InstalledPlugins {
    /// The pipeline the plugins installed into (its registry holds their tools).
    pub pipeline: Pipeline,
    /// Every plugin's registrations; drop (or dispose) to unload them.
    pub disposables: Disposables,
    /// The installed plugins' names, in installation order.
    pub installed: Vec<String>,
}

impl PluginSet {
    /// An empty set over a new pipeline over a new registry.
    pub fn new() -> Self {
        Self::over(Pipeline::new(tack_pipeline::ToolRegistry::new()))
    }

    /// An empty set over `pipeline` (e.g. one with a custom config).
    pub fn over(pipeline: Pipeline) -> Self {
        Self {
            pipeline,
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
        let pipeline = self.pipeline;
        let mut host = PluginHost::new(
            pipeline.hooks(),
            pipeline.capabilities(),
            pipeline.registry(),
        );
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
            pipeline,
            disposables,
            installed,
        })
    }
}
