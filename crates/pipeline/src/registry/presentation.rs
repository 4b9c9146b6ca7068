//! How an agent's model is shown the tools: natively, or through `run_code`.

use std::fmt;
use std::str::FromStr;

/// The reserved name of the code-mode transport tool (defined once, in tack-core).
/// The reserved name of the code-mode transport tool (`run_code`).
pub const RUN_CODE: &str = tack_core::tool::ToolName::RUN_CODE;

/// How the tools are presented to an agent's model.
///
/// Under [`Code`](Presentation::Code) the model calls tools only from inside a
/// `run_code` program: a model-direct call of a native tool (one without a
/// parent token) is `UNKNOWN_TOOL` before any policy runs.
///
/// ```
/// use tack_pipeline::Presentation;
/// assert_eq!("code".parse::<Presentation>().unwrap(), Presentation::Code);
/// assert_eq!(Presentation::default(), Presentation::Native);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Presentation {
    /// Each tool is its own model-visible function (the default).
    #[default]
    Native,
    /// Only `run_code` is model-visible; tools are called from the program.
    Code,
    /// Both.
    Both,
}

impl Presentation {
    /// Whether model-direct calls of native tools are allowed.
    pub fn allows_direct_calls(self) -> bool {
        !matches!(self, Presentation::Code)
    }
}

impl fmt::Display for Presentation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Presentation::Native => "native",
            Presentation::Code => "code",
            Presentation::Both => "both",
        })
    }
}

/// An unknown presentation name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown presentation `{0}`: use native, code or both")]
pub struct UnknownPresentation(pub String);

impl FromStr for Presentation {
    type Err = UnknownPresentation;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "native" => Ok(Presentation::Native),
            "code" => Ok(Presentation::Code),
            "both" => Ok(Presentation::Both),
            other => Err(UnknownPresentation(other.to_owned())),
        }
    }
}
