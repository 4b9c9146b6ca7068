//! Why rendering a success value (or projecting its presentation meta) failed.

/// Why a tool's renderer or presentation-meta projector produced nothing.
/// The pipeline turns it into an `OUTPUT_INVALID` outcome.
///
/// A renderer written as a closure returns its own message with
/// `Err("why".into())` (or `?` on a `String` error).
///
/// ```
/// use serde_json::json;
/// use tack_core::tool::{ContentBlock, OutputSpec, RenderError};
/// let out = OutputSpec::new(json!({})).try_render(|_, v| {
///     v.as_str().map(|s| vec![ContentBlock::text(s)]).ok_or_else(|| "not text".into())
/// });
/// let err = out.render_value(&json!({}), &json!(1)).unwrap_err();
/// assert_eq!(err, RenderError::Failed { message: "not text".into() });
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    /// The renderer or projector returned an error.
    #[error("{message}")]
    Failed {
        /// What it said.
        message: String,
    },
    /// The renderer or projector panicked (contained).
    #[error("output.{stage} panicked: {message}")]
    Panicked {
        /// Which one: `render`, `presentation_meta` or `projection`.
        stage: &'static str,
        /// The panic message.
        message: String,
    },
}

impl From<String> for RenderError {
    fn from(message: String) -> Self {
        RenderError::Failed { message }
    }
}

impl From<&str> for RenderError {
    fn from(message: &str) -> Self {
        RenderError::Failed {
            message: message.to_owned(),
        }
    }
}
