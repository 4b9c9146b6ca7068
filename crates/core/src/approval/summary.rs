//! One-line, terminal-safe text about a call, for approval prompts and logs.

use std::fmt::Write as _;

use serde::Deserializer as _;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use crate::model::Arguments;

/// The longest summary, in characters (the ellipsis included).
const SUMMARY_MAX_CHARS: usize = 100;

/// See [`ApprovalRequest::escape_control`].
pub(crate) fn escape_control(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_escaped(&mut out, c);
    }
    out
}

/// Whether `c` is escaped by [`escape_control`].
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{2028}' | '\u{2029}' // line and paragraph separators
            | '\u{200e}' | '\u{200f}' | '\u{061c}' // directional marks
            | '\u{202a}'..='\u{202e}' // embeddings and overrides
            | '\u{2066}'..='\u{2069}' // isolates
        )
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if needs_escape(c) => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
        c => out.push(c),
    }
}

impl super::ApprovalRequest {
    /// The longest summary, in characters (the ellipsis included).
    pub const SUMMARY_MAX_CHARS: usize = SUMMARY_MAX_CHARS;

    /// `text` with every character that could drive a terminal or hide text
    /// escaped: control characters (C0, DEL, C1) as `\n`, `\r`, `\t` or
    /// `\u{1b}`, and the Unicode line separators and bidirectional controls as
    /// `\u{202e}` and the like. A backslash is kept as it is. The result is one
    /// line.
    ///
    /// ```
    /// use tack_core::policy::ApprovalRequest;
    /// assert_eq!(ApprovalRequest::escape_control("ls\n\u{1b}[2J"), r"ls\n\u{1b}[2J");
    /// assert_eq!(ApprovalRequest::escape_control("abc\u{202e}txt"), r"abc\u{202e}txt");
    /// assert_eq!(ApprovalRequest::escape_control("naïve"), "naïve");
    /// ```
    pub fn escape_control(text: &str) -> String {
        escape_control(text)
    }

    /// A short, single-line description of a call for a person deciding on it:
    /// `tool: gist`, where the gist is the first string argument (a command, a
    /// path, a pattern) or, when there is none, the arguments as compact JSON.
    /// "First" is in the value's key order; the pipeline picks it in the
    /// order the model wrote the arguments (`tack_core::host::summarize_execution`).
    ///
    /// Control characters are escaped ([`escape_control`](Self::escape_control)), and a summary longer
    /// than [`SUMMARY_MAX_CHARS`](Self::SUMMARY_MAX_CHARS) is cut with `…`. It is a label, not the whole
    /// story: whoever approves should be shown the arguments too.
    ///
    /// ```
    /// use serde_json::json;
    /// use tack_core::policy::ApprovalRequest;
    /// assert_eq!(ApprovalRequest::summarize_call("bash", &json!({"command": "ls -la"})), "bash: ls -la");
    /// assert_eq!(ApprovalRequest::summarize_call("bash", &json!({"command": "ls\nrm -rf /"})), r"bash: ls\nrm -rf /");
    /// assert_eq!(ApprovalRequest::summarize_call("count", &json!({"n": 3})), r#"count: {"n":3}"#);
    /// assert_eq!(ApprovalRequest::summarize_call("ping", &json!({})), "ping");
    /// let long = ApprovalRequest::summarize_call("bash", &json!({"command": "x".repeat(500)}));
    /// assert_eq!(long.chars().count(), ApprovalRequest::SUMMARY_MAX_CHARS);
    /// assert!(long.ends_with('…'));
    /// ```
    pub fn summarize_call(tool: &str, arguments: &Value) -> String {
        summarize(tool, arguments, None)
    }
}

/// [`ApprovalRequest::summarize_call`](super::ApprovalRequest::summarize_call)
/// of a call's [`Arguments`], the gist being the first string argument in the
/// order the model wrote them (the text's order).
pub(crate) fn summarize_arguments(tool: &str, arguments: &Arguments) -> String {
    summarize(tool, arguments.value(), first_string(arguments.text()))
}

