//! read_file on a real workspace.

use pretty_assertions::assert_eq;
use serde_json::json;
use tack_core::tool::{ErrorCode, Tier, ToolDefinition, joined_text};
use tack_tools::ReadFile;

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
    let text = joined_text(&outcome.content);
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
