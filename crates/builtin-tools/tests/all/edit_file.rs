//! edit_file on a real workspace.

use pretty_assertions::assert_eq;
use serde_json::json;
use tack_core::tool::{Tier, ToolDefinition};
use tack_tools::EditFile;

use crate::fixtures::workspace_with;
use crate::harness::assert_golden;

const README: &str = "# demo\n\nRun it with `cargo run`.\nIt prints hello.\n\nLicense: MIT\n";

#[tokio::test]
async fn a_unique_edit_is_applied_and_its_diff_goes_to_the_ui_only() {
    let ws = workspace_with("README.md", README);
    let def = ToolDefinition::from_tool(EditFile::new()).unwrap();
    let args = json!({"path": "README.md", "old_string": "It prints hello.", "new_string": "It prints hello, world."});
    let outcome = ws.outcome(&def, args).await;
    assert!(outcome.is_success(), "{:?}", outcome.failure_info());
    assert_eq!(
        ws.read("README.md"),
        README.replace("hello.", "hello, world.")
    );

    let text = outcome.content.joined_text();
    assert_eq!(
        text,
        "Edited README.md: 1 replacement, the first at line 4."
    );
    assert!(!text.contains("@@"), "the diff must not reach the model");

    let meta = outcome.presentation.unwrap();
    assert_eq!(meta["kind"], "diff");
    assert_eq!(meta["replacements"], 1);
    assert_golden("edit_file.diff", meta["diff"].as_str().unwrap());
}

#[tokio::test]
async fn replace_all_changes_every_occurrence() {
    let ws = workspace_with("a.rs", "let x = 1;\nlet y = x + x;\n");
    let value = ws
        .value(
            EditFile::new(),
            json!({"path": "a.rs", "old_string": "x", "new_string": "n", "replace_all": true}),
        )
        .await;
    assert_eq!(value["replacements"], 3);
    assert_eq!(ws.read("a.rs"), "let n = 1;\nlet y = n + n;\n");
}

#[tokio::test]
async fn an_ambiguous_old_string_is_refused_with_the_count_and_advice() {
    let ws = workspace_with("a.rs", "let x = 1;\nlet y = x + x;\n");
    let err = ws
        .error(
            EditFile::new(),
            json!({"path": "a.rs", "old_string": "x", "new_string": "n"}),
        )
        .await;
    assert_eq!(err.kind(), Some("not_unique"));
    assert!(err.message().contains("occurs 3 times in a.rs"), "{err}");
    assert!(err.message().contains("replace_all"), "{err}");
    assert_eq!(
        ws.read("a.rs"),
        "let x = 1;\nlet y = x + x;\n",
        "nothing was written"
    );
}

#[tokio::test]
async fn a_missing_old_string_or_file_is_a_clear_error() {
    let ws = workspace_with("a.rs", "fn a() {}\n");
    let err = ws
        .error(
            EditFile::new(),
            json!({"path": "a.rs", "old_string": "fn b", "new_string": "fn c"}),
        )
        .await;
    assert_eq!(err.kind(), Some("not_found"));
    assert!(err.message().contains("was not found in a.rs"), "{err}");
    let err = ws
        .error(
            EditFile::new(),
            json!({"path": "nope.rs", "old_string": "a", "new_string": "b"}),
        )
        .await;
    assert_eq!(err.kind(), Some("ENOENT"));
    assert!(err.message().contains("nope.rs"), "{err}");
}

#[tokio::test]
async fn a_binary_file_is_not_edited() {
    let ws = workspace_with("blob.bin", b"ab\0cd");
    let err = ws
        .error(
            EditFile::new(),
            json!({"path": "blob.bin", "old_string": "ab", "new_string": "x"}),
        )
        .await;
    assert_eq!(err.kind(), Some("EILSEQ"));
}

#[test]
fn writes_and_runs_alone() {
    let def = ToolDefinition::from_tool(EditFile::new()).unwrap();
    assert_eq!(def.tier(), Tier::Writes);
    assert!(!def.is_concurrency_safe(&json!({"path": "a", "old_string": "a", "new_string": "b"})));
}
