//! Static plugin registration through `inventory`.

use std::fmt;

use super::{Plugin, PluginError};

/// A plugin a crate submits statically, so hosts can list and install it by
/// name:
///
/// ```
/// use tack_core::plugin::{Plugin, PluginContext, PluginError, PluginFactory};
///
/// struct Hello;
/// impl Plugin for Hello {
///     fn name(&self) -> &str { "hello" }
///     fn install(&self, _cx: &mut PluginContext<'_>) -> Result<(), PluginError> { Ok(()) }
/// }
/// inventory::submit! { PluginFactory::new("hello", "Says hello.", || Box::new(Hello)) }
///
/// // A host lists them:
/// let names: Vec<_> = tack_core::host::plugin_factories().unwrap().iter().map(|f| f.name()).collect();
/// assert!(names.contains(&"hello"));
/// ```
pub struct PluginFactory {
    name: &'static str,
    description: &'static str,
    make: fn() -> Box<dyn Plugin>,
}

impl PluginFactory {
    /// A factory (usable in `inventory::submit!`, which needs a `const fn`).
    pub const fn new(
        name: &'static str,
        description: &'static str,
        make: fn() -> Box<dyn Plugin>,
    ) -> Self {
        Self {
            name,
            description,
            make,
        }
    }

    /// The plugin's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// One line saying what it does.
    pub fn description(&self) -> &'static str {
        self.description
    }

    /// A fresh instance.
    pub fn create(&self) -> Box<dyn Plugin> {
        (self.make)()
    }
}

impl fmt::Debug for PluginFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PluginFactory")
            .field("name", &self.name)
            .field("description", &self.description)
            .finish()
    }
}

inventory::collect!(PluginFactory);

/// The crates of tack's own inventory plugins, by plugin name: what a host
/// must link (`use tack_tools as _;`) to install them by name.
const TACK_PLUGINS: [(&str, &str); 5] = [
    ("builtin-tools", "tack_tools"),
    ("code-mode", "tack_code_mode"),
    ("permission", "tack_permission"),
    ("sandbox", "tack_sandbox"),
    ("timeout", "tack_timeout"),
];

/// The crate (as a path: `tack_tools`) that provides the plugin `name`, when
/// it is one of tack's own.
fn provider_of(name: &str) -> Option<&'static str> {
    TACK_PLUGINS
        .iter()
        .find(|(plugin, _)| *plugin == name)
        .map(|(_, krate)| *krate)
}

/// Whether `name` is a valid plugin name: 1 to 64 characters from
/// `A-Z a-z 0-9 _ - . /`.
pub(crate) fn check_plugin_name(name: &str) -> Result<(), PluginError> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    if valid {
        Ok(())
    } else {
        Err(PluginError::InvalidName {
            name: name.to_owned(),
        })
    }
}

/// Sorts factories by name and reports duplicate or invalid names.
///
/// # Errors
///
/// [`PluginError::Duplicate`] for the first name submitted twice,
/// [`PluginError::InvalidName`] for an invalid one.
pub fn sorted_factories<'a>(
    factories: impl IntoIterator<Item = &'a PluginFactory>,
) -> Result<Vec<&'a PluginFactory>, PluginError> {
    let mut sorted: Vec<&PluginFactory> = factories.into_iter().collect();
    sorted.sort_by_key(|f| f.name);
    for factory in &sorted {
        check_plugin_name(factory.name)?;
    }
    if let Some(pair) = sorted.windows(2).find(|w| w[0].name == w[1].name) {
        return Err(PluginError::Duplicate {
            name: pair[0].name.to_owned(),
        });
    }
    Ok(sorted)
}

/// Every plugin submitted with `inventory::submit!` in the binary, sorted by
/// name (a deterministic order, whatever the link order).
///
/// # Errors
///
/// [`PluginError::Duplicate`] when two submitted plugins share a name,
/// [`PluginError::InvalidName`] for an invalid name.
pub fn plugin_factories() -> Result<Vec<&'static PluginFactory>, PluginError> {
    sorted_factories(inventory::iter::<PluginFactory>)
}

/// The submitted plugin named `name`.
///
/// # Errors
///
/// [`PluginError::Unknown`] (listing the linked names, and for tack's own
/// plugins the crate to link with `use <crate> as _;`), or the errors of
/// [`plugin_factories`].
pub fn find_plugin(name: &str) -> Result<&'static PluginFactory, PluginError> {
    let all = plugin_factories()?;
    all.iter()
        .find(|f| f.name == name)
        .copied()
        .ok_or_else(|| PluginError::Unknown {
            name: name.to_owned(),
            known: all.iter().map(|f| f.name.to_owned()).collect(),
            provider: provider_of(name),
        })
}
