//! The errors of rendering a success value (or projecting its presentation
//! meta): `OUTPUT_INVALID` tool errors whose kind tells a renderer that
//! returned an error from one that panicked.

use super::{ErrorCode, ToolError};

impl ToolError {
    /// `OUTPUT_INVALID`, kind `render_failed`: a renderer or projector
    /// returned `Err(message)`.
    pub(crate) fn render_failed(message: String) -> Self {
        Self::with_wire_code(ErrorCode::OutputInvalid, message).with_kind("render_failed")
    }

    /// `OUTPUT_INVALID`, kind `render_panicked`: the renderer or projector of
    /// `stage` (`render`, `presentation_meta` or `projection`) panicked with
    /// `message`.
    pub(crate) fn render_panicked(stage: &str, message: &str) -> Self {
        Self::with_wire_code(
            ErrorCode::OutputInvalid,
            format!("output.{stage} panicked: {message}"),
        )
        .with_kind("render_panicked")
    }
}
