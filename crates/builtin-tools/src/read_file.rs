//! `read_file`: a page of a text file, numbered like `cat -n`.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use tack_core::capability::{EntryKind, FileSystem};
use tack_core::context::ToolRunContext;
use tack_core::tool::{Content, Tier, Tool, ToolError};

use crate::line_scan::PageScan;
use crate::text::{NotText, TextCheck, count_lines, decode_text};

/// The arguments of `read_file`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// The file to read: relative to the workspace root, or absolute.
    pub path: String,
    /// The first line to return, counting from 1 (default 1). Use it with
    /// `limit` to page through a long file.
    #[serde(default, deserialize_with = "line_number")]
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// The most lines to return (default 2000).
    #[serde(default, deserialize_with = "line_count")]
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
}

/// Deserializes a positive whole number, with an error that names the argument.
fn positive(value: Option<Value>, name: &str, what: &str) -> Result<Option<u64>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Ok(Some(n)),
            _ => Err(format!("`{name}` must be {what}; got {v}")),
        },
    }
}

fn line_number<'de, D: Deserializer<'de>>(de: D) -> Result<Option<u64>, D::Error> {
    positive(
        Option::deserialize(de)?,
        "offset",
        "a whole line number counting from 1",
    )
    .map_err(serde::de::Error::custom)
}

fn line_count<'de, D: Deserializer<'de>>(de: D) -> Result<Option<u64>, D::Error> {
    positive(
        Option::deserialize(de)?,
        "limit",
        "a whole number of lines, 1 or more",
    )
    .map_err(serde::de::Error::custom)
}

/// What `read_file` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReadFileOutput {
    /// The path as given.
    pub path: String,
    /// The lines returned, exactly as in the file (line endings included).
    pub content: String,
    /// The number of the first line returned, counting from 1.
    pub start_line: u64,
    /// How many lines the file has.
    pub total_lines: u64,
    /// Whether lines after the returned ones were left out (by `limit` or the
    /// byte cap); `next_offset` says where to continue.
    pub truncated: bool,
    /// The `offset` that reads the next page, when the file goes on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
}

/// The `read_file` tool: reads a page of a UTF-8 text file through the `fs`
/// capability. Binary and non-UTF-8 files are refused with an error that says
/// so; a page stops at [`limit`](ReadFileArgs::limit) lines or the page byte
/// cap, whichever comes first.
///
/// Files of any size can be paged. A file up to
/// [`max_file_bytes`](Self::with_max_file_bytes) is read into memory in one
/// go; a larger one is scanned from disk with
/// [`FileSystem::read_at`] in [chunks](Self::with_chunk_bytes), so memory
/// stays bounded by one chunk plus one page whatever the file's size. Both
/// ways give the same result for the same bytes; the scan reads the whole
/// file on every call (to count its lines) and checks the call's
/// cancellation signal between chunks.
#[derive(Clone, Debug)]
pub struct ReadFile {
    default_limit: u64,
    max_page_bytes: usize,
    max_file_bytes: u64,
    chunk_bytes: u64,
}

impl Default for ReadFile {
    fn default() -> Self {
        Self {
            default_limit: 2000,
            max_page_bytes: 100 * 1024,
            max_file_bytes: 16 * 1024 * 1024,
            chunk_bytes: 1024 * 1024,
        }
    }
}

impl ReadFile {
    /// The tool with its defaults: 2000 lines a page, 100 KiB a page, files
    /// up to 16 MiB read in one go, larger ones scanned in 1 MiB chunks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets how many lines a page has when the call gives no `limit`.
    pub fn with_default_limit(mut self, lines: u64) -> Self {
        self.default_limit = lines.max(1);
        self
    }

    /// Sets the most bytes of text one page returns.
    pub fn with_max_page_bytes(mut self, bytes: usize) -> Self {
        self.max_page_bytes = bytes.max(1);
        self
    }

    /// Sets the largest file read into memory in one go; larger files are
    /// scanned in chunks of [`with_chunk_bytes`](Self::with_chunk_bytes).
    pub fn with_max_file_bytes(mut self, bytes: u64) -> Self {
        self.max_file_bytes = bytes;
        self
    }

    /// Sets how many bytes one read of a scanned file asks for (at least 4,
    /// so that any character fits in one).
    pub fn with_chunk_bytes(mut self, bytes: u64) -> Self {
        self.chunk_bytes = bytes.max(4);
        self
    }
}

