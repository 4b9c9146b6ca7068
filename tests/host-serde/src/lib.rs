//! A host's own serde types, built next to every tack crate.
//!
//! serde_json's `arbitrary_precision` feature makes every number that passes
//! through serde's internal buffer (untagged and internally tagged enums,
//! `#[serde(flatten)]`) arrive as a private map instead of a number, so the
//! types below stop deserializing; `preserve_order` changes the key order of
//! every `serde_json::Map` in the program. Cargo unifies features over the
//! whole build, so a single tack crate switching either on would change them
//! for the host. The tests in `tests/host_serde.rs` fail if one does:
//! `cargo test -p tack-host-serde --features serde_json/arbitrary_precision`
//! (or `serde_json/preserve_order`) shows it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// Linked, so the build unifies their features as a host's would.
use tack_agent as _;
use tack_code_mode as _;
use tack_permission as _;
use tack_pipeline as _;
use tack_restate as _;
use tack_sandbox as _;
use tack_timeout as _;
use tack_tools as _;

/// An untagged enum whose variants differ by the JSON type of a number.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Budget {
    /// A whole number of tokens.
    Tokens(u64),
    /// A share of the context window.
    Share(f64),
    /// A named preset.
    Preset(String),
}

/// Sampling settings, flattened into [`Request`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Sampling {
    /// The temperature.
    pub temperature: f64,
    /// The most tokens to produce.
    pub max_tokens: u32,
}

/// A request with flattened settings and an untagged field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Request {
    /// The prompt.
    pub prompt: String,
    /// The budget.
    pub budget: Budget,
    /// The sampling settings, at the same level as the other fields.
    #[serde(flatten)]
    pub sampling: Sampling,
}
