//! Content blocks: what the model reads.

use std::fmt;
use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use smallvec::SmallVec;

/// One block of model-visible content, shaped like MCP's content types.
///
/// ```
/// use tack_core::tool::ContentBlock;
/// let block = ContentBlock::text("hello");
/// assert_eq!(block.as_text(), Some("hello"));
/// assert_eq!(
///     serde_json::to_value(&block).unwrap(),
///     serde_json::json!({"type": "text", "text": "hello"})
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// e.g. `image/png`.
        mime_type: String,
    },
    /// Audio, base64-encoded (MCP's `audio` content). Model APIs that take
    /// no audio in a tool result get the block as JSON text.
    Audio {
        /// Base64 data.
        data: String,
        /// e.g. `audio/wav`.
        mime_type: String,
    },
    /// Structured JSON.
    Json {
        /// The value.
        value: Value,
    },
    /// A resource (a file, a URL) by reference, with its text when it has some.
    Resource {
        /// Where the resource lives.
        uri: String,
        /// Its media type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Its text contents, when embedded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }

    /// A JSON block.
    pub fn json(value: Value) -> Self {
        ContentBlock::Json { value }
    }

    /// An image block from base64 data.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block from base64 data.
    ///
    /// ```
    /// use tack_core::tool::ContentBlock;
    /// let block = ContentBlock::audio("UklGRg==", "audio/wav");
    /// assert_eq!(
    ///     serde_json::to_value(&block).unwrap(),
    ///     serde_json::json!({"type": "audio", "data": "UklGRg==", "mime_type": "audio/wav"})
    /// );
    /// ```
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text } => Some(text),
            _ => None,
        }
    }
}

/// The text blocks of `content` joined with newlines (see [`Content::joined_text`]).
pub(crate) fn joined_text(content: &[ContentBlock]) -> String {
    let mut out = String::new();
    for text in content.iter().filter_map(ContentBlock::as_text) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(text);
    }
    out
}

/// The content blocks of one outcome, in order: what the model reads.
///
/// A list like a `Vec<ContentBlock>` (it derefs to a slice, and converts
/// from and to a `Vec`), which keeps one block inline: most outcomes have
/// exactly one, and they then need no allocation for the list. It
/// serializes as a JSON array of blocks.
///
/// ```
/// use tack_core::tool::{Content, ContentBlock};
/// let mut content = Content::from(ContentBlock::text("a"));
/// content.push(ContentBlock::text("b"));
/// assert_eq!(content.len(), 2);
/// assert_eq!(content, vec![ContentBlock::text("a"), ContentBlock::text("b")]);
/// assert_eq!(
///     serde_json::to_value(&content).unwrap(),
///     serde_json::json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
/// );
/// let text: Content = vec![ContentBlock::text("c")].into();
/// assert_eq!(text.first().and_then(ContentBlock::as_text), Some("c"));
/// ```
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Content(SmallVec<[ContentBlock; 1]>);

impl Content {
    /// No content.
    pub fn new() -> Self {
        Self::default()
    }

    /// The text blocks joined with newlines (non-text blocks skipped).
    ///
    /// ```
    /// use tack_core::tool::{Content, ContentBlock};
    /// let content = Content::from(vec![
    ///     ContentBlock::text("a"),
    ///     ContentBlock::json(serde_json::json!(1)),
    ///     ContentBlock::text("b"),
    /// ]);
    /// assert_eq!(content.joined_text(), "a\nb");
    /// ```
    pub fn joined_text(&self) -> String {
        joined_text(self)
    }

    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::from(ContentBlock::text(text))
    }

    /// Appends a block.
    pub fn push(&mut self, block: ContentBlock) {
        self.0.push(block);
    }

    /// Removes every block.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// Keeps only the blocks `keep` returns `true` for.
    pub fn retain(&mut self, mut keep: impl FnMut(&ContentBlock) -> bool) {
        self.0.retain(|block| keep(block));
    }

    /// The blocks as a `Vec`.
    pub fn into_vec(self) -> Vec<ContentBlock> {
        self.0.into_vec()
    }
}

impl fmt::Debug for Content {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

impl Deref for Content {
    type Target = [ContentBlock];

    fn deref(&self) -> &[ContentBlock] {
        &self.0
    }
}

impl DerefMut for Content {
    fn deref_mut(&mut self) -> &mut [ContentBlock] {
        &mut self.0
    }
}

impl From<ContentBlock> for Content {
    fn from(block: ContentBlock) -> Self {
        Self(smallvec::smallvec![block])
    }
}

impl From<Vec<ContentBlock>> for Content {
    fn from(blocks: Vec<ContentBlock>) -> Self {
        Self(SmallVec::from_vec(blocks))
    }
}

impl From<&[ContentBlock]> for Content {
    fn from(blocks: &[ContentBlock]) -> Self {
        blocks.iter().cloned().collect()
    }
}

impl<const N: usize> From<[ContentBlock; N]> for Content {
    fn from(blocks: [ContentBlock; N]) -> Self {
        blocks.into_iter().collect()
    }
}

impl From<Content> for Vec<ContentBlock> {
    fn from(content: Content) -> Self {
        content.into_vec()
    }
}

impl FromIterator<ContentBlock> for Content {
    fn from_iter<I: IntoIterator<Item = ContentBlock>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl Extend<ContentBlock> for Content {
    fn extend<I: IntoIterator<Item = ContentBlock>>(&mut self, iter: I) {
        self.0.extend(iter);
    }
}

impl IntoIterator for Content {
    type Item = ContentBlock;
    type IntoIter = smallvec::IntoIter<[ContentBlock; 1]>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Content {
    type Item = &'a ContentBlock;
    type IntoIter = std::slice::Iter<'a, ContentBlock>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl PartialEq<Vec<ContentBlock>> for Content {
    fn eq(&self, other: &Vec<ContentBlock>) -> bool {
        self[..] == other[..]
    }
}

impl PartialEq<Content> for Vec<ContentBlock> {
    fn eq(&self, other: &Content) -> bool {
        self[..] == other[..]
    }
}

impl PartialEq<[ContentBlock]> for Content {
    fn eq(&self, other: &[ContentBlock]) -> bool {
        self[..] == *other
    }
}

impl<const N: usize> PartialEq<[ContentBlock; N]> for Content {
    fn eq(&self, other: &[ContentBlock; N]) -> bool {
        self[..] == other[..]
    }
}
