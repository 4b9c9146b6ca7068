//! One page of a file too large to hold in memory, found in a single pass
//! over its bytes, chunk by chunk.

use crate::text::count_newlines;

/// Where the scan is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Skipping lines before the page's first.
    Seek,
    /// Collecting the page.
    Collect,
    /// The page is complete. `Some(true)`: a line did not fit the byte cap,
    /// so the page stops before the end of the file. `None`: it stopped at
    /// its line limit, at file offset `page_end`; it stops before the end of
    /// the file if more bytes were scanned.
    Done(Option<bool>),
}

/// A page of lines found by a scan: what `read_file`'s in-memory `page`
/// returns for the whole text, computed from the same bytes fed in chunks.
///
/// Memory: the page, at most `max_bytes` bytes; the chunks are not kept.
#[derive(Debug)]
pub(crate) struct PageScan {
    start: u64,
    limit: u64,
    max_bytes: usize,
    /// The number of the line the next byte belongs to (while seeking).
    line: u64,
    /// Bytes fed so far.
    scanned: u64,
    /// Newlines fed so far.
    newlines: u64,
    /// The last byte fed, if any.
    last_byte: Option<u8>,
    phase: Phase,
    /// The page so far: complete lines, then part of the current line.
    page: Vec<u8>,
    /// Bytes of `page` that are complete lines.
    complete: usize,
    /// Complete lines in `page`.
    lines: u64,
    /// The file offset where the page ended at its line limit.
    page_end: u64,
}

/// What a scan found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ScannedPage {
    /// The page's bytes: whole lines, or the start of one line cut at the
    /// byte cap on a character boundary.
    pub(crate) content: Vec<u8>,
    /// How many lines the page has (a cut line counts as one).
    pub(crate) lines: u64,
    /// Whether the file goes on after the page.
    pub(crate) truncated: bool,
    /// How many lines the file has, as `count_lines` counts them.
    pub(crate) total_lines: u64,
}

impl PageScan {
    /// A scan for the page of at most `limit` lines and `max_bytes` bytes
    /// starting at line `start` (1-based), as `page(text, start, limit,
    /// max_bytes)` cuts it.
    pub(crate) fn new(start: u64, limit: u64, max_bytes: usize) -> Self {
        Self {
            start,
            limit,
            max_bytes,
            line: 1,
            scanned: 0,
            newlines: 0,
            last_byte: None,
            phase: Phase::Seek,
            page: Vec::new(),
            complete: 0,
            lines: 0,
            page_end: 0,
        }
    }

    /// Feeds the next bytes of the file (they continue the bytes fed before).
    pub(crate) fn feed(&mut self, chunk: &[u8]) {
        self.newlines += count_newlines(chunk);
        if let Some(last) = chunk.last() {
            self.last_byte = Some(*last);
        }
        let mut i = 0;
        while i < chunk.len() {
            match self.phase {
                Phase::Seek if self.line >= self.start => self.phase = Phase::Collect,
                Phase::Seek => {
                    let rest = &chunk[i..];
                    let skip = self.start - self.line;
                    if count_newlines(rest) < skip {
                        self.line += count_newlines(rest);
                        i = chunk.len();
                    } else {
                        // The page starts after the `skip`th newline of `rest`.
                        let nth = usize::try_from(skip - 1).unwrap_or(usize::MAX);
                        let at = rest
                            .iter()
                            .enumerate()
                            .filter(|(_, b)| **b == b'\n')
                            .nth(nth)
                            .map_or(rest.len(), |(at, _)| at + 1);
                        self.line = self.start;
                        i += at;
                    }
                }
                Phase::Collect => i = self.collect(chunk, i),
                Phase::Done(_) => break,
            }
        }
        self.scanned += chunk.len() as u64;
    }

