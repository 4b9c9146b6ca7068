//! list_dir on a real workspace.

use pretty_assertions::assert_eq;
use serde_json::json;
use tack_core::tool::{Tier, ToolDefinition};
use tack_tools::{ListDir, ListDirOutput};

use crate::harness::{Workspace, assert_golden};

fn fixture() -> Workspace {
    let ws = Workspace::new();
    ws.file("README.md", "# hi\n")
        .file(".env.example", "KEY=\n")
        .file("src/lib.rs", "pub fn f() {}\n")
        .file("src/bin/tool.rs", "fn main() {}\n")
        .dir("empty");
    ws
}

#[tokio::test]
async fn lists_entries_with_kind_and_size_hidden_ones_included() {
    let ws = fixture();
    let value = ws.value(ListDir::new(), json!({"path": "."})).await;
    let out: ListDirOutput = serde_json::from_value(value.clone()).unwrap();
    let paths: Vec<&str> = out.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, [".env.example", "README.md", "empty/", "src/"]);
    assert_eq!(
        value["entries"][1],
        json!({"path": "README.md", "kind": "file", "size": 5})
    );
    assert_eq!(value["entries"][3]["kind"], "dir");
    assert!(!out.truncated);
    let text = ws
        .text(ListDir::new(), json!({"path": ".", "depth": 3}))
        .await;
    assert_golden("list_dir.txt", &text);
}

#[tokio::test]
async fn a_capped_listing_says_so_with_the_count() {
    let ws = fixture();
    let text = ws
        .text(ListDir::new().with_max_entries(2), json!({"path": "."}))
        .await;
    assert!(text.contains("[showing 2 of 4 entries found;"), "{text}");
}

#[tokio::test]
async fn missing_directories_and_files_are_errors_naming_the_path() {
    let ws = fixture();
    let err = ws.error(ListDir::new(), json!({"path": "nope"})).await;
    assert_eq!(err.kind(), Some("ENOENT"));
    assert!(err.message().contains("nope"), "{err}");
    let err = ws.error(ListDir::new(), json!({"path": "README.md"})).await;
    assert!(err.message().contains("README.md"), "{err}");
}

#[test]
fn read_only_and_parallel() {
    let def = ToolDefinition::from_tool(ListDir::new()).unwrap();
    assert_eq!(def.tier(), Tier::ReadOnly);
    assert!(def.is_concurrency_safe(&json!({"path": "."})));
    assert_eq!(def.input_schema()["properties"]["depth"]["maximum"], 5);
}
