//! Reading a peer's newline-delimited JSON-RPC messages (the stdio
//! transport's framing) with a size limit.
//!
//! A line longer than the limit is never buffered: its bytes are dropped as
//! they arrive, and a small streaming scanner ([`Sniffer`]) keeps only what
//! is needed to answer for it — the top-level `id` and whether the message
//! is an answer (`result` / `error`) or a request (`method`). So a 32 MiB
//! answer costs the limit in memory, not 32 MiB, the stream stays in step
//! (the next line is read normally), and the request it answered can be
//! failed with a clear error instead of waiting forever.

use rmcp::model::RequestId;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The longest key the scanner records (`result` and `method` are 6).
const KEY_BYTES: usize = 8;
/// The longest `id` value the scanner records (quotes and escapes
/// included); a longer one is not usable.
const ID_BYTES: usize = 256;

/// Which top-level key a scanned value belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Id,
    Other,
}

/// What a streaming pass over one JSON-RPC message learned about it,
/// keeping a few hundred bytes at most however long the message is.
#[derive(Debug, Default)]
pub(crate) struct Sniffer {
    /// Nesting depth of objects and arrays.
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At depth 1 of an object, the next string is a key.
    expect_key: bool,
    /// Collecting a top-level key's bytes.
    collecting_key: bool,
    key: Vec<u8>,
    key_too_long: bool,
    /// The top-level key whose value comes next.
    current: Option<Key>,
    /// Collecting the top-level `id` value's bytes.
    capturing_id: bool,
    id_raw: Vec<u8>,
    id_too_long: bool,
    id_done: bool,
    seen_result: bool,
    seen_error: bool,
    seen_method: bool,
}

impl Sniffer {
    /// Scans the next bytes of the message.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.collecting_key {
                    self.collecting_key = false;
                    self.end_key();
                    return;
                }
            }
            if self.collecting_key {
                if self.key.len() < KEY_BYTES {
                    self.key.push(b);
                } else {
                    self.key_too_long = true;
                }
            }
            self.capture(b);
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.collecting_key = true;
                    self.key.clear();
                    self.key_too_long = false;
                } else {
                    self.capture(b);
                }
            }
            b'{' | b'[' => {
                self.capture(b);
                self.depth = self.depth.saturating_add(1);
                if self.depth == 1 {
                    self.expect_key = b == b'{';
                }
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.end_value();
                } else {
                    self.capture(b);
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if self.depth == 1 => {
                self.expect_key = false;
                if self.current == Some(Key::Id) && !self.id_done {
                    self.capturing_id = true;
                    self.id_raw.clear();
                }
            }
            b',' if self.depth == 1 => {
                self.end_value();
                self.expect_key = true;
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ => self.capture(b),
        }
    }

    fn end_key(&mut self) {
        let key = std::mem::take(&mut self.key);
        self.current = Some(Key::Other);
        if self.key_too_long {
            return;
        }
        match key.as_slice() {
            b"id" => self.current = Some(Key::Id),
            b"result" => self.seen_result = true,
            b"error" => self.seen_error = true,
            b"method" => self.seen_method = true,
            _ => {}
        }
    }

    fn end_value(&mut self) {
        if self.capturing_id {
            self.capturing_id = false;
            self.id_done = true;
        }
        self.current = None;
    }

    fn capture(&mut self, b: u8) {
        if self.capturing_id {
            if self.id_raw.len() < ID_BYTES {
                self.id_raw.push(b);
            } else {
                self.id_too_long = true;
            }
        }
    }

    /// The message's `id`, once its value has been read whole (a number or
    /// a string; `null` or anything else is no id).
    pub(crate) fn id(&self) -> Option<RequestId> {
        if !self.id_done || self.id_too_long {
            return None;
        }
        serde_json::from_slice(&self.id_raw).ok()
    }

    /// Whether the message is an answer: it has an `id` and a `result` or
    /// an `error`, and no `method`. (Known as soon as those keys have gone
    /// by, however long the rest is.)
    pub(crate) fn answer_id(&self) -> Option<RequestId> {
        if (self.seen_result || self.seen_error) && !self.seen_method {
            self.id()
        } else {
            None
        }
    }

    /// Whether a `method` key has gone by (a request or a notification).
    pub(crate) fn has_method(&self) -> bool {
        self.seen_method
    }
}

