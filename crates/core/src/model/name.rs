//! Tool names: `^[A-Za-z0-9_-]{1,64}$`.

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

use crate::error::PluginError;

/// A valid tool name: 1 to 64 characters from `A–Z a–z 0–9 _ -`.
///
/// ```
/// use tack_core::tool::ToolName;
/// assert!(ToolName::new("read_file").is_ok());
/// let err = ToolName::new("read file").unwrap_err();
/// assert!(err.to_string().contains("position 4"), "{err}");
/// assert!(ToolName::new("").is_err());
/// assert!(ToolName::new("x".repeat(65)).is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolName(Arc<str>);

impl ToolName {
    /// The longest tool name accepted (the limit the major model APIs share).
    pub const MAX_LEN: usize = 64;

    /// The reserved name of the code-mode transport tool: the one tool
    /// [`PluginContext::register_code_transport`](crate::plugin::PluginContext::register_code_transport)
    /// registers, which no plugin can register or shadow as an ordinary tool.
    pub const RUN_CODE: &str = "run_code";

    /// Validates `name`.
    ///
    /// # Errors
    ///
    /// [`PluginError::EmptyToolName`], [`PluginError::ToolNameTooLong`] or
    /// [`PluginError::InvalidToolNameCharacter`], saying what is wrong and
    /// what is allowed.
    pub fn new(name: impl AsRef<str>) -> Result<Self, PluginError> {
        let name = name.as_ref();
        Self::check(name)?;
        Ok(Self(Arc::from(name)))
    }

    /// Checks `name` without allocating.
    ///
    /// # Errors
    ///
    /// The same as [`new`](Self::new)'s.
    pub fn check(name: &str) -> Result<(), PluginError> {
        if name.is_empty() {
            return Err(PluginError::EmptyToolName { plugin: None });
        }
        if let Some((position, found)) = name
            .chars()
            .enumerate()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
        {
            return Err(PluginError::InvalidToolNameCharacter {
                plugin: None,
                name: name.to_owned(),
                found,
                position,
            });
        }
        // Only ASCII is left, so bytes are characters.
        if name.len() > ToolName::MAX_LEN {
            return Err(PluginError::ToolNameTooLong {
                plugin: None,
                name: name.to_owned(),
                len: name.len(),
            });
        }
        Ok(())
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The same name in an allocation of its own (whose count clones of it
    /// write, not the original's).
    pub(crate) fn detached(&self) -> ToolName {
        ToolName(Arc::from(&*self.0))
    }
}

impl fmt::Debug for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ToolName({:?})", &*self.0)
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for ToolName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for ToolName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl TryFrom<&str> for ToolName {
    type Error = PluginError;
    fn try_from(value: &str) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl serde::Serialize for ToolName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for ToolName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::new(text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_characters_not_bytes() {
        match ToolName::new("éa b") {
            Err(PluginError::InvalidToolNameCharacter {
                found, position, ..
            }) => {
                assert_eq!((found, position), ('é', 0));
            }
            other => panic!("unexpected {other:?}"),
        }
        match ToolName::new("ab c") {
            Err(PluginError::InvalidToolNameCharacter { position, .. }) => assert_eq!(position, 2),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn the_limit_is_inclusive() {
        assert!(ToolName::new("x".repeat(ToolName::MAX_LEN)).is_ok());
        assert!(matches!(
            ToolName::new("x".repeat(ToolName::MAX_LEN + 1)),
            Err(PluginError::ToolNameTooLong { len: 65, .. })
        ));
    }

    #[test]
    fn names_round_trip_through_serde_and_reject_invalid() {
        let name: ToolName = serde_json::from_str("\"read_file\"").expect("valid");
        assert_eq!(
            serde_json::to_string(&name).expect("serializes"),
            "\"read_file\""
        );
        assert!(serde_json::from_str::<ToolName>("\"bad name\"").is_err());
    }
}