    /// Collects the line part `chunk[from..]` up to its first newline into
    /// the page; returns where it stopped.
    fn collect(&mut self, chunk: &[u8], from: usize) -> usize {
        let rest = &chunk[from..];
        let (len, ends_line) = match rest.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (rest.len(), false),
        };
        let part = &rest[..len];
        if self.page.len() + part.len() > self.max_bytes {
            if self.lines == 0 {
                // One line longer than a page: its start, cut on a
                // character boundary.
                let room = self.max_bytes - self.page.len();
                self.page.extend_from_slice(&part[..room]);
                if let Err(e) = std::str::from_utf8(&self.page) {
                    self.page.truncate(e.valid_up_to());
                }
                self.lines = 1;
            } else {
                self.page.truncate(self.complete);
            }
            self.phase = Phase::Done(Some(true));
            return chunk.len();
        }
        self.page.extend_from_slice(part);
        if ends_line {
            self.lines += 1;
            self.complete = self.page.len();
            if self.lines >= self.limit {
                self.page_end = self.scanned + (from + len) as u64;
                self.phase = Phase::Done(None);
            }
        }
        from + len
    }

    /// The page, once every byte of the file has been fed.
    pub(crate) fn finish(mut self) -> ScannedPage {
        let total_lines = self.newlines + u64::from(self.last_byte.is_some_and(|b| b != b'\n'));
        let truncated = match self.phase {
            Phase::Seek | Phase::Collect => {
                // The file ended inside the page: a last line without a
                // newline is part of it.
                if self.page.len() > self.complete {
                    self.lines += 1;
                }
                false
            }
            Phase::Done(Some(truncated)) => truncated,
            Phase::Done(None) => self.scanned > self.page_end,
        };
        ScannedPage {
            content: self.page,
            lines: self.lines,
            truncated,
            total_lines,
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// Scans `text` in chunks of `size` bytes (the last may be shorter).
    fn scan(text: &str, start: u64, limit: u64, max_bytes: usize, size: usize) -> ScannedPage {
        let mut scan = PageScan::new(start, limit, max_bytes);
        for chunk in text.as_bytes().chunks(size) {
            scan.feed(chunk);
        }
        scan.finish()
    }

    fn page(content: &str, lines: u64, truncated: bool, total_lines: u64) -> ScannedPage {
        ScannedPage {
            content: content.as_bytes().to_vec(),
            lines,
            truncated,
            total_lines,
        }
    }

    #[test]
    fn pages_are_cut_by_lines_then_by_bytes_in_any_chunking() {
        let text = "one\ntwo\nthree\nfour";
        for size in [1, 2, 3, 5, 64] {
            assert_eq!(scan(text, 1, 10, 100, size), page(text, 4, false, 4));
            assert_eq!(
                scan(text, 2, 2, 100, size),
                page("two\nthree\n", 2, true, 4)
            );
            assert_eq!(scan(text, 4, 10, 100, size), page("four", 1, false, 4));
            assert_eq!(scan(text, 1, 10, 9, size), page("one\ntwo\n", 2, true, 4));
            assert_eq!(scan("ééé\n", 1, 10, 3, size), page("é", 1, true, 1));
        }
    }

    #[test]
    fn a_page_at_its_limit_is_truncated_only_if_bytes_follow() {
        assert_eq!(scan("a\nb\n", 2, 1, 100, 1), page("b\n", 1, false, 2));
        assert_eq!(scan("a\nb\nc", 2, 1, 100, 1), page("b\n", 1, true, 3));
    }

    #[test]
    fn a_start_past_the_last_line_gives_an_empty_page() {
        assert_eq!(scan("a\nb\n", 3, 5, 100, 2), page("", 0, false, 2));
        assert_eq!(scan("", 1, 5, 100, 2), page("", 0, false, 0));
    }

    #[test]
    fn a_line_longer_than_the_chunks_is_collected_whole_or_cut() {
        let long = "x".repeat(50);
        let text = format!("a\n{long}\nb\n");
        assert_eq!(
            scan(&text, 2, 1, 100, 7),
            page(&format!("{long}\n"), 1, true, 3)
        );
        assert_eq!(scan(&text, 2, 5, 20, 7), page(&long[..20], 1, true, 3));
    }
}
