//! HTML escaping: everything the model, a tool or a log wrote is text.

/// `text` with `&`, `<`, `>`, `"` and `'` as character references, and
/// control characters (but line feeds, carriage returns and tabs) as `\u{…}` escapes: safe in
/// element content and in quoted attribute values.
///
/// ```
/// assert_eq!(tack_ui::escape_html("<script>a & 'b'</script>"), "&lt;script&gt;a &amp; &#39;b&#39;&lt;/script&gt;");
/// ```
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\r' | '\t' => out.push(c),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// At most `max` characters of `text`, with a note of how many were left out.
pub(crate) fn clipped(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let left = text[cut..].chars().count();
            format!("{}\n… ({left} more characters)", &text[..cut])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_sent() {
        assert_eq!(escape_html("a\x1b[31mb\n"), "a\\u{1b}[31mb\n");
    }

    #[test]
    fn long_text_is_clipped_with_a_note() {
        assert_eq!(clipped("abcdef", 4), "abcd\n… (2 more characters)");
        assert_eq!(clipped("abc", 4), "abc");
    }
}
