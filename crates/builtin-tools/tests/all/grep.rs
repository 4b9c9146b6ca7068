//! grep on a real workspace.

use pretty_assertions::assert_eq;
use serde_json::json;
use tack_core::tool::{ErrorCode, Tier, ToolDefinition};
use tack_tools::{Grep, GrepOutput};

use crate::fixtures::{project, workspace_with};
use crate::harness::assert_golden;

fn found(out: &GrepOutput) -> Vec<(&str, u64)> {
    out.matches
        .iter()
        .map(|m| (m.path.as_str(), m.line_number))
        .collect()
}

#[tokio::test]
async fn finds_lines_respecting_gitignore_and_reports_binary_files() {
    let ws = project();
    let out: GrepOutput = ws.output(Grep::new(), json!({"pattern": "hello"})).await;
    assert_eq!(found(&out), [("src/lib.rs", 2), ("src/main.rs", 2)]);
    assert_eq!(out.skipped_total, 1);
    assert_eq!(out.skipped[0].path, "assets/logo.png");
    assert_eq!(out.skipped[0].reason, "binary");
    let text = ws.text(Grep::new(), json!({"pattern": "hello"})).await;
    assert_golden("grep.txt", &text);
}

#[tokio::test]
async fn glob_and_case_options_narrow_the_search() {
    let ws = project();
    let out: GrepOutput = ws
        .output(
            Grep::new(),
            json!({"pattern": "todo", "case_insensitive": true, "glob": "*.rs"}),
        )
        .await;
    assert_eq!(found(&out), [("src/lib.rs", 1)]);
    let value = ws
        .value(Grep::new(), json!({"pattern": "todo", "glob": "*.rs"}))
        .await;
    assert_eq!(value["matches"], json!([]));
    let value = ws
        .value(
            Grep::new(),
            json!({"pattern": "name", "path": "Cargo.toml"}),
        )
        .await;
    assert_eq!(value["matches"][0]["line"], "name = \"demo\"");
}

#[tokio::test]
async fn matches_are_capped_and_say_so() {
    let ws = project();
    let value = ws
        .value(Grep::new().with_max_matches(1), json!({"pattern": "."}))
        .await;
    assert_eq!(value["matches"].as_array().unwrap().len(), 1);
    assert_eq!(value["truncated"], true);
}

#[tokio::test]
async fn an_invalid_regex_names_the_position() {
    let ws = project();
    let err = ws.error(Grep::new(), json!({"pattern": "fn main("})).await;
    assert_eq!(err.code(), ErrorCode::InvalidArguments);
    assert!(err.message().contains("unclosed group"), "{err}");
    assert!(
        err.message().contains("fn main(\n"),
        "the error quotes the pattern: {err}"
    );
    assert!(
        err.message().contains("^"),
        "and points at the position: {err}"
    );
}

#[tokio::test]
async fn a_missing_path_is_enoent() {
    let ws = project();
    let err = ws
        .error(Grep::new(), json!({"pattern": "x", "path": "nope"}))
        .await;
    assert_eq!(err.kind(), Some("ENOENT"));
    assert!(err.message().contains("nope"), "{err}");
}

#[test]
fn read_only_and_parallel() {
    let def = ToolDefinition::from_tool(Grep::new()).unwrap();
    assert_eq!(def.tier(), Tier::ReadOnly);
    assert!(def.is_concurrency_safe(&json!({"pattern": "x"})));
}

#[tokio::test]
async fn denied_paths_are_not_searched_and_are_reported() {
    let ws = crate::harness::Workspace::with_policy(|root| {
        tack_sandbox::SandboxPolicy::workspace_write(root).with_denied("secrets/**")
    });
    ws.file("secrets/key.txt", "hello from a secret\n")
        .file("a.txt", "hello\n");
    let out: GrepOutput = ws.output(Grep::new(), json!({"pattern": "hello"})).await;
    assert_eq!(found(&out), [("a.txt", 1)]);
    assert!(
        out.skipped
            .iter()
            .any(|s| s.path.starts_with("secrets") && s.reason.contains("refused")),
        "the denied path is reported: {:?}",
        out.skipped
    );
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_are_not_followed_out_of_the_workspace() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "hello from outside\n").unwrap();
    let ws = workspace_with("a.txt", "hello\n");
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        ws.dir.path().join("link.txt"),
    )
    .unwrap();
    let out: GrepOutput = ws.output(Grep::new(), json!({"pattern": "hello"})).await;
    assert_eq!(found(&out), [("a.txt", 1)]);
    assert_eq!(out.skipped[0].path, "link.txt");
    let err = ws
        .error(tack_tools::ReadFile::new(), json!({"path": "link.txt"}))
        .await;
    assert_eq!(err.kind(), Some("EACCES"), "{err}");
}

/// The `glob` filter goes through the same limits as the `glob` tool.
#[tokio::test]
async fn a_brace_bomb_in_the_glob_filter_is_invalid_arguments() {
    let ws = project();
    let bomb = format!("{}x{}", "{a,".repeat(300), "}".repeat(300));
    let err = ws
        .error(Grep::new(), json!({"pattern": "hello", "glob": bomb}))
        .await;
    assert_eq!(err.code(), ErrorCode::InvalidArguments);
    assert!(
        err.message().contains("`glob` is not a valid glob"),
        "{err}"
    );
    assert!(err.message().contains("at most 16"), "{err}");
}
