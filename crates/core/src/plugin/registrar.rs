//! The registry interface plugins register tools through.

use crate::hook::{Disposer, Scope};
use crate::tool::ToolDefinition;

/// The reserved name of the code-mode transport tool: the one tool
/// [`ToolRegistrar::register_code_transport`] registers, which no plugin can
/// register or shadow as an ordinary tool.
pub const RUN_CODE: &str = "run_code";

/// Why a tool registry refused a definition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistrationError {
    /// A tool of that name already exists in the same layer.
    #[error(
        "a tool named `{name}` is already registered in the {scope} layer: dispose the existing one first, or register in an agent scope to shadow it"
    )]
    Duplicate {
        /// The name.
        name: String,
        /// The layer.
        scope: String,
    },
    /// The name is reserved (e.g. `run_code`).
    #[error("the tool name `{name}` is reserved: {reason}")]
    Reserved {
        /// The name.
        name: String,
        /// Why.
        reason: String,
    },
    /// The registry could not use a schema (e.g. it does not compile).
    #[error("tool `{name}` has a schema the registry cannot use: {reason}")]
    InvalidSchema {
        /// The name.
        name: String,
        /// Why.
        reason: String,
    },
}

/// A tool registry, as plugins see it. Implemented by the host's registry
/// (tack-pipeline's `ToolRegistry`).
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
