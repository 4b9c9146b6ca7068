//! glob on a real workspace.

use pretty_assertions::assert_eq;
use serde_json::json;
use tack_core::tool::{ErrorCode, Tier, ToolDefinition};
use tack_tools::{Glob, GlobOutput};

use crate::fixtures::project;
use crate::harness::assert_golden;

#[tokio::test]
async fn finds_files_by_pattern_respecting_gitignore() {
    let ws = project();
    let out: GlobOutput = ws.output(Glob::new(), json!({"pattern": "**/*.rs"})).await;
    assert_eq!(
        out.matches,
        ["src/lib.rs", "src/main.rs", "src/util/mod.rs"]
    );
    assert_eq!(out.ignored, 4); // target/, build.log, .git/, src/util/generated.rs
    let text = ws.text(Glob::new(), json!({"pattern": "**/*.rs"})).await;
    assert_golden("glob.txt", &text);
}

#[tokio::test]
async fn a_path_narrows_the_search_and_star_stays_in_one_directory() {
    let ws = project();
    let value = ws
        .value(Glob::new(), json!({"pattern": "*.rs", "path": "src"}))
        .await;
    assert_eq!(value["matches"], json!(["src/lib.rs", "src/main.rs"]));
}

#[tokio::test]
async fn an_invalid_glob_names_the_problem() {
    let ws = project();
    let err = ws.error(Glob::new(), json!({"pattern": "src/{a,b"})).await;
    assert_eq!(err.code(), ErrorCode::InvalidArguments);
    assert!(
        err.message().contains("`pattern` is not a valid glob"),
        "{err}"
    );
    assert!(err.message().contains("unclosed alternate group"), "{err}");
}

/// A brace pattern nested 300 deep once panicked inside globset (contained,
/// but `EXECUTION_FAILED` with a backtrace on stderr).
#[tokio::test]
async fn a_brace_bomb_is_invalid_arguments_with_a_fix() {
    let ws = project();
    let bomb = format!("{}x{}", "{a,".repeat(300), "}".repeat(300));
    let err = ws.error(Glob::new(), json!({"pattern": bomb})).await;
    assert_eq!(err.code(), ErrorCode::InvalidArguments);
    assert!(
        err.message().contains("`pattern` is not a valid glob"),
        "{err}"
    );
    assert!(err.message().contains("nest"), "{err}");
    assert!(err.message().contains("flatten the alternates"), "{err}");
}

#[tokio::test]
async fn a_missing_directory_is_enoent() {
    let ws = project();
    let err = ws
        .error(Glob::new(), json!({"pattern": "*", "path": "nope"}))
        .await;
    assert_eq!(err.kind(), Some("ENOENT"));
    assert!(err.message().contains("nope"), "{err}");
}

#[test]
fn read_only_and_parallel() {
    let def = ToolDefinition::from_tool(Glob::new()).unwrap();
    assert_eq!(def.tier(), Tier::ReadOnly);
    assert!(def.is_concurrency_safe(&json!({"pattern": "*"})));
}
