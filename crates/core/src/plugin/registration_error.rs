//! Why a tool registry refused a plugin's tool.

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
    /// The registry does not offer the operation (e.g. an atomic
    /// [`replace_tools`](crate::plugin::ToolRegistrar::replace_tools)).
    #[error(
        "this tool registry does not support {operation}: use a registry that does (tack-pipeline's ToolRegistry does)"
    )]
    Unsupported {
        /// The operation.
        operation: String,
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