/// The error for a file that is not UTF-8 text.
fn not_text(path: &str, reason: NotText, total_size: u64) -> ToolError {
    let (kind, why) = match reason {
        NotText::Nul(at) => ("binary", format!("it has a NUL byte at offset {at}")),
        NotText::InvalidUtf8(at) => (
            "EILSEQ",
            format!("it is not valid UTF-8 (invalid byte at offset {at})"),
        ),
    };
    ToolError::new(format!(
        "{path} looks binary: {why} in its {total_size} bytes. read_file only reads UTF-8 text; \
         use bash (e.g. `file {path}` or `xxd {path} | head`) to inspect binary data"
    ))
    .with_kind(kind)
}

/// The error for an `offset` past the last line.
fn offset_out_of_range(path: &str, start: u64, total_lines: u64) -> ToolError {
    ToolError::new(format!(
        "offset {start} is past the end of {path}, which has {total_lines} lines: \
         pass an offset from 1 to {}",
        total_lines.max(1)
    ))
    .with_kind("offset_out_of_range")
}

/// A page as the tool returns it: `lines` lines from `start`.
fn output(
    path: String,
    content: String,
    start: u64,
    lines: u64,
    truncated: bool,
    total_lines: u64,
) -> ReadFileOutput {
    let next = start + lines;
    let next_offset = (truncated && next <= total_lines).then_some(next);
    ReadFileOutput {
        path,
        content,
        start_line: start,
        total_lines,
        truncated,
        next_offset,
    }
}

/// One page of `text`: the lines from `start` (1-based), at most `limit` of
/// them and at most `max_bytes` bytes (but always at least one line, cut on a
/// character boundary if it alone is too long). Returns the page and whether
/// it stopped before the end.
fn page(text: &str, start: u64, limit: u64, max_bytes: usize) -> (&str, u64, bool) {
    let mut from = 0usize;
    let mut line = 1u64;
    while line < start {
        match text[from..].find('\n') {
            Some(i) => from += i + 1,
            None => from = text.len(),
        }
        line += 1;
    }
    let rest = &text[from..];
    let mut end = 0usize;
    let mut lines = 0u64;
    while end < rest.len() && lines < limit {
        let next = rest[end..].find('\n').map_or(rest.len(), |i| end + i + 1);
        if next > max_bytes {
            if lines == 0 {
                let mut cut = max_bytes.min(rest.len());
                while !rest.is_char_boundary(cut) {
                    cut -= 1;
                }
                return (&rest[..cut], 1, true);
            }
            break;
        }
        end = next;
        lines += 1;
    }
    (&rest[..end], lines, end < rest.len())
}

impl ReadFile {
    /// The page of a file over `max_file_bytes`, found in one pass over its
    /// first `size` bytes (its size when the call began) read in chunks:
    /// the page and `total_lines` are those the in-memory path gives for
    /// the same bytes, and so are the binary and UTF-8 verdicts.
    async fn read_scanned(
        &self,
        fs: &dyn FileSystem,
        path: String,
        size: u64,
        start: u64,
        limit: u64,
        cx: &ToolRunContext,
    ) -> Result<ReadFileOutput, ToolError> {
        let given = Path::new(&path);
        let mut check = TextCheck::new();
        let mut scan = PageScan::new(start, limit, self.max_page_bytes);
        let mut pos = 0u64;
        while pos < size {
            if cx.is_cancelled() {
                return Err(ToolError::cancelled(format!(
                    "read_file was cancelled while scanning {path} (at byte {pos} of {size})"
                )));
            }
            let chunk = fs
                .read_at(given, pos, self.chunk_bytes.min(size - pos))
                .await?;
            // The last chunk reaches the size the call began with (or the
            // end, if the file has shrunk); `cut`: the file has grown.
            let last = chunk.bytes.is_empty()
                || !chunk.truncated
                || pos + chunk.bytes.len() as u64 >= size;
            let cut = last && chunk.truncated;
            let whole = check
                .check(&chunk.bytes, last, cut)
                .map_err(|reason| not_text(&path, reason, size))?;
            scan.feed(&chunk.bytes[..whole]);
            pos += whole as u64;
            if last {
                break;
            }
            if whole == 0 {
                return Err(ToolError::new(format!(
                    "read_file could not read on in {path} at byte {pos}: the file is \
                     changing while it is read; try again"
                ))
                .with_kind("EIO"));
            }
        }
        let found = scan.finish();
        if start > found.total_lines.max(1) {
            return Err(offset_out_of_range(&path, start, found.total_lines));
        }
        let content = String::from_utf8(found.content).map_err(|e| {
            // Not reached: the bytes were checked above.
            not_text(
                &path,
                NotText::InvalidUtf8(e.utf8_error().valid_up_to()),
                size,
            )
        })?;
        Ok(output(
            path,
            content,
            start,
            found.lines,
            found.truncated,
            found.total_lines,
        ))
    }
}

