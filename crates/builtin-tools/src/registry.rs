//! All the builtin tools at once: as definitions, registered, or as a plugin.

use tack_core::hook::{Disposer, Scope};
use tack_core::plugin::ToolRegistrar;
use tack_core::plugin::{Plugin, PluginContext, PluginError, PluginFactory};
use tack_core::tool::ToolDefinition;

use crate::{Bash, EditFile, Glob, Grep, ListDir, ReadFile, WriteFile};

/// Every builtin tool with its default settings, read-only tools first:
/// `read_file`, `list_dir`, `glob`, `grep`, `write_file`, `edit_file`, `bash`.
///
/// # Errors
///
/// The [`PluginError`] of a tool definition if its schema cannot be generated (a bug in this
/// crate; the tests build every definition).
pub fn builtin_tools() -> Result<Vec<ToolDefinition>, PluginError> {
    Ok(vec![
        ToolDefinition::from_tool(ReadFile::new())?,
        ToolDefinition::from_tool(ListDir::new())?,
        ToolDefinition::from_tool(Glob::new())?,
        ToolDefinition::from_tool(Grep::new())?,
        ToolDefinition::from_tool(WriteFile::new())?,
        ToolDefinition::from_tool(EditFile::new())?,
        ToolDefinition::from_tool(Bash::new())?,
    ])
}

/// Why the builtin tools could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegisterError {
    /// A definition could not be built.
    #[error("a builtin tool could not be defined: {0}")]
    Definition(PluginError),
    /// The registry refused a tool (e.g. one of that name is already registered).
    #[error("the registry refused a builtin tool: {0}")]
    Registration(#[from] PluginError),
}

/// Registers every builtin tool in `registrar` under `scope`, all or nothing.
/// Disposing the returned bag unregisters them.
///
/// # Errors
///
/// [`RegisterError`]; the tools registered before the failure are unregistered.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use tack_core::hook::{Disposer, Scope};
/// use tack_core::plugin::PluginError;
/// use tack_core::tool::ToolDefinition;
/// use tack_core::plugin::ToolRegistrar;
///
/// #[derive(Default)]
/// struct Names(Arc<Mutex<Vec<String>>>);
/// impl ToolRegistrar for Names {
///     fn register_tool(&self, _: Scope, d: ToolDefinition) -> Result<Disposer, PluginError> {
///         let name = d.name().to_string();
///         self.0.lock().unwrap().push(name.clone());
///         let names = self.0.clone();
///         Ok(Disposer::new(move || names.lock().unwrap().retain(|n| *n != name)))
///     }
/// }
///
/// let registry = Names::default();
/// let tools = tack_tools::register_builtin_tools(&registry, Scope::Global).unwrap();
/// assert_eq!(registry.0.lock().unwrap().len(), 7);
/// tools.dispose();
/// assert!(registry.0.lock().unwrap().is_empty());
/// ```
pub fn register_builtin_tools(
    registrar: &dyn ToolRegistrar,
    scope: Scope,
) -> Result<Disposer, RegisterError> {
    let mut registered = Vec::new();
    for definition in builtin_tools().map_err(RegisterError::Definition)? {
        match registrar.register_tool(scope.clone(), definition) {
            Ok(disposer) => registered.push(disposer),
            Err(e) => {
                // Nothing half-registered: undo what came before.
                undo_all(&registered);
                return Err(e.into());
            }
        }
    }
    Ok(Disposer::new(move || undo_all(&registered)))
}

/// Disposes `registered`, the last registered first.
fn undo_all(registered: &[Disposer]) {
    for disposer in registered.iter().rev() {
        disposer.dispose();
    }
}

/// The plugin that registers every builtin tool (globally). Submitted through
/// `inventory` as `builtin-tools`, so hosts can install it by name.
///
/// ```
/// use tack_core::host::find_plugin;
/// let factory = find_plugin("builtin-tools").unwrap();
/// assert_eq!(factory.create().name(), "builtin-tools");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct BuiltinTools;

impl Plugin for BuiltinTools {
    fn name(&self) -> &str {
        "builtin-tools"
    }

    fn install(&self, cx: &mut PluginContext<'_>) -> Result<(), PluginError> {
        for definition in builtin_tools()? {
            cx.register_tool(definition)?;
        }
        Ok(())
    }
}

inventory::submit! {
    PluginFactory::new(
        "builtin-tools",
        "The builtin tools: read_file, list_dir, glob, grep, write_file, edit_file, bash.",
        || Box::new(BuiltinTools),
    )
}
