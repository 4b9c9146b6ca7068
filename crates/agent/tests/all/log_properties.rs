//! Properties of the session log and of escaping, over generated input: a
//! crash at any byte leaves a readable log, any one-byte edit is caught, no
//! unsafe character survives escaping.

use std::sync::Arc;

use proptest::prelude::*;
use tack_agent::{
    Event, EventBus, LogReadError, SessionLog, TurnEndReason, escape_block, escape_line,
    is_unsafe_char, read_log,
};

/// The bytes of a log of `texts` as alternating user/assistant records and a
/// `turn/end`.
fn log_bytes(texts: &[String]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let bus = EventBus::new(Some(Arc::new(SessionLog::create(&path).unwrap())));
    for (i, text) in texts.iter().enumerate() {
        let text = text.clone();
        bus.emit(if i % 2 == 0 {
            Event::User { text }
        } else {
            Event::Assistant { text }
        })
        .unwrap();
    }
    bus.emit(Event::TurnEnd {
        reason: TurnEndReason::Answered,
        steps: 1,
    })
    .unwrap();
    std::fs::read(&path).unwrap()
}

fn read_bytes(bytes: &[u8]) -> Result<tack_agent::LogContents, LogReadError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, bytes).unwrap();
    read_log(&path)
}

fn texts() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(any::<String>(), 1..5)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A crash can stop the writer after any byte: what is left reads back
    /// (a torn last line is a warning), with every whole record kept.
    #[test]
    fn a_log_cut_at_any_byte_reads_back(texts in texts(), cut in any::<prop::sample::Index>()) {
        let bytes = log_bytes(&texts);
        let at = 1 + cut.index(bytes.len());
        let kept = &bytes[..at];
        // Whole records: lines whose last byte before the feed survived.
        let mut end = 0;
        let whole = bytes
            .split(|b| *b == b'\n')
            .filter(|l| {
                end += l.len() + 1;
                !l.is_empty() && end - 1 <= at
            })
            .count();
        match read_bytes(kept) {
            Ok(read) => prop_assert_eq!(read.records.len(), whole),
            // Not one whole record is left: nothing to verify, refused.
            Err(LogReadError::Invalid { breaks, .. }) => {
                prop_assert_eq!(whole, 0);
                prop_assert!(breaks[0].reason.contains("no whole record"));
            }
            Err(e) => prop_assert!(false, "{}", e),
        }
    }

    /// Changing any one character of a line (its feeds kept) is caught.
    #[test]
    fn any_one_byte_edit_is_caught(texts in texts(), at in any::<prop::sample::Index>(), to in 0x20u8..0x7f) {
        let mut bytes = log_bytes(&texts);
        let ascii: Vec<usize> = (0..bytes.len())
            .filter(|&i| bytes[i].is_ascii() && bytes[i] != b'\n' && bytes[i] != to)
            .collect();
        let i = ascii[at.index(ascii.len())];
        bytes[i] = to;
        let is_invalid = matches!(read_bytes(&bytes), Err(LogReadError::Invalid { .. }));
        prop_assert!(is_invalid, "edit at byte {} to {:?} not caught", i, to as char);
    }

    /// No unsafe character survives escaping; a block's later lines are
    /// indented.
    #[test]
    fn escaping_leaves_nothing_unsafe(text in any::<String>()) {
        let line = escape_line(&text);
        prop_assert!(!line.chars().any(is_unsafe_char));
        let block = escape_block(&text, "  ");
        for (i, l) in block.split('\n').enumerate() {
            prop_assert!(!l.chars().any(|c| c != '\t' && is_unsafe_char(c)));
            prop_assert!(i == 0 || l.starts_with("  "));
        }
    }
}
