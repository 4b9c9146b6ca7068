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

/// [`decode_text`] for a file read in chunks, with the same verdicts at the
/// same offsets: a NUL byte in the first [`SNIFF_BYTES`] bytes wins over
/// invalid UTF-8 anywhere, and an incomplete character at the end is
/// dropped only when the bytes were cut before the end of the file.
#[derive(Debug, Default)]
pub(crate) struct TextCheck {
    /// Bytes accepted so far: the file offset of the next chunk.
    offset: u64,
    /// The offset of the first invalid byte, held back until the NUL sniff
    /// is complete (a NUL there would be the verdict instead).
    invalid: Option<u64>,
}

impl TextCheck {
    /// A check at the start of a file.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Checks the next `chunk` (it starts where the accepted bytes end) and
    /// returns how many of its bytes are whole characters: the caller uses
    /// those, and starts its next chunk right after them, so a character
    /// split between two reads is read again whole. `last` says no chunk
    /// follows; `cut` says the file goes on after this chunk all the same
    /// (as `decode_text`'s `cut`).
    pub(crate) fn check(&mut self, chunk: &[u8], last: bool, cut: bool) -> Result<usize, NotText> {
        let at = |offset: u64| usize::try_from(offset).unwrap_or(usize::MAX);
        let sniff = SNIFF_BYTES as u64;
        if self.offset < sniff {
            let window = (sniff - self.offset).min(chunk.len() as u64) as usize;
            if let Some(i) = chunk[..window].iter().position(|b| *b == 0) {
                return Err(NotText::Nul(at(self.offset) + i));
            }
        }
        let whole = if self.invalid.is_some() {
            chunk.len()
        } else {
            match std::str::from_utf8(chunk) {
                Ok(_) => chunk.len(),
                // An incomplete character at the end: whole in the next
                // chunk, or dropped at a cut, as `decode_text` drops it.
                Err(e) if e.error_len().is_none() && (!last || cut) => e.valid_up_to(),
                Err(e) => {
                    self.invalid = Some(self.offset + e.valid_up_to() as u64);
                    chunk.len()
                }
            }
        };
        self.offset += whole as u64;
        match self.invalid {
            Some(invalid) if last || self.offset >= sniff => Err(NotText::InvalidUtf8(at(invalid))),
            _ => Ok(whole),
        }
    }
}

/// How many newline bytes `bytes` holds.
pub(crate) fn count_newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|b| **b == b'\n').count() as u64
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
    use proptest::prelude::Strategy;

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

    /// `TextCheck` over `bytes` in chunks of `size`, as read_file feeds it:
    /// each chunk starts after the whole characters of the one before.
    fn check_in_chunks(bytes: &[u8], size: usize, cut: bool) -> Result<usize, NotText> {
        let mut check = TextCheck::new();
        let mut pos = 0;
        loop {
            let end = (pos + size).min(bytes.len());
            let last = end == bytes.len();
            let whole = check.check(&bytes[pos..end], last, cut && last)?;
            pos += whole;
            if last {
                return Ok(pos);
            }
            assert!(whole > 0, "no progress at {pos}");
        }
    }

    #[test]
    fn a_chunked_check_finds_what_decode_text_finds() {
        let nul_late = [b"\xff".as_slice(), &[b'a'; 100], b"\0"].concat();
        for (bytes, cut) in [
            (b"hello\n".as_slice(), false),
            ("ééé\n€€".as_bytes(), false),
            (b"ab\0cd", false),
            (b"ab\xffcd", false),
            ("aé".as_bytes(), false),
            (&"aé".as_bytes()[..2], false),
            (&"aé".as_bytes()[..2], true),
            (&nul_late, false),
        ] {
            let whole = decode_text(bytes, cut).map(str::len);
            for size in 4..=9 {
                assert_eq!(
                    check_in_chunks(bytes, size, cut),
                    whole,
                    "{bytes:?} in chunks of {size}"
                );
            }
        }
    }

    #[test]
    fn a_nul_in_the_sniffed_bytes_wins_over_earlier_invalid_utf8() {
        let mut bytes = vec![b'a'; SNIFF_BYTES + 10];
        bytes[3] = 0xff;
        bytes[SNIFF_BYTES - 1] = 0;
        assert_eq!(
            decode_text(&bytes, false),
            Err(NotText::Nul(SNIFF_BYTES - 1))
        );
        assert_eq!(
            check_in_chunks(&bytes, 1000, false),
            Err(NotText::Nul(SNIFF_BYTES - 1))
        );
        // Past the sniffed bytes a NUL is text; the invalid byte is the verdict.
        bytes[SNIFF_BYTES - 1] = b'a';
        bytes[SNIFF_BYTES + 1] = 0;
        assert_eq!(
            check_in_chunks(&bytes, 1000, false),
            Err(NotText::InvalidUtf8(3))
        );
    }

    proptest::proptest! {
        #[test]
        fn chunked_checks_agree_with_decode_text(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    8 => proptest::string::string_regex("[a-z\n]{0,6}").unwrap().prop_map(String::into_bytes),
                    4 => proptest::string::string_regex("[é€😀]{1,3}").unwrap().prop_map(String::into_bytes),
                    1 => proptest::collection::vec(proptest::num::u8::ANY, 1..3),
                ],
                0..30,
            ),
            size in 4usize..20,
            cut in proptest::bool::ANY,
        ) {
            let bytes = parts.concat();
            let whole = decode_text(&bytes, cut).map(str::len);
            proptest::prop_assert_eq!(check_in_chunks(&bytes, size, cut), whole);
        }
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
