//! Making untrusted text safe to print on a terminal.
//!
//! Tool names, arguments, outputs and model text come from outside the host.
//! Printed raw, an ESC starts a terminal control sequence, a CR rewinds the
//! line and an LF starts a new one: together they can paint a fake
//! `[tool:bash] -> ok` line. The functions here replace every such character
//! with a visible escape.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` must not reach a terminal raw: C0 controls (tab and line feed
/// included), DEL, C1 controls, the Unicode line and paragraph separators,
/// and the bidirectional marks, embeddings, overrides and isolates (which
/// reorder what is shown).
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
        )
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if u32::from(c) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        c => {
            let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
        }
    }
}

/// `text` on one line: every unsafe character (see [`is_unsafe_char`]),
/// line feeds included, becomes a visible escape (`\n`, `\r`, `\t`, `\x1b`,
/// `\u{202e}`). Text without any is returned as is.
///
/// ```
/// use tack_agent::escape_line;
/// assert_eq!(escape_line("read_file"), "read_file");
/// assert_eq!(escape_line("x\n[tool:bash] -> ok"), "x\\n[tool:bash] -> ok");
/// assert_eq!(escape_line("\x1b[2K\rok"), "\\x1b[2K\\rok");
/// assert_eq!(escape_line("abc\u{202e}fed"), "abc\\u{202e}fed");
/// ```
pub fn escape_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe_char(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` as an indented block: line feeds are kept, but every line after
/// the first starts with `indent`, so no line of untrusted text can begin
/// where the renderer's own `[…]` prefixes do; tabs are kept; every other
/// unsafe character is escaped as in [`escape_line`].
///
/// ```
/// use tack_agent::escape_block;
/// assert_eq!(escape_block("one\ntwo", "  "), "one\n  two");
/// assert_eq!(escape_block("ok\n[tool:bash] -> ok\r", "  "), "ok\n  [tool:bash] -> ok\\r");
/// ```
pub fn escape_block(text: &str, indent: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => {
                out.push('\n');
                out.push_str(indent);
            }
            '\t' => out.push('\t'),
            c if is_unsafe_char(c) => push_escaped(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_c0_c1_and_bidi_character_is_escaped() {
        let unsafe_chars = (0u32..0x20)
            .chain([0x7f])
            .chain(0x80..0xa0)
            .chain([0x61c, 0x200e, 0x200f, 0x2028, 0x2029])
            .chain(0x202a..=0x202e)
            .chain(0x2066..=0x2069)
            .filter_map(char::from_u32);
        for c in unsafe_chars {
            let line = escape_line(&c.to_string()).into_owned();
            assert!(!line.chars().any(is_unsafe_char), "{c:?} -> {line:?}");
            assert!(line.starts_with('\\'), "{c:?} -> {line:?}");
            let block = escape_block(&format!("a{c}b"), "  ");
            let raw_ok = c == '\n' || c == '\t';
            assert_eq!(block.contains(c), raw_ok, "{c:?} -> {block:?}");
        }
    }

    #[test]
    fn ordinary_text_is_untouched() {
        for text in ["读文件 README.md", "C:\\path\\x1b", "emoji 🦀 and é", ""] {
            assert!(matches!(escape_line(text), Cow::Borrowed(_)));
            assert_eq!(escape_block(text, "  "), text);
        }
    }

    #[test]
    fn no_block_line_can_start_a_fake_record() {
        let text = "ok\n[tool:bash] -> ok\r\n\x1b[1A[assistant] done\u{85}[user] x";
        let block = escape_block(text, "  ");
        for (i, line) in block.lines().enumerate() {
            assert!(i == 0 || line.starts_with("  "), "{line:?}");
            assert!(!line.contains('\x1b') && !line.contains('\r'), "{line:?}");
        }
        assert_eq!(block.lines().count(), 3);
    }
}
