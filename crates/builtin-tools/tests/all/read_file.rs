//! read_file on a real workspace.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tack_core::capability::{Access, CapabilityError, FileBytes, FileSystem, Metadata};
use tack_core::context::ToolRunContext;
use tack_core::host::Capabilities;
use tack_core::host::{NewExecutionToken, NewRunContext, NewToolExecution, RunEffects};
use tack_core::tool::{
    CallId, ErrorCode, ExecutionToken, Tier, ToolDefinition, ToolExecution, ToolName,
};
use tack_tools::{ReadFile, ReadFileOutput};
use tokio_util::sync::CancellationToken;

use crate::fixtures::workspace_with;
use crate::harness::{Workspace, assert_golden};

#[tokio::test]
async fn reads_a_text_file_with_line_numbers() {
    let ws = workspace_with("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    let value = ws
        .value(ReadFile::new(), json!({"path": "src/main.rs"}))
        .await;
    assert_eq!(
        value,
        json!({
            "path": "src/main.rs",
            "content": "fn main() {\n    println!(\"hi\");\n}\n",
            "start_line": 1,
            "total_lines": 3,
            "truncated": false
        })
    );
    let text = ws
        .text(ReadFile::new(), json!({"path": "src/main.rs"}))
        .await;
    assert_golden("read_file.txt", &text);
}

#[tokio::test]
async fn a_long_file_is_read_in_pages() {
    let body: String = (1..=50).map(|n| format!("line {n}\n")).collect();
    let ws = workspace_with("long.txt", &body);
    let tool = || ReadFile::new().with_default_limit(20);
    let first = ws.value(tool(), json!({"path": "long.txt"})).await;
    assert_eq!(
        (first["truncated"].clone(), first["next_offset"].clone()),
        (json!(true), json!(21))
    );
    assert_eq!(first["total_lines"], 50);
    let last = ws
        .value(tool(), json!({"path": "long.txt", "offset": 41}))
        .await;
    assert_eq!(last["truncated"], false);
    assert_eq!(
        last["content"].as_str().unwrap().lines().next(),
        Some("line 41")
    );
    let text = ws
        .text(tool(), json!({"path": "long.txt", "offset": 3, "limit": 2}))
        .await;
    assert_golden("read_file_page.txt", &text);
}

#[tokio::test]
async fn a_missing_file_is_an_enoent_error_naming_the_path() {
    let ws = Workspace::new();
    let def = ToolDefinition::from_tool(ReadFile::new()).unwrap();
    let err = ws
        .call_def(&def, json!({"path": "README.md"}))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), Some("ENOENT"));
    assert!(err.message().contains("README.md"), "{err}");
    // The seed's story: the failure is content the model reads, not a crash.
    let outcome = ws.outcome(&def, json!({"path": "README.md"})).await;
    assert_eq!(outcome.error_code(), Some(ErrorCode::ExecutionFailed));
    let text = outcome.content.joined_text();
    assert!(
        text.starts_with("EXECUTION_FAILED: ") && text.contains("README.md"),
        "{text}"
    );
}

#[tokio::test]
async fn a_directory_is_refused_with_advice() {
    let ws = Workspace::new();
    ws.dir("src");
    let err = ws.error(ReadFile::new(), json!({"path": "src"})).await;
    assert_eq!(err.kind(), Some("EISDIR"));
    assert!(
        err.message().contains("src is a directory") && err.message().contains("list_dir"),
        "{err}"
    );
}

