//! `tools/post-execute`: what a listener decides about an outcome.

use serde_json::Value;

use crate::hook::Provenance;
use crate::model::{Content, ContentBlock, DeferredContext};

/// What `tools/post-execute` decided. Composable: a listener takes what `next`
/// returned and adds to it. Every change through these methods clears the
/// provenance, so the hook point stamps the listener that made it.
///
/// The pipeline applies it by the outcome's status:
///
/// | on a success | on a failure |
/// |---|---|
/// | replace content, replace value (revalidated, re-rendered), block with feedback, add context | replace content, add context — a failure never becomes a success |
///
/// ```
/// use tack_core::hooks::PostDecision;
/// use tack_core::tool::ContentBlock;
/// let d = PostDecision::accept()
///     .replace_content(vec![ContentBlock::text("[redacted]")])
///     .add_context("a secret was redacted from the last result");
/// assert!(!d.is_accept());
/// assert_eq!(d.context().len(), 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PostDecision {
    content: Option<Content>,
    value: Option<Value>,
    block: Option<String>,
    context: Vec<DeferredContext>,
    provenance: Option<Provenance>,
}

impl PostDecision {
    /// Keep the outcome as it is.
    pub fn accept() -> Self {
        Self::default()
    }

    /// Replace the model content.
    pub fn replace_content(mut self, content: impl Into<Content>) -> Self {
        self.content = Some(content.into());
        self.provenance = None;
        self
    }

    /// Replace the success value (validated against the output schema and
    /// re-rendered; ignored on a failure).
    pub fn replace_value(mut self, value: Value) -> Self {
        self.value = Some(value);
        self.provenance = None;
        self
    }

    /// Turn a success into a failure whose message is `feedback` (the work
    /// happened, but the model is told to reconsider).
    ///
    /// An empty (or blank) `feedback` is replaced by a default message that
    /// names the listener that blocked and says the result was withheld, so
    /// the model never receives an empty failure.
    pub fn block(mut self, feedback: impl Into<String>) -> Self {
        self.block = Some(feedback.into());
        self.provenance = None;
        self
    }

    /// Append context (text, or a [`DeferredContext`] of content blocks) after
    /// the result.
    pub fn add_context(mut self, message: impl Into<DeferredContext>) -> Self {
        self.context.push(message.into());
        self.provenance = None;
        self
    }

    /// Whether nothing is to change.
    pub fn is_accept(&self) -> bool {
        self.content.is_none()
            && self.value.is_none()
            && self.block.is_none()
            && self.context.is_empty()
    }

    /// The replacement content.
    pub fn content(&self) -> Option<&[ContentBlock]> {
        self.content.as_deref()
    }

    /// The replacement value.
    pub fn value(&self) -> Option<&Value> {
        self.value.as_ref()
    }

    /// The block feedback.
    pub fn blocked(&self) -> Option<&str> {
        self.block.as_deref()
    }

    /// The context to append.
    pub fn context(&self) -> &[DeferredContext] {
        &self.context
    }

    /// Who made the last change (stamped by the hook point).
    pub fn provenance(&self) -> Option<&Provenance> {
        self.provenance.as_ref()
    }

    pub(crate) fn provenance_slot(&mut self) -> Option<&mut Option<Provenance>> {
        Some(&mut self.provenance)
    }
}