/// The first top-level string member of the JSON object `text`, in text order.
fn first_string(text: &str) -> Option<String> {
    struct FirstString;
    impl<'de> Visitor<'de> for FirstString {
        type Value = Option<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut first = None;
            while let Some((_, value)) = map.next_entry::<IgnoredAny, Value>()? {
                if let (None, Value::String(text)) = (&first, value) {
                    first = Some(text);
                }
            }
            Ok(first)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_map(FirstString).ok().flatten()
}

fn summarize(tool: &str, arguments: &Value, first: Option<String>) -> String {
    let gist = match arguments {
        Value::Object(map) if map.is_empty() => None,
        Value::Object(map) => Some(first.unwrap_or_else(|| {
            map.values()
                .find_map(Value::as_str)
                .map_or_else(|| arguments.to_string(), str::to_owned)
        })),
        Value::Null => None,
        other => Some(other.to_string()),
    };
    let mut line = String::new();
    let mut count = 0;
    let text = match &gist {
        Some(gist) => format!("{tool}: {gist}"),
        None => tool.to_owned(),
    };
    let mut piece = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        piece.clear();
        push_escaped(&mut piece, c);
        let width = piece.chars().count();
        let room = SUMMARY_MAX_CHARS - count;
        // The last character fits only if nothing follows it; otherwise the
        // ellipsis needs a place.
        let fits = if chars.peek().is_some() {
            width < room
        } else {
            width <= room
        };
        if !fits {
            line.push('…');
            return line;
        }
        line.push_str(&piece);
        count += width;
    }
    line
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::approval::ApprovalRequest;

    #[test]
    fn escapes_c0_del_c1_separators_and_bidi_controls() {
        assert_eq!(
            escape_control("a\u{0}b\u{7f}c\u{85}d\u{2028}e\u{2067}f"),
            r"a\u{0}b\u{7f}c\u{85}d\u{2028}e\u{2067}f"
        );
        assert_eq!(escape_control(r"C:\dir"), r"C:\dir");
    }

    #[test]
    fn summaries_are_one_short_line_whatever_the_arguments() {
        let nasty = json!({"command": format!("{}\u{1b}[2K\r[tool:bash] -> ok", "\n".repeat(200))});
        let line = ApprovalRequest::summarize_call("bash", &nasty);
        assert!(!line.chars().any(needs_escape), "{line}");
        // 99: the next `\n` (two characters) no longer fits before the `…`.
        assert_eq!(line.chars().count(), SUMMARY_MAX_CHARS - 1);
        assert!(line.ends_with('…'));
        // An escape is never cut in half.
        assert!(line.trim_end_matches('…').ends_with(r"\n"), "{line}");
        let exact = "x".repeat(SUMMARY_MAX_CHARS - "t: ".len());
        assert_eq!(
            ApprovalRequest::summarize_call("t", &json!({ "a": exact })),
            format!("t: {exact}")
        );
        let over = format!("{exact}y");
        let cut = ApprovalRequest::summarize_call("t", &json!({ "a": over }));
        assert_eq!(cut.chars().count(), SUMMARY_MAX_CHARS);
        assert!(cut.ends_with("x…"), "{cut}");
    }

    #[test]
    fn the_gist_is_the_first_string_argument_in_the_models_order() {
        let args = Arguments::parse(r#"{"n": 1, "path": "src/main.rs", "content": "x"}"#).unwrap();
        assert_eq!(
            summarize_arguments("write_file", &args),
            "write_file: src/main.rs"
        );
        // From a value alone, the first in the value's key order.
        assert_eq!(
            ApprovalRequest::summarize_call("write_file", args.value()),
            "write_file: x"
        );
        assert_eq!(
            ApprovalRequest::summarize_call("t", &json!([1, 2])),
            "t: [1,2]"
        );
    }
}
