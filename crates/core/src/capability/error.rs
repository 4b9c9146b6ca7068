//! A capability the host did not provide.

use super::CapabilityKind;

/// A tool asked for a capability the host did not install.
///
/// ```
/// use tack_core::capability::{CapabilityError, CapabilityKind};
/// let err = CapabilityError::missing(CapabilityKind::Fs);
/// assert!(err.to_string().contains("tack-sandbox"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CapabilityError {
    /// No provider is installed for this capability.
    #[error(
        "no `{kind}` capability is installed in this host: install a plugin that provides it (the sandbox plugin, tack-sandbox, provides `fs` and `shell`)"
    )]
    Missing {
        /// Which capability.
        kind: CapabilityKind,
    },
}

impl CapabilityError {
    /// The error for a missing capability.
    pub fn missing(kind: CapabilityKind) -> Self {
        CapabilityError::Missing { kind }
    }
}
