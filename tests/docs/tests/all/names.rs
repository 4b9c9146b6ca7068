//! The docs name only what exists: a renamed type, a moved file or a
//! dropped crate fails here until the docs follow.

use std::collections::BTreeSet;

use tack_docs::{docs, inline_code, link_targets, repository_path, root, rust_name, source_words};

/// Names in the docs that are not this workspace's Rust items on purpose:
/// placeholders of the plugin guide, Claude Code's tool names, libc's
/// functions.
const NOT_OURS: [&str; 7] = [
    "XConfig",
    "XPlugin",
    "Task",
    "WebSearch",
    "WebFetch",
    "NotebookEdit",
    "daemon",
];

fn relative(path: &std::path::Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn every_repository_path_and_local_link_in_the_docs_exists() {
    let root = root();
    let mut missing = Vec::new();
    for doc in docs() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for span in inline_code(&text) {
            if let Some(path) = repository_path(span) {
                if !root.join(path).exists() {
                    missing.push(format!("{}: `{span}`", relative(&doc)));
                }
            }
        }
        for target in link_targets(&text) {
            let target = target.split('#').next().unwrap_or_default();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let dir = doc.parent().unwrap();
            if !dir.join(target).exists() {
                missing.push(format!("{}: link to {target}", relative(&doc)));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the docs name files that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_rust_item_named_in_the_docs_exists() {
    let words = source_words();
    let mut missing = Vec::new();
    for doc in docs() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for span in inline_code(&text) {
            let Some(parts) = rust_name(span) else {
                continue;
            };
            if parts
                .iter()
                .any(|part| !words.contains(*part) && !NOT_OURS.contains(part))
            {
                missing.push(format!("{}: `{span}`", relative(&doc)));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the docs name Rust items no source defines or uses:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_design_doc_names_every_crate() {
    let root = root();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members = manifest
        .split("members = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap();
    let design = std::fs::read_to_string(root.join("docs/design.md")).unwrap();
    let mut unnamed = BTreeSet::new();
    for member in members
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
    {
        let package = std::fs::read_to_string(root.join(member).join("Cargo.toml")).unwrap();
        let name = package
            .lines()
            .find_map(|line| line.strip_prefix("name = "))
            .unwrap()
            .trim_matches('"');
        if !design.contains(&format!("`{name}`")) {
            unnamed.insert(name.to_owned());
        }
    }
    assert!(
        unnamed.is_empty(),
        "docs/design.md does not name these crates: {unnamed:?}"
    );
}

#[test]
fn the_checks_catch_what_they_look_for() {
    assert_eq!(rust_name("ToolExecution"), Some(vec!["ToolExecution"]));
    assert_eq!(
        rust_name("tack_core::Next"),
        Some(vec!["tack_core", "Next"])
    );
    assert_eq!(rust_name("run_turn()"), Some(vec!["run_turn"]));
    assert_eq!(rust_name("--model"), None);
    assert_eq!(rust_name("read_file"), None);
    assert_eq!(rust_name("{\"a\": 1}"), None);
    assert_eq!(
        repository_path("crates/core/src/lib.rs:12"),
        Some("crates/core/src/lib.rs")
    );
    assert_eq!(repository_path("crates/*/Cargo.toml"), None);
    assert_eq!(inline_code("a `b` c `d`\n```\n`e`\n```\n"), vec!["b", "d"]);
    assert_eq!(
        link_targets("[x](../a.md#b) and [y](https://z)"),
        vec!["../a.md#b", "https://z"]
    );
}
