//! The registry interface a plugin's tools are registered through.

use crate::hook::{Disposer, Scope};
#[cfg(doc)]
use crate::plugin::RUN_CODE;
use crate::plugin::RegistrationError;
use crate::tool::ToolDefinition;

/// A tool registry, as the [`PluginHost`](super::PluginHost) registers a
/// plugin's tools into it. Implemented by the host's registry (tack-pipeline's
/// `ToolRegistry`); plugins register through
/// [`PluginContext`](crate::plugin::PluginContext) and never see it.
pub trait ToolRegistrar: Send + Sync {
    /// Registers `definition` in `scope`; the disposer unregisters it.
    ///
    /// # Errors
    ///
    /// [`RegistrationError`] for a duplicate or reserved name or an unusable schema.
    fn register_tool(
        &self,
        scope: Scope,
        definition: ToolDefinition,
    ) -> Result<Disposer, RegistrationError>;

    /// Registers the code-mode transport: the one tool allowed the reserved
    /// name [`RUN_CODE`], presented to agents whose presentation is code or both.
    /// The default refuses: a registry without code-mode support.
    ///
    /// # Errors
    ///
    /// [`RegistrationError::Reserved`] when the registry has no transport slot
    /// or the definition is not named `run_code`;
    /// [`RegistrationError::Duplicate`] when a transport is already registered.
    fn register_code_transport(
        &self,
        definition: ToolDefinition,
    ) -> Result<Disposer, RegistrationError> {
        Err(RegistrationError::Reserved {
            name: definition.name().to_string(),
            reason: "this registry has no code-mode transport".to_owned(),
        })
    }
}