/// One step of reading.
#[derive(Debug)]
pub(crate) enum Frame {
    /// A whole line (without its newline) is in [`LineReader::line`].
    Line,
    /// An oversized message is known to answer the request `id` (reported
    /// once, as soon as it is known; the rest of it is still dropped).
    OversizedAnswer {
        /// The request it answers.
        id: RequestId,
    },
    /// An oversized message ended (its newline was read) without having
    /// been reported as an answer.
    OversizedEnded {
        /// Its `id`, when it had one.
        id: Option<RequestId>,
        /// Whether it had a `method` (a request, or a notification).
        has_method: bool,
        /// Its size.
        bytes: usize,
    },
    /// An oversized message went on past the give-up size without a
    /// newline: the stream cannot be brought back into step.
    GaveUp {
        /// The bytes dropped.
        bytes: usize,
    },
    /// The peer closed the stream.
    Eof,
    /// Reading failed.
    Io(std::io::Error),
}

/// The message being dropped.
#[derive(Debug, Default)]
struct Oversized {
    sniffer: Sniffer,
    bytes: usize,
    reported: bool,
}

/// Reads newline-delimited messages of at most `max` bytes from `read`.
///
/// Cancel-safe: every read step consumes the bytes it looked at and records
/// them (in the line buffer or the oversized state) before the next await,
/// so a `receive` dropped in a `select!` loses nothing.
#[derive(Debug)]
pub(crate) struct LineReader<R> {
    read: R,
    line: Vec<u8>,
    max: usize,
    give_up: usize,
    oversized: Option<Oversized>,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// A reader of lines of at most `max` bytes (the newline not counted);
    /// a longer line is dropped, and one that goes on past `give_up` bytes
    /// without a newline ends the reading.
    pub(crate) fn new(read: R, max: usize, give_up: usize) -> Self {
        Self {
            read,
            line: Vec::new(),
            max,
            give_up: give_up.max(max),
            oversized: None,
        }
    }

    /// The line read by the last [`Frame::Line`], without `\n` or `\r\n`.
    pub(crate) fn line(&self) -> &[u8] {
        let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        line.strip_suffix(b"\r").unwrap_or(line)
    }

    /// Clears the last line (keeping the buffer, unless a big line left it
    /// large).
    pub(crate) fn clear(&mut self) {
        self.line.clear();
        if self.line.capacity() > 1 << 20 {
            self.line.shrink_to(64 * 1024);
        }
    }

