//! Composing plugins into a pipeline (its registry, hook points and capability slots).

use tack_core::host::Disposables;
use tack_core::host::PluginHost;
use tack_core::plugin::{Plugin, PluginError};

use crate::{Pipeline, ToolRegistry};

enum Entry {
    Value(Box<dyn Plugin>),
    Named(String),
}

/// Composes plugins, by value or by `inventory` name, into one [`Pipeline`]
/// (its registry, hook points and capability slots) and one [`Disposables`],
/// installed in the order given: the one way a host installs plugins.
///
/// ```
/// use tack_core::prelude::*;
/// use tack_pipeline::PluginSet;
///
/// let gate = PluginFn::new("read-only", |cx| {
///     cx.hooks().pre_execute().tap("read-only", |exec, next| async move {
///         if !exec.tier().is_read_only() {
///             return PreDecision::deny("this session is read-only");
///         }
///         next.run(exec).await
///     });
///     Ok(())
/// });
/// let set = PluginSet::new().with(gate).build().unwrap();
/// assert_eq!(set.installed, ["read-only"]);
/// assert_eq!(set.pipeline.hooks().pre_execute().listener_count(), 1);
/// set.disposables.dispose(); // unloads every plugin of the set
/// assert_eq!(set.pipeline.hooks().pre_execute().listener_count(), 0);
///
/// let err = PluginSet::new().with_named("no-such-plugin").build().unwrap_err();
/// assert!(err.to_string().contains("no-such-plugin"), "{err}");
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
/// footprint. The plugins stay installed until `disposables` is disposed
/// (dropping this value unloads nothing).
#[derive(Debug)]
#[non_exhaustive]
pub struct InstalledPlugins {
    /// The pipeline the plugins installed into (its registry holds their tools).
    pub pipeline: Pipeline,
    /// Every plugin's registrations; dispose them to unload the plugins.
    pub disposables: Disposables,
    /// The installed plugins' names, in installation order.
    pub installed: Vec<String>,
}

impl PluginSet {
    /// An empty set over a new pipeline over a new registry.
    pub fn new() -> Self {
        Self::over(Pipeline::new(ToolRegistry::new()))
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
            let installed = match entry {
                Entry::Value(plugin) => host.install(&**plugin),
                Entry::Named(name) => host.install_named(name),
            };
            if let Err(e) = installed {
                host.into_disposables().dispose();
                return Err(e);
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
