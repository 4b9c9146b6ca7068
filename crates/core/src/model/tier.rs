//! Tiers: what kind of side effect a tool has, for policies to read.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a tool may do to the world. Policies (the permission plugin's modes)
/// read it; the pipeline does not.
///
/// Ordered from least to most consequential, so `max` gives the stricter tier.
///
/// ```
/// use tack_core::tool::Tier;
/// assert!(Tier::ReadOnly < Tier::Writes);
/// assert_eq!(Tier::Writes.max(Tier::Network), Tier::Network);
/// assert_eq!(serde_json::to_string(&Tier::ReadOnly).unwrap(), "\"read_only\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Tier {
    /// Reads only (files, listings, searches).
    ReadOnly,
    /// Changes files in the workspace.
    Writes,
    /// Runs programs.
    Executes,
    /// Talks to the network.
    Network,
}

impl Tier {
    /// Whether the tool only reads.
    pub fn is_read_only(self) -> bool {
        self == Tier::ReadOnly
    }

    /// The wire name (`read_only`, `writes`, `executes`, `network`).
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::ReadOnly => "read_only",
            Tier::Writes => "writes",
            Tier::Executes => "executes",
            Tier::Network => "network",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