    /// Reads until something happens. Call [`clear`](Self::clear) after
    /// handling a [`Frame::Line`].
    pub(crate) async fn next(&mut self) -> Frame {
        loop {
            let available = match self.read.fill_buf().await {
                Ok(available) => available,
                Err(e) => return Frame::Io(e),
            };
            if available.is_empty() {
                // An unfinished line at the end is not a message.
                if let Some(over) = self.oversized.take()
                    && !over.reported
                {
                    return Frame::OversizedEnded {
                        id: over.sniffer.id(),
                        has_method: over.sniffer.has_method(),
                        bytes: over.bytes,
                    };
                }
                return Frame::Eof;
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let chunk = &available[..take];
            let message_bytes = take - usize::from(newline.is_some());
            if self.oversized.is_none() && self.line.len() + message_bytes > self.max {
                // It just went over: what was buffered is scanned, then dropped.
                let mut over = Oversized::default();
                over.sniffer.feed(&self.line);
                over.bytes = self.line.len();
                self.line.clear();
                self.oversized = Some(over);
            }
            let Some(over) = &mut self.oversized else {
                self.line.extend_from_slice(chunk);
                self.read.consume(take);
                if newline.is_some() {
                    return Frame::Line;
                }
                continue;
            };
            over.sniffer.feed(chunk);
            over.bytes += message_bytes;
            self.read.consume(take);
            if newline.is_some() {
                let over = self.oversized.take().unwrap_or_default();
                if over.reported {
                    continue;
                }
                if let Some(id) = over.sniffer.answer_id() {
                    return Frame::OversizedAnswer { id };
                }
                return Frame::OversizedEnded {
                    id: over.sniffer.id(),
                    has_method: over.sniffer.has_method(),
                    bytes: over.bytes,
                };
            }
            if !over.reported
                && let Some(id) = over.sniffer.answer_id()
            {
                over.reported = true;
                return Frame::OversizedAnswer { id };
            }
            if over.bytes > self.give_up {
                let bytes = over.bytes;
                self.oversized = None;
                return Frame::GaveUp { bytes };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use proptest::prelude::*;
    use rmcp::model::NumberOrString;

    fn sniff(text: &str) -> Sniffer {
        let mut s = Sniffer::default();
        s.feed(text.as_bytes());
        s
    }

    #[test]
    fn the_id_of_an_answer_is_found_wherever_it_is() {
        let s = sniff(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#);
        assert_eq!(s.answer_id(), Some(NumberOrString::Number(7)));
        let s = sniff(r#"{"result":{"id":1,"x":[{"id":2}]},"id":"a\"b","jsonrpc":"2.0"}"#);
        assert_eq!(s.answer_id(), Some(NumberOrString::String("a\"b".into())));
        let s = sniff(r#"{ "jsonrpc" : "2.0" , "error" : {"code":1} , "id" : 42 }"#);
        assert_eq!(s.answer_id(), Some(NumberOrString::Number(42)));
    }

    #[test]
    fn requests_and_notifications_are_not_answers() {
        let s = sniff(
            r#"{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"result":1}}"#,
        );
        assert_eq!(s.answer_id(), None);
        assert_eq!(s.id(), Some(NumberOrString::Number(3)));
        assert!(s.has_method());
        let s = sniff(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"id":5}}"#);
        assert_eq!(s.id(), None);
        assert!(s.has_method());
    }

    #[test]
    fn keys_inside_values_and_strings_do_not_count() {
        let s = sniff(r#"{"jsonrpc":"2.0","x":"\"id\":9,\"result\":1","y":{"id":3,"result":2}}"#);
        assert_eq!(s.id(), None);
        assert_eq!(s.answer_id(), None);
        let s = sniff(r#"{"id":null,"result":{}}"#);
        assert_eq!(s.answer_id(), None);
    }

    #[test]
    fn the_answer_is_known_before_the_message_ends() {
        let mut s = Sniffer::default();
        s.feed(br#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"xxxx"#);
        assert_eq!(s.answer_id(), Some(NumberOrString::Number(5)));
        // Before the id's value is complete it is not used.
        let mut s = Sniffer::default();
        s.feed(br#"{"result":{},"id":12"#);
        assert_eq!(s.answer_id(), None);
        s.feed(b"3}");
        assert_eq!(s.answer_id(), Some(NumberOrString::Number(123)));
    }

    proptest! {
        /// Split anywhere, the scan finds the same id.
        #[test]
        fn the_scan_does_not_depend_on_how_the_bytes_arrive(
            id in prop_oneof![any::<i64>().prop_map(|n| serde_json::json!(n)), "[a-z\"\\\\]{0,12}".prop_map(|s| serde_json::json!(s))],
            filler in "[a-z{}\\[\\]\":,\\\\ ]{0,64}",
            cuts in proptest::collection::vec(0usize..200, 0..6),
        ) {
            let message = serde_json::json!({"jsonrpc": "2.0", "result": {"text": filler}, "id": id});
            let text = serde_json::to_string(&message).unwrap();
            let bytes = text.as_bytes();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort_unstable();
            let mut s = Sniffer::default();
            let mut from = 0;
            for cut in cuts {
                s.feed(&bytes[from..cut]);
                from = cut;
            }
            s.feed(&bytes[from..]);
            let expected: RequestId = serde_json::from_value(id).unwrap();
            prop_assert_eq!(s.answer_id(), Some(expected));
        }
    }

    async fn frames(input: &[u8], max: usize, give_up: usize) -> Vec<String> {
        // A tiny read buffer: lines arrive in many pieces.
        frames_in(7, input, max, give_up).await
    }

    async fn frames_in(capacity: usize, input: &[u8], max: usize, give_up: usize) -> Vec<String> {
        let read = tokio::io::BufReader::with_capacity(capacity, input);
        let mut reader = LineReader::new(read, max, give_up);
        let mut out = Vec::new();
        loop {
            let frame = reader.next().await;
            // However long the lines, no more than the limit (and a read
            // buffer) is ever held.
            assert!(
                reader.line.capacity() <= 2 * (max + 7),
                "{}",
                reader.line.capacity()
            );
            match frame {
                Frame::Line => {
                    out.push(String::from_utf8(reader.line().to_vec()).unwrap());
                    reader.clear();
                }
                Frame::Eof => return out,
                Frame::Io(e) => panic!("{e}"),
                Frame::GaveUp { bytes } => {
                    out.push(format!("gave up after {bytes}"));
                    return out;
                }
                other => out.push(format!("{other:?}")),
            }
        }
    }

    #[tokio::test]
    async fn an_oversized_answer_is_reported_once_and_the_next_line_read() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{{\"text\":\"{}\"}}}}\n",
            "x".repeat(500)
        );
        let input = format!("{{\"a\":1}}\r\n{big}{{\"b\":2}}\n");
        let got = frames(input.as_bytes(), 100, 10_000).await;
        assert_eq!(
            got,
            [
                r#"{"a":1}"#,
                "OversizedAnswer { id: Number(4) }",
                r#"{"b":2}"#
            ]
        );
    }

    #[tokio::test]
    async fn a_line_of_exactly_the_limit_is_read() {
        let line = format!("\"{}\"", "y".repeat(98));
        let got = frames(format!("{line}\n").as_bytes(), 100, 1000).await;
        assert_eq!(got, [line.as_str()]);
        let got = frames(format!("{line}y\n").as_bytes(), 100, 1000).await;
        assert_eq!(
            got,
            ["OversizedEnded { id: None, has_method: false, bytes: 101 }"]
        );
    }

    #[tokio::test]
    async fn an_oversized_request_is_reported_with_its_id_at_its_end() {
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"roots/list\",\"params\":{{\"p\":\"{}\"}}}}\n{{}}\n",
            "z".repeat(300)
        );
        let got = frames(input.as_bytes(), 64, 10_000).await;
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(
            got[0].starts_with("OversizedEnded { id: Some(String(\"r1\")), has_method: true"),
            "{got:?}"
        );
        assert_eq!(got[1], "{}");
    }

    #[tokio::test]
    async fn a_line_that_never_ends_is_given_up_on() {
        let mut input = br#"{"jsonrpc":"2.0","id":9,"result":{"text":""#.to_vec();
        input.extend(std::iter::repeat_n(b'x', 5000));
        let got = frames(&input, 100, 1000).await;
        assert_eq!(got[0], "OversizedAnswer { id: Number(9) }");
        assert!(got[1].starts_with("gave up after 10"), "{got:?}");
        // Arriving in one piece past the give-up size, the answer is still
        // reported before the stream is given up.
        let got = frames_in(4096, &input, 100, 1000).await;
        assert_eq!(got[0], "OversizedAnswer { id: Number(9) }");
        assert!(got[1].starts_with("gave up after 50"), "{got:?}");
    }

    #[tokio::test]
    async fn an_oversized_answer_cut_off_by_the_end_of_the_stream_is_reported() {
        let mut input = br#"{"jsonrpc":"2.0","result":{"text":""#.to_vec();
        input.extend(std::iter::repeat_n(b'x', 500));
        input.extend(br#""},"id":3}"#);
        let got = frames(&input, 100, 100_000).await;
        assert_eq!(got, ["OversizedAnswer { id: Number(3) }"]);
        // Without a complete id it is only the end of a message.
        let got = frames(&input[..400], 100, 100_000).await;
        assert_eq!(
            got,
            ["OversizedEnded { id: None, has_method: false, bytes: 400 }"]
        );
    }
}
