//! Checks that the project's Markdown docs name only what exists.
//!
//! The checks are this package's tests (`cargo test -p tack-docs`): every
//! repository path and local link in the docs leads to a file, every Rust
//! item they name in inline code is defined or used somewhere in the
//! workspace's sources, and `docs/design.md` names every crate of the
//! workspace. The library only reads the tree.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Directories never read: build output, installed tools, version control.
const SKIPPED: [&str; 5] = ["target", "node_modules", ".git", "venv", "wip"];

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir` whose name ends with `suffix`, skipping build
/// output and installed tools, sorted.
pub fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if SKIPPED.contains(&name.as_ref()) {
                continue;
            }
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(path),
                Ok(kind) if kind.is_file() && name.ends_with(suffix) => found.push(path),
                _ => {}
            }
        }
    }
    found.sort();
    found
}

/// The docs: the README, everything under `docs/`, and each crate's and
/// example's README.
pub fn docs() -> Vec<PathBuf> {
    let root = root();
    let mut docs = vec![root.join("README.md")];
    docs.extend(files(&root.join("docs"), ".md"));
    for dir in ["crates", "examples"] {
        docs.extend(
            files(&root.join(dir), "README.md")
                .into_iter()
                .filter(|path| !path.components().any(|c| c.as_os_str() == "fixtures")),
        );
    }
    docs
}

/// The lines of a Markdown text outside fenced code blocks.
fn prose_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The inline code spans of a Markdown text, outside fenced blocks.
pub fn inline_code(text: &str) -> Vec<&str> {
    prose_lines(text)
        .flat_map(|line| line.split('`').skip(1).step_by(2))
        .collect()
}

/// The targets of a Markdown text's links, outside fenced blocks.
pub fn link_targets(text: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    for line in prose_lines(text) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(end) = rest.find(')') {
                targets.push(&rest[..end]);
                rest = &rest[end..];
            }
        }
    }
    targets
}

/// Every identifier-like word in the workspace's Rust sources.
pub fn source_words() -> BTreeSet<String> {
    let mut words = BTreeSet::new();
    for file in files(&root(), ".rs") {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        words.extend(
            text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .map(str::to_owned),
        );
    }
    words
}

/// The identifiers of `span` when it names a Rust item: a path of
/// identifiers (`a::B::c`), optionally called (`f()`) or a macro (`m!`),
/// with a type name in it, a `::`, or a call. `None` for anything else
/// (flags, commands, JSON, prose).
pub fn rust_name(span: &str) -> Option<Vec<&str>> {
    let bare = span
        .strip_suffix("()")
        .or_else(|| span.strip_suffix('!'))
        .unwrap_or(span);
    let called = bare.len() != span.len();
    let parts: Vec<&str> = bare.split("::").collect();
    let identifier = |part: &&str| {
        part.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if !parts.iter().all(identifier) {
        return None;
    }
    let type_name = |part: &&str| {
        part.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && part.chars().any(|c| c.is_ascii_lowercase())
    };
    (parts.len() > 1 || called || parts.iter().any(type_name)).then_some(parts)
}

/// Whether `span` is a path inside the repository that must exist.
pub fn repository_path(span: &str) -> Option<&str> {
    const TOP: [&str; 5] = ["crates/", "docs/", "examples/", "tests/", ".ci/"];
    let path = span.split_once(':').map_or(span, |(path, _)| path);
    (TOP.iter().any(|top| path.starts_with(top)) && !path.contains(['*', ' ', '<', '{', '$']))
        .then_some(path)
}
