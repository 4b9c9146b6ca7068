//! Content blocks: what the model reads.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text } => Some(text),
            _ => None,
        }
    }
}

/// The text blocks of `content` joined with newlines (non-text blocks skipped).
///
/// ```
/// use tack_core::tool::{ContentBlock, joined_text};
/// let content = [ContentBlock::text("a"), ContentBlock::json(serde_json::json!(1)), ContentBlock::text("b")];
/// assert_eq!(joined_text(&content), "a\nb");
/// ```
pub fn joined_text(content: &[ContentBlock]) -> String {
    let mut out = String::new();
    for text in content.iter().filter_map(ContentBlock::as_text) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(text);
    }
    out
}