impl Tool for ReadFile {
    const NAME: &'static str = "read_file";
    type Args = ReadFileArgs;
    type Output = ReadFileOutput;

    fn description(&self) -> &str {
        "Read a UTF-8 text file from the workspace and return its lines, numbered. \
         Use it whenever you need to see what a file contains before answering about it \
         or changing it (read a file before you edit it). Long files come in pages: pass \
         `offset` (first line, from 1) and `limit` (number of lines) to read further; the \
         result says where the next page starts. Files of any size can be read this way; \
         on a very large file each call takes longer, as it scans the whole file to count \
         its lines. Binary files are refused. To find which file to read, use `glob` or \
         `grep`; to see a directory, use `list_dir`."
    }

    fn tier(&self) -> Tier {
        Tier::ReadOnly
    }

    fn is_concurrency_safe(&self, _args: &ReadFileArgs) -> bool {
        true
    }

    async fn execute(
        &self,
        args: ReadFileArgs,
        cx: &ToolRunContext,
    ) -> Result<ReadFileOutput, ToolError> {
        let fs = cx.fs()?;
        let path = Path::new(&args.path);
        let meta = fs.metadata(path).await?;
        if meta.kind == EntryKind::Dir {
            return Err(ToolError::new(format!(
                "{} is a directory, not a file: use list_dir to see what it contains",
                args.path
            ))
            .with_kind("EISDIR"));
        }
        let start = args.offset.unwrap_or(1);
        let limit = args.limit.unwrap_or(self.default_limit);
        if meta.size > self.max_file_bytes {
            return self
                .read_scanned(fs, args.path, meta.size, start, limit, cx)
                .await;
        }
        let file = fs.read(path, Some(self.max_file_bytes)).await?;
        let text = decode_text(&file.bytes, file.truncated)
            .map_err(|reason| not_text(&args.path, reason, file.total_size))?;
        let total_lines = count_lines(text);
        if start > total_lines.max(1) {
            return Err(offset_out_of_range(&args.path, start, total_lines));
        }
        let (content, lines, truncated) = page(text, start, limit, self.max_page_bytes);
        Ok(output(
            args.path,
            content.to_owned(),
            start,
            lines,
            truncated,
            total_lines,
        ))
    }

    fn render(&self, _args: &ReadFileArgs, out: &ReadFileOutput) -> Content {
        if out.total_lines == 0 {
            return Content::text(format!("{} is empty.", out.path));
        }
        let mut text = String::with_capacity(out.content.len() + out.content.len() / 8);
        let mut last = out.start_line;
        for (i, line) in out.content.lines().enumerate() {
            last = out.start_line + i as u64;
            text.push_str(&format!("{last:>6}\t{line}\n"));
        }
        let mut notes = Vec::new();
        if out.truncated && !out.content.ends_with('\n') {
            notes.push(format!(
                "[line {last} is longer than a page and was cut; use bash (e.g. `sed -n '{last}p' {} | cut -c1-2000`) to see it in parts]",
                out.path
            ));
        }
        if let Some(next) = out.next_offset {
            notes.push(format!(
                "[lines {}-{last} of {}; call read_file with offset={next} to read on]",
                out.start_line, out.total_lines
            ));
        }
        if notes.is_empty() {
            text.pop();
        } else {
            text.push_str(&notes.join("\n"));
        }
        Content::text(text)
    }

