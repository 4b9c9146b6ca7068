//! Deferred context: what the loop appends after a call's result.

use serde::{Deserialize, Deserializer, Serialize};

use super::content::ContentBlock;

/// Context a call asks the loop to append after its batch's results (never
/// mid-call): a text note, or whole content blocks (images included), with
/// the name of whoever deferred it when that matters to a reader.
///
/// Text converts into it, so `cx.defer_context("note")` stays the common
/// form:
///
/// ```
/// use tack_core::tool::{ContentBlock, DeferredContext};
///
/// let note = DeferredContext::from("the tests are slow");
/// assert_eq!(note.text(), "the tests are slow");
/// assert_eq!(note, "the tests are slow");
/// assert!(!note.has_images());
///
/// let shot = DeferredContext::blocks(vec![
///     ContentBlock::text("screenshot of the page"),
///     ContentBlock::image("iVBORw0KGgo=", "image/png"),
/// ])
/// .with_source("code-mode");
/// assert!(shot.has_images());
/// assert_eq!(shot.source(), Some("code-mode"));
///
/// // A text-only context serializes as a plain string; anything else as an object.
/// assert_eq!(serde_json::to_value(&note).unwrap(), serde_json::json!("the tests are slow"));
/// assert_eq!(serde_json::to_value(&shot).unwrap()["source"], "code-mode");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct DeferredContext {
    /// What the model reads.
    pub content: Vec<ContentBlock>,
    /// Who deferred it (a plugin's name), when recorded.
    pub source: Option<String>,
}

impl DeferredContext {
    /// A text context.
    pub fn text_note(text: impl Into<String>) -> Self {
        Self::blocks(vec![ContentBlock::text(text)])
    }

    /// A context of whole content blocks.
    pub fn blocks(content: Vec<ContentBlock>) -> Self {
        Self {
            content,
            source: None,
        }
    }

    /// Records who deferred it.
    #[must_use]
    pub fn with_source(mut self, source: impl Into<String>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// Who deferred it, when recorded.
    pub fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }

    /// Its text blocks joined with newlines (images and other blocks skipped).
    pub fn text(&self) -> String {
        super::content::joined_text(&self.content)
    }

    /// Whether it carries an image.
    pub fn has_images(&self) -> bool {
        self.content
            .iter()
            .any(|block| matches!(block, ContentBlock::Image { .. }))
    }

    /// Whether it is one text block with no source (what serializes as a
    /// plain string).
    fn is_plain_text(&self) -> bool {
        self.source.is_none() && matches!(self.content.as_slice(), [ContentBlock::Text { .. }])
    }
}

/// A context equals a text when its content is exactly that one text block
/// (its source is not compared).
impl PartialEq<str> for DeferredContext {
    fn eq(&self, other: &str) -> bool {
        matches!(self.content.as_slice(), [ContentBlock::Text { text }] if text == other)
    }
}

impl PartialEq<&str> for DeferredContext {
    fn eq(&self, other: &&str) -> bool {
        self == *other
    }
}

impl PartialEq<String> for DeferredContext {
    fn eq(&self, other: &String) -> bool {
        self == other.as_str()
    }
}

impl From<String> for DeferredContext {
    fn from(text: String) -> Self {
        Self::text_note(text)
    }
}

impl From<&str> for DeferredContext {
    fn from(text: &str) -> Self {
        Self::text_note(text)
    }
}

impl From<&String> for DeferredContext {
    fn from(text: &String) -> Self {
        Self::text_note(text.as_str())
    }
}

impl From<Vec<ContentBlock>> for DeferredContext {
    fn from(content: Vec<ContentBlock>) -> Self {
        Self::blocks(content)
    }
}

#[derive(Serialize, Deserialize)]
struct Blocks<'a> {
    content: std::borrow::Cow<'a, [ContentBlock]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Wire {
    Text(String),
    Blocks(Blocks<'static>),
}

impl Serialize for DeferredContext {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.is_plain_text() {
            return serializer.serialize_str(&self.text());
        }
        Blocks {
            content: std::borrow::Cow::Borrowed(&self.content),
            source: self.source.clone(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for DeferredContext {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Wire::deserialize(deserializer)? {
            Wire::Text(text) => Self::text_note(text),
            Wire::Blocks(blocks) => Self {
                content: blocks.content.into_owned(),
                source: blocks.source,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_both_wire_forms() {
        for context in [
            DeferredContext::from("plain"),
            DeferredContext::from("with source").with_source("p"),
            DeferredContext::blocks(vec![
                ContentBlock::text("a"),
                ContentBlock::image("AAAA", "image/png"),
            ]),
        ] {
            let json = serde_json::to_string(&context).unwrap();
            let back: DeferredContext = serde_json::from_str(&json).unwrap();
            assert_eq!(back, context, "{json}");
        }
    }

    #[test]
    fn text_skips_images() {
        let c = DeferredContext::blocks(vec![
            ContentBlock::text("a"),
            ContentBlock::image("AAAA", "image/png"),
            ContentBlock::text("b"),
        ]);
        assert_eq!(c.text(), "a\nb");
        assert!(c.has_images());
    }
}
