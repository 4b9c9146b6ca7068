//! Capping long text for the model while keeping its head and tail.

use std::borrow::Cow;

/// Caps `text` at about `max_chars` characters by cutting its middle: the
/// head and the tail are kept (where errors and summaries usually are), with a
/// marker in between that says how many characters were cut. Text within the
/// cap is returned unchanged. Cuts fall on character boundaries.
///
/// ```
/// use tack_tools::cap_middle;
/// assert_eq!(cap_middle("short", 100), "short");
/// let long = "a".repeat(500) + &"z".repeat(500);
/// let capped = cap_middle(&long, 100);
/// assert!(capped.starts_with("aaaa") && capped.ends_with("zzzz"));
/// assert!(capped.contains("900 characters cut"));
/// ```
pub fn cap_middle(text: &str, max_chars: usize) -> Cow<'_, str> {
    let total = text.chars().count();
    if total <= max_chars {
        return Cow::Borrowed(text);
    }
    let head_chars = max_chars / 2;
    let tail_chars = max_chars - head_chars;
    let cut = total - head_chars - tail_chars;
    let head_end = byte_index(text, head_chars);
    let tail_start = byte_index(text, total - tail_chars);
    Cow::Owned(format!(
        "{}\n\n[… {cut} characters cut from the middle of this output (it had {total}); \
         the start and the end are shown. Re-run with a narrower command, or filter it \
         (`| head`, `| tail`, `| grep`), to see the rest …]\n\n{}",
        &text[..head_end],
        &text[tail_start..],
    ))
}

/// The byte index of the `chars`-th character of `text` (its length past the end).
fn byte_index(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn text_within_the_cap_is_untouched() {
        assert!(matches!(cap_middle("abc", 3), Cow::Borrowed("abc")));
    }

    #[test]
    fn the_marker_counts_the_cut_characters() {
        let capped = cap_middle("0123456789", 4);
        assert!(capped.starts_with("01\n"), "{capped}");
        assert!(capped.ends_with("\n89"), "{capped}");
        assert!(capped.contains("6 characters cut"), "{capped}");
    }

    proptest! {
        #[test]
        fn head_and_tail_are_kept_whatever_the_characters(text in "\\PC{0,300}", cap in 0usize..200) {
            let capped = cap_middle(&text, cap);
            let total = text.chars().count();
            if total <= cap {
                prop_assert_eq!(capped.as_ref(), text.as_str());
            } else {
                let head: String = text.chars().take(cap / 2).collect();
                let tail: String = text.chars().skip(total - (cap - cap / 2)).collect();
                prop_assert!(capped.starts_with(&head));
                prop_assert!(capped.ends_with(&tail));
                let marker = format!("[… {} characters cut", total - cap);
                prop_assert!(capped.contains(&marker));
            }
        }
    }
}