#[tokio::test]
async fn binary_and_invalid_utf8_files_are_refused() {
    let ws = Workspace::new();
    ws.file("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    ws.file("latin1.txt", b"caf\xe9 au lait\n");
    let err = ws.error(ReadFile::new(), json!({"path": "logo.png"})).await;
    assert_eq!(err.kind(), Some("binary"));
    assert!(err.message().contains("logo.png looks binary"), "{err}");
    assert!(err.message().contains("in its 16 bytes"), "{err}");
    let err = ws
        .error(ReadFile::new(), json!({"path": "latin1.txt"}))
        .await;
    assert_eq!(err.kind(), Some("EILSEQ"));
    assert!(
        err.message()
            .contains("not valid UTF-8 (invalid byte at offset 3)"),
        "{err}"
    );
}

#[tokio::test]
async fn a_negative_offset_is_rejected_naming_offset() {
    let ws = workspace_with("a.txt", "x\n");
    let def = ToolDefinition::from_tool(ReadFile::new()).unwrap();
    // The schema says so (the pipeline validates against it first) …
    assert_eq!(def.input_schema()["properties"]["offset"]["minimum"], 1);
    // … and so does deserialization, for a direct call.
    let err = ws
        .call_def(&def, json!({"path": "a.txt", "offset": -1}))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArguments);
    assert!(
        err.message()
            .contains("`offset` must be a whole line number counting from 1; got -1"),
        "{err}"
    );
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused_by_the_sandbox() {
    let ws = Workspace::new();
    let err = ws
        .error(ReadFile::new(), json!({"path": "../outside.txt"}))
        .await;
    assert_eq!(err.kind(), Some("EACCES"), "{err}");
}

#[test]
fn read_only_and_parallel() {
    let def = ToolDefinition::from_tool(ReadFile::new()).unwrap();
    assert_eq!(def.tier(), Tier::ReadOnly);
    assert!(def.is_concurrency_safe(&json!({"path": "a"})));
    assert_eq!(
        def.present_call(&json!({"path": "a", "offset": 3, "limit": 2})),
        "Read a (lines 3-4)"
    );
}

// Files over the in-memory limit: scanned from disk in chunks with `read_at`.

/// Text of at least `min_bytes`: numbered lines of varied lengths, with
/// non-ASCII characters, every seventh line ending in CRLF, and a last line
/// without a newline.
fn varied_text(min_bytes: usize) -> String {
    let mut text = String::new();
    let mut n = 1usize;
    while text.len() < min_bytes {
        let end = if n % 7 == 0 { "\r\n" } else { "\n" };
        let body = "é".repeat(n % 5) + &"x".repeat(n * 31 % 97);
        text.push_str(&format!("{n:06} {body}{end}"));
        n += 1;
    }
    text.push_str("the last line, without a newline");
    text
}

/// What `tool` gives for `args` in `ws`: the value, or the error's kind and message.
async fn result(ws: &Workspace, tool: ReadFile, args: &Value) -> Result<Value, String> {
    ws.call(tool, args.clone())
        .await
        .map_err(|e| format!("{:?}: {}", e.kind(), e.message()))
}

/// The result of `scanned` for `args`, after checking that the same tool
/// reading the file in memory gives the same.
async fn same_both_ways(ws: &Workspace, scanned: &ReadFile, args: Value) -> Result<Value, String> {
    let in_memory = scanned.clone().with_max_file_bytes(u64::MAX);
    let paged = result(ws, scanned.clone(), &args).await;
    assert!(
        paged == result(ws, in_memory, &args).await,
        "{args}: scanned and in-memory reads differ"
    );
    paged
}

fn output(value: Result<Value, String>) -> ReadFileOutput {
    serde_json::from_value(value.unwrap()).unwrap()
}

#[tokio::test]
async fn a_file_over_the_in_memory_limit_is_paged_from_disk() {
    let text = varied_text(1024 * 1024);
    let ws = workspace_with("big.log", &text);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let total = lines.len() as u64;
    // Read in memory up to 64 KiB: this 1 MiB file is scanned, in 64 KiB
    // (and 3 bytes) chunks that split lines and characters.
    let scanned = ReadFile::new()
        .with_max_file_bytes(64 * 1024)
        .with_chunk_bytes(64 * 1024 + 3);

    // The first page stops at the page byte cap (100 KiB) before 2000 lines.
    let first = output(same_both_ways(&ws, &scanned, json!({"path": "big.log"})).await);
    assert_eq!(
        (first.start_line, first.total_lines, first.truncated),
        (1, total, true)
    );
    let next = first.next_offset.unwrap();
    assert!(first.content.len() <= 100 * 1024 && next > 1000, "{next}");
    assert_eq!(first.content, lines[..next as usize - 1].concat());

    // A middle page.
    let middle = total / 2;
    let page = output(
        same_both_ways(
            &ws,
            &scanned,
            json!({"path": "big.log", "offset": middle, "limit": 100}),
        )
        .await,
    );
    assert_eq!(
        page.content,
        lines[middle as usize - 1..middle as usize + 99].concat()
    );
    assert_eq!(page.next_offset, Some(middle + 100));

    // The last page: the end of the file, nothing after it.
    let last = output(
        same_both_ways(
            &ws,
            &scanned,
            json!({"path": "big.log", "offset": total - 2}),
        )
        .await,
    );
    assert_eq!(
        (last.content.as_str(), last.truncated, last.next_offset),
        (lines[total as usize - 3..].concat().as_str(), false, None)
    );
    assert!(last.content.ends_with("without a newline"));

    // Past the end: the error the in-memory path gives.
    let past = same_both_ways(
        &ws,
        &scanned,
        json!({"path": "big.log", "offset": total + 1}),
    )
    .await
    .unwrap_err();
    assert!(
        past.starts_with("Some(\"offset_out_of_range\")")
            && past.contains(&format!("which has {total} lines")),
        "{past}"
    );

    // CRLF lines keep their `\r` in the content, and render without it.
    let args = json!({"path": "big.log", "offset": 5, "limit": 4});
    let rendered = ws.text(scanned.clone(), args.clone()).await;
    assert_eq!(
        rendered,
        ws.text(scanned.with_max_file_bytes(u64::MAX), args).await
    );
    assert!(
        lines[6].ends_with("\r\n") && !rendered.contains('\r'),
        "{rendered}"
    );
    assert!(rendered.starts_with("     5\t000005 "), "{rendered}");
}

#[tokio::test]
async fn every_page_of_a_scanned_file_matches_the_in_memory_page() {
    let text = varied_text(12 * 1024);
    let ws = workspace_with("f.txt", &text);
    let size = text.len() as u64;
    let total = text.split_inclusive('\n').count() as u64;
    for chunk in [7, 1000, 4099, 1024 * 1024] {
        // Just over the in-memory limit.
        let scanned = ReadFile::new()
            .with_max_file_bytes(size - 1)
            .with_chunk_bytes(chunk);
        for (limit, max_page_bytes) in [
            (None, 100 * 1024),
            (Some(37), 100 * 1024),
            (Some(500), 2001),
        ] {
            let scanned = scanned.clone().with_max_page_bytes(max_page_bytes);
            let in_memory = scanned.clone().with_max_file_bytes(u64::MAX);
            // Page through the whole file both ways: the same pages, which
            // put together are the file.
            let mut offset = 1;
            let mut read = String::new();
            loop {
                let args = json!({"path": "f.txt", "offset": offset, "limit": limit});
                let paged = result(&ws, scanned.clone(), &args).await;
                assert_eq!(
                    paged,
                    result(&ws, in_memory.clone(), &args).await,
                    "chunk {chunk}: {args}"
                );
                let page = output(paged);
                read.push_str(&page.content);
                match page.next_offset {
                    Some(next) => offset = next,
                    None => break,
                }
            }
            assert_eq!(read, text, "chunk {chunk}, limit {limit:?}");
            // Pages at other offsets, and past the end.
            for offset in [2, total / 3, total - 1, total, total + 1, total + 50] {
                let args = json!({"path": "f.txt", "offset": offset, "limit": limit});
                assert_eq!(
                    result(&ws, scanned.clone(), &args).await,
                    result(&ws, in_memory.clone(), &args).await,
                    "chunk {chunk}: {args}"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_line_longer_than_a_chunk_is_read_whole_or_cut_as_in_memory() {
    let long = "y".repeat(40_000);
    let longer = "é".repeat(80_000);
    let text = format!("first\n{long}\n{longer}\nlast\n");
    let ws = workspace_with("min.js", &text);
    let scanned = ReadFile::new()
        .with_max_file_bytes(16 * 1024)
        .with_chunk_bytes(8 * 1024)
        .with_max_page_bytes(50_001);
    // A line of five chunks, shorter than a page: whole.
    let page = output(same_both_ways(&ws, &scanned, json!({"path": "min.js", "offset": 2})).await);
    assert_eq!(
        (page.content, page.truncated, page.next_offset),
        (format!("{long}\n"), true, Some(3))
    );
    // A line longer than a page: its start, cut on a character boundary.
    let page = output(same_both_ways(&ws, &scanned, json!({"path": "min.js", "offset": 3})).await);
    assert_eq!(page.content, "é".repeat(25_000));
    assert_eq!((page.truncated, page.next_offset), (true, Some(4)));
    let args = json!({"path": "min.js", "offset": 3});
    let rendered = ws.text(scanned.clone(), args.clone()).await;
    assert_eq!(
        rendered,
        ws.text(ReadFile::new().with_max_page_bytes(50_001), args)
            .await
    );
    assert!(
        rendered.contains("[line 3 is longer than a page and was cut;"),
        "{rendered}"
    );
}

#[tokio::test]
async fn a_scanned_binary_or_non_utf8_file_is_refused_as_in_memory() {
    let text = varied_text(64 * 1024);
    let scanned = ReadFile::new()
        .with_max_file_bytes(1024)
        .with_chunk_bytes(4096);
    // A NUL byte in the first 8 KiB: binary.
    let mut bytes = text.clone().into_bytes();
    bytes[5000] = 0;
    let ws = workspace_with("data.bin", &bytes);
    let err = same_both_ways(&ws, &scanned, json!({"path": "data.bin"}))
        .await
        .unwrap_err();
    assert!(
        err.contains("looks binary: it has a NUL byte at offset 5000"),
        "{err}"
    );
    // An invalid byte far past the page read: refused all the same.
    let mut bytes = text.into_bytes();
    bytes[60_000] = 0xff;
    let ws = workspace_with("latin1.txt", &bytes);
    let err = same_both_ways(&ws, &scanned, json!({"path": "latin1.txt", "limit": 1}))
        .await
        .unwrap_err();
    assert!(err.contains("invalid byte at offset 60000"), "{err}");
}

/// The sandbox's file system, counting `read_at` calls and cancelling the
/// call's signal at the `cancel_at`th: a scan must stop at its next chunk.
struct CancelAt {
    inner: Arc<dyn FileSystem>,
    reads: AtomicUsize,
    cancel_at: usize,
    cancel: CancellationToken,
}

#[async_trait]
impl FileSystem for CancelAt {
    fn workspace_root(&self) -> &Path {
        self.inner.workspace_root()
    }
    fn resolve(&self, path: &Path, access: Access) -> Result<PathBuf, CapabilityError> {
        self.inner.resolve(path, access)
    }
    async fn read(&self, path: &Path, limit: Option<u64>) -> Result<FileBytes, CapabilityError> {
        self.inner.read(path, limit).await
    }
    async fn read_at(
        &self,
        path: &Path,
        offset: u64,
        limit: u64,
    ) -> Result<FileBytes, CapabilityError> {
        if self.reads.fetch_add(1, Ordering::SeqCst) + 1 == self.cancel_at {
            self.cancel.cancel();
        }
        self.inner.read_at(path, offset, limit).await
    }
    async fn write(&self, path: &Path, contents: &[u8]) -> Result<bool, CapabilityError> {
        self.inner.write(path, contents).await
    }
    async fn list(&self, path: &Path) -> Result<Vec<Metadata>, CapabilityError> {
        self.inner.list(path).await
    }
    async fn metadata(&self, path: &Path) -> Result<Metadata, CapabilityError> {
        self.inner.metadata(path).await
    }
    async fn create_dir_all(&self, path: &Path) -> Result<(), CapabilityError> {
        self.inner.create_dir_all(path).await
    }
    async fn remove(&self, path: &Path, recursive: bool) -> Result<(), CapabilityError> {
        self.inner.remove(path, recursive).await
    }
}

/// Reads `big.log` in `ws` with 4 KiB chunks, cancelling at read `cancel_at`
/// (never when 0); returns the result and how many chunks were read.
async fn scan_cancelled_at(ws: &Workspace, cancel_at: usize) -> (Result<Value, ErrorCode>, usize) {
    let cancel = CancellationToken::new();
    let fs = Arc::new(CancelAt {
        inner: ws.caps.fs.clone().unwrap(),
        reads: AtomicUsize::new(0),
        cancel_at,
        cancel: cancel.clone(),
    });
    let exec = Arc::new(ToolExecution::new(
        CallId::from("c1"),
        ToolName::new("read_file").unwrap(),
        Arc::new(json!({})),
        Tier::ReadOnly,
        ExecutionToken::issue(CallId::from("c1")),
    ));
    let caps = Capabilities::default().with_fs(fs.clone());
    let cx = ToolRunContext::new(exec, Arc::new(caps), cancel, RunEffects::new());
    let def = ToolDefinition::from_tool(
        ReadFile::new()
            .with_max_file_bytes(64 * 1024)
            .with_chunk_bytes(4096),
    )
    .unwrap();
    let result = def
        .run_body(Arc::new(json!({"path": "big.log", "limit": 5})), cx)
        .await;
    let result = result.map_err(|e| {
        if e.code() == ErrorCode::Cancelled {
            assert!(
                e.message()
                    .contains("read_file was cancelled while scanning big.log"),
                "{e}"
            );
        }
        e.code()
    });
    (result, fs.reads.load(Ordering::SeqCst))
}

#[tokio::test]
async fn a_scan_is_cancelled_between_chunks() {
    let ws = workspace_with("big.log", varied_text(256 * 1024));
    let (done, reads) = scan_cancelled_at(&ws, 0).await;
    assert!(done.is_ok() && reads > 64, "{reads} reads: {done:?}");
    // Cancelled during the third read: that chunk is the last one read.
    let (cancelled, reads) = scan_cancelled_at(&ws, 3).await;
    assert_eq!((cancelled, reads), (Err(ErrorCode::Cancelled), 3));
}