    fn present_call(&self, args: &ReadFileArgs) -> Option<String> {
        Some(match (args.offset, args.limit) {
            (None, None) => format!("Read {}", args.path),
            (offset, Some(limit)) => {
                let from = offset.unwrap_or(1);
                format!(
                    "Read {} (lines {from}-{})",
                    args.path,
                    from.saturating_add(limit - 1)
                )
            }
            (Some(from), None) => format!("Read {} (from line {from})", args.path),
        })
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use tack_core::tool::{ErrorCode, ToolDefinition};

    use super::*;
    use crate::mem_fs::{MemFs, call};

    #[test]
    fn pages_are_cut_by_lines_then_by_bytes() {
        let text = "one\ntwo\nthree\nfour";
        assert_eq!(page(text, 1, 10, 100), (text, 4, false));
        assert_eq!(page(text, 2, 2, 100), ("two\nthree\n", 2, true));
        assert_eq!(page(text, 4, 10, 100), ("four", 1, false));
        assert_eq!(page(text, 1, 10, 9), ("one\ntwo\n", 2, true));
        // A single line longer than the byte cap is cut on a character boundary.
        assert_eq!(page("ééé\n", 1, 10, 3), ("é", 1, true));
    }

    async fn read(fs: MemFs, args: Value) -> Result<Value, ToolError> {
        let def = ToolDefinition::from_tool(ReadFile::new().with_default_limit(2)).unwrap();
        call(&def, args, &fs.context()).await
    }

    #[tokio::test]
    async fn a_long_file_is_paged_and_says_where_to_go_on() {
        let fs = MemFs::new().file("a.txt", "1\n2\n3\n4\n5\n");
        let value = read(fs, json!({"path": "a.txt", "offset": 2}))
            .await
            .unwrap();
        assert_eq!(
            value,
            json!({"path": "a.txt", "content": "2\n3\n", "start_line": 2, "total_lines": 5, "truncated": true, "next_offset": 4})
        );
        let out: ReadFileOutput = serde_json::from_value(value).unwrap();
        let args = ReadFileArgs {
            path: "a.txt".into(),
            offset: Some(2),
            limit: None,
        };
        assert_eq!(
            ReadFile::new().render(&args, &out)[0].as_text().unwrap(),
            "     2\t2\n     3\t3\n[lines 2-3 of 5; call read_file with offset=4 to read on]"
        );
    }

    #[tokio::test]
    async fn offsets_below_one_or_past_the_end_are_refused_by_name() {
        let fs = || MemFs::new().file("a.txt", "x\n");
        for bad in [json!(-1), json!(0), json!(1.5), json!("3")] {
            let err = read(fs(), json!({"path": "a.txt", "offset": bad}))
                .await
                .unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidArguments);
            assert!(
                err.message()
                    .contains("`offset` must be a whole line number counting from 1; got "),
                "{err}"
            );
        }
        let err = read(fs(), json!({"path": "a.txt", "offset": 3}))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), Some("offset_out_of_range"));
        assert!(err.message().contains("has 1 lines"), "{err}");
    }

    #[tokio::test]
    async fn binary_and_non_utf8_files_are_refused_with_their_size() {
        let fs = MemFs::new()
            .file("img.png", b"\x89PNG\0\0")
            .file("latin1.txt", b"caf\xe9");
        let cx = fs.context();
        let def = ToolDefinition::from_tool(ReadFile::new()).unwrap();
        let err = call(&def, json!({"path": "img.png"}), &cx)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), Some("binary"));
        assert!(
            err.message().contains("looks binary") && err.message().contains("6 bytes"),
            "{err}"
        );
        let err = call(&def, json!({"path": "latin1.txt"}), &cx)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), Some("EILSEQ"));
        assert!(
            err.message().contains("not valid UTF-8") && err.message().contains("offset 3"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn directories_are_refused_with_advice() {
        let fs = MemFs::new().dir("src");
        let def = ToolDefinition::from_tool(ReadFile::new()).unwrap();
        let err = call(&def, json!({"path": "src"}), &fs.context())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), Some("EISDIR"));
        assert!(err.message().contains("list_dir"), "{err}");
    }

    #[tokio::test]
    async fn a_file_over_the_in_memory_limit_is_scanned_in_chunks() {
        // 100 lines of 10 bytes, read in memory up to 64 bytes, in chunks of 16.
        let body: String = (1..=100).map(|n| format!("line {n:>4}\n")).collect();
        let fs = MemFs::new().file("big.txt", &body);
        let tool = ReadFile::new()
            .with_max_file_bytes(64)
            .with_chunk_bytes(16)
            .with_default_limit(3);
        let out = fs
            .run(tool, json!({"path": "big.txt", "offset": 50}))
            .await
            .unwrap();
        assert_eq!(
            out,
            ReadFileOutput {
                path: "big.txt".into(),
                content: "line   50\nline   51\nline   52\n".into(),
                start_line: 50,
                total_lines: 100,
                truncated: true,
                next_offset: Some(53),
            }
        );
    }

    /// The value (or the error's kind and message) of `tool` reading `contents`.
    async fn outcome(tool: ReadFile, contents: &[u8], args: Value) -> Result<Value, String> {
        let fs = MemFs::new().file("f.txt", contents);
        let def = ToolDefinition::from_tool(tool).unwrap();
        call(&def, args, &fs.context())
            .await
            .map_err(|e| format!("{:?}: {}", e.kind(), e.message()))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

        /// Scanned in chunks or read in memory, a file gives the same page,
        /// the same numbers and the same errors.
        #[test]
        fn a_scanned_file_reads_like_one_read_in_memory(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    12 => "[a-z ]{0,12}",
                    6 => proptest::strategy::Just("\n".to_owned()),
                    2 => proptest::strategy::Just("\r\n".to_owned()),
                    2 => "[é€😀]{1,4}",
                    1 => proptest::strategy::Just("\0".to_owned()),
                ],
                0..40,
            ),
            invalid in proptest::option::weighted(0.1, proptest::num::usize::ANY),
            offset in proptest::option::of(1u64..30),
            limit in proptest::option::of(1u64..8),
            max_page_bytes in 1usize..120,
            chunk in 4u64..40,
        ) {
            let mut contents = parts.concat().into_bytes();
            if let Some(at) = invalid.filter(|_| !contents.is_empty()) {
                let at = at % contents.len();
                contents[at] = 0xff;
            }
            let args = json!({"path": "f.txt", "offset": offset, "limit": limit});
            let tool = ReadFile::new().with_default_limit(5).with_max_page_bytes(max_page_bytes);
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let in_memory = runtime.block_on(outcome(tool.clone(), &contents, args.clone()));
            let scanned = runtime.block_on(outcome(
                tool.with_max_file_bytes(0).with_chunk_bytes(chunk),
                &contents,
                args,
            ));
            proptest::prop_assert_eq!(in_memory, scanned);
        }
    }

    #[test]
    fn a_line_cut_at_the_page_size_is_called_out() {
        let out = ReadFileOutput {
            path: "min.js".into(),
            content: "var a".into(),
            start_line: 1,
            total_lines: 2,
            truncated: true,
            next_offset: Some(2),
        };
        let args = ReadFileArgs {
            path: "min.js".into(),
            offset: None,
            limit: None,
        };
        assert_eq!(
            ReadFile::new().render(&args, &out)[0].as_text().unwrap(),
            "     1\tvar a\n[line 1 is longer than a page and was cut; use bash (e.g. `sed -n '1p' min.js | cut -c1-2000`) to see it in parts]\n[lines 1-1 of 2; call read_file with offset=2 to read on]"
        );
    }

    proptest::proptest! {
        #[test]
        fn paging_through_a_file_returns_every_line_once(
            lines in proptest::collection::vec("[a-z ]{0,20}", 0..40),
            limit in 1u64..10,
            max_bytes in 40usize..200,
            trailing_newline in proptest::bool::ANY,
        ) {
            let mut text = lines.join("\n");
            if trailing_newline && !text.is_empty() {
                text.push('\n');
            }
            let mut start = 1;
            let mut read = String::new();
            loop {
                let (chunk, n, truncated) = page(&text, start, limit, max_bytes);
                proptest::prop_assert!(n <= limit);
                read.push_str(chunk);
                if !truncated {
                    break;
                }
                proptest::prop_assert!(n >= 1);
                start += n;
            }
            proptest::prop_assert_eq!(read, text);
        }
    }

    #[test]
    fn an_empty_file_renders_as_such() {
        let out = ReadFileOutput {
            path: "e".into(),
            content: String::new(),
            start_line: 1,
            total_lines: 0,
            truncated: false,
            next_offset: None,
        };
        let args = ReadFileArgs {
            path: "e".into(),
            offset: None,
            limit: None,
        };
        assert_eq!(
            ReadFile::new().render(&args, &out)[0].as_text(),
            Some("e is empty.")
        );
    }
}
