//! Telling text from binary, and counting lines.

/// How many leading bytes are inspected for a NUL byte (as git and ripgrep do).
const SNIFF_BYTES: usize = 8 * 1024;

/// Why some bytes are not text a tool can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotText {
    /// A NUL byte at this offset: almost surely a binary file.
    Nul(usize),
    /// Invalid UTF-8 starting at this offset.
    InvalidUtf8(usize),
}

/// Decodes `bytes` as UTF-8 text, refusing binary-looking data.
///
/// `cut` says the bytes stop before the end of the file, so an incomplete
/// character at the very end is dropped rather than reported as invalid.
pub(crate) fn decode_text(bytes: &[u8], cut: bool) -> Result<&str, NotText> {
    let sniff = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if let Some(at) = sniff.iter().position(|b| *b == 0) {
        return Err(NotText::Nul(at));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) if cut && e.error_len().is_none() => {
            // An incomplete character at the cut: keep the valid prefix.
            Ok(std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default())
        }
        Err(e) => Err(NotText::InvalidUtf8(e.valid_up_to())),
    }
}

/// The number of lines in `text`: newline-terminated lines, plus a last line
/// without a newline. An empty text has no lines.
pub(crate) fn count_lines(text: &str) -> u64 {
    let newlines = text.bytes().filter(|b| *b == b'\n').count() as u64;
    if text.is_empty() || text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

/// `text` cut to at most `max_chars` characters, with `…` when cut.
pub(crate) fn clip_line(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_binary_and_invalid_utf8_are_told_apart() {
        assert_eq!(decode_text(b"hello\n", false), Ok("hello\n"));
        assert_eq!(decode_text(b"ab\0cd", false), Err(NotText::Nul(2)));
        assert_eq!(
            decode_text(b"ab\xffcd", false),
            Err(NotText::InvalidUtf8(2))
        );
    }

    #[test]
    fn an_incomplete_character_at_a_cut_is_dropped() {
        let text = "é".as_bytes();
        assert_eq!(decode_text(&text[..1], true), Ok(""));
        assert_eq!(decode_text(&text[..1], false), Err(NotText::InvalidUtf8(0)));
    }

    #[test]
    fn lines_are_counted_like_wc_plus_an_unterminated_last_line() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
        assert_eq!(count_lines("\n\n"), 2);
    }

    #[test]
    fn long_lines_are_clipped_on_a_character_boundary() {
        assert_eq!(clip_line("héllo", 2), "hé…");
        assert_eq!(clip_line("hé", 2), "hé");
    }
}
