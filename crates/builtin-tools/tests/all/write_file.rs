//! write_file on a real workspace.

use pretty_assertions::assert_eq;
use serde_json::json;
use tack_core::tool::{Tier, ToolDefinition};
use tack_tools::WriteFile;

use crate::harness::Workspace;

#[tokio::test]
async fn creates_a_file_and_its_parents_then_replaces_it() {
    let ws = Workspace::new();
    let def = ToolDefinition::from_tool(WriteFile::new()).unwrap();
    let args = json!({"path": "docs/new/notes.md", "content": "one\ntwo\n"});
    let outcome = ws.outcome(&def, args.clone()).await;
    assert_eq!(
        *outcome.value().unwrap(),
        json!({"path": "docs/new/notes.md", "bytes_written": 8, "created": true})
    );
    assert_eq!(
        outcome.content.joined_text(),
        "Created docs/new/notes.md (8 bytes written)."
    );
    assert_eq!(
        outcome.presentation,
        Some(json!({"path": "docs/new/notes.md", "created": true, "bytes_written": 8, "lines": 2}))
    );
    assert_eq!(ws.read("docs/new/notes.md"), "one\ntwo\n");

    let again = ws
        .call_def(
            &def,
            json!({"path": "docs/new/notes.md", "content": "three\n"}),
        )
        .await
        .unwrap();
    assert_eq!(again["created"], false);
    assert_eq!(ws.read("docs/new/notes.md"), "three\n");
}

#[tokio::test]
async fn a_read_only_workspace_refuses_the_write() {
    let ws = Workspace::read_only();
    let err = ws
        .error(WriteFile::new(), json!({"path": "a.txt", "content": "x"}))
        .await;
    assert_eq!(err.kind(), Some("EACCES"), "{err}");
    assert!(!ws.dir.path().join("a.txt").exists());
}

#[tokio::test]
async fn a_path_outside_the_workspace_is_refused() {
    let ws = Workspace::new();
    let err = ws
        .error(
            WriteFile::new(),
            json!({"path": "../escape.txt", "content": "x"}),
        )
        .await;
    assert_eq!(err.kind(), Some("EACCES"), "{err}");
}

#[test]
fn writes_and_runs_alone() {
    let def = ToolDefinition::from_tool(WriteFile::new()).unwrap();
    assert_eq!(def.tier(), Tier::Writes);
    assert!(!def.is_concurrency_safe(&json!({"path": "a", "content": ""})));
    assert_eq!(
        def.present_call(&json!({"path": "a", "content": "xy"})),
        "Write a (2 bytes)"
    );
}
