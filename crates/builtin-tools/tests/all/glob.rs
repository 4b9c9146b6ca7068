//! glob on a real workspace.

use pretty_assertions::assert_eq;
use serde_json::json;
use tack_core::tool::{ErrorCode, Tier, ToolDefinition};
use tack_tools::{Glob, GlobOutput};

use crate::harness::{Workspace, assert_golden};

pub fn project() -> Workspace {
    let ws = Workspace::new();
    ws.file(".gitignore", "target/\n*.log\n")
        .file("Cargo.toml", "[package]\nname = \"demo\"\n")
        .file("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n")
        .file(
            "src/lib.rs",
            "// TODO: write the library\npub fn hello() -> &'static str { \"hello\" }\n",
        )
        .file("src/util/mod.rs", "pub mod strings;\n")
        .file("src/util/.gitignore", "generated.rs\n")
        .file("src/util/generated.rs", "// hello from the generator\n")
        .file("assets/logo.png", b"\x89PNG\r\n\x1a\n\0\0hello")
        .file("build.log", "hello from the build\n")
        .file("target/debug/out.rs", "hello\n")
        .file(".git/HEAD", "ref: refs/heads/main\n");
    ws
}

#[tokio::test]
async fn finds_files_by_pattern_respecting_gitignore() {
    let ws = project();
    let value = ws
        .call(Glob::new(), json!({"pattern": "**/*.rs"}))
        .await
        .unwrap();
    let out: GlobOutput = serde_json::from_value(value).unwrap();
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
        .call(Glob::new(), json!({"pattern": "*.rs", "path": "src"}))
        .await
        .unwrap();
    assert_eq!(value["matches"], json!(["src/lib.rs", "src/main.rs"]));
}

#[tokio::test]
async fn an_invalid_glob_names_the_problem() {
    let ws = project();
    let err = ws
        .call(Glob::new(), json!({"pattern": "src/{a,b"}))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArguments);
    assert!(
        err.message().contains("`pattern` is not a valid glob"),
        "{err}"
    );
    assert!(err.message().contains("unclosed alternate group"), "{err}");
}

#[tokio::test]
async fn a_missing_directory_is_enoent() {
    let ws = project();
    let err = ws
        .call(Glob::new(), json!({"pattern": "*", "path": "nope"}))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), Some("ENOENT"));
    assert!(err.message().contains("nope"), "{err}");
}

#[test]
fn read_only_and_parallel() {
    let def = ToolDefinition::from_tool(Glob::new()).unwrap();
    assert_eq!(def.tier(), Tier::ReadOnly);
    assert!(def.is_concurrency_safe(&json!({"pattern": "*"})));
}
