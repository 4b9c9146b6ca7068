//! No crate's top-level modules depend on each other in a cycle: each
//! module of a crate can be read, and moved to a crate of its own, after the
//! modules it uses.
//!
//! A module `a` uses module `b` when code in `a` (its file, or any file
//! under it; not comments, not its `#[cfg(test)]` tests) names
//! `crate::b` — or reaches it through `super::`. The crate root (`lib.rs`,
//! `main.rs`) is not a module here: re-exporting is not depending.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;
use tack_docs::root;

/// The workspace's crates: each directory with a `Cargo.toml` and `src/`.
fn crates() -> Vec<PathBuf> {
    let mut found = Vec::new();
    for group in ["crates", "crates/plugins", "tests", "."] {
        let Ok(entries) = std::fs::read_dir(root().join(group)) else {
            continue;
        };
        for entry in entries.flatten() {
            let dir = entry.path();
            if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
                found.push(dir);
            }
        }
    }
    let examples = root().join("examples");
    if examples.join("src").is_dir() {
        found.push(examples);
    }
    found.sort();
    found.dedup();
    found
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a source file of the crate whose `src` is `src`
/// (`src/a/b.rs` and `src/a/b/mod.rs` are `[a, b]`; the root is `[]`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).expect("a file under src");
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_owned());
    }
    parts
}

/// The code of a file without comments and without its trailing
/// `#[cfg(test)]` module.
fn code(text: &str) -> String {
    let text = match text.find("\n#[cfg(test)]\nmod ") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The crate's top-level modules each top-level module uses.
fn module_graph(krate: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let src = krate.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let top: BTreeSet<String> = files
        .iter()
        .filter_map(|f| module_path(&src, f).first().cloned())
        .collect();
    // What the crate root re-exports, by name: `crate::Name` uses the
    // module `Name` comes from.
    let mut exported: BTreeMap<String, String> = BTreeMap::new();
    let root_use = Regex::new(r"(?s)\bpub\s+use\s+([a-z_][a-z0-9_]*)\s*::\s*([^;]*);").unwrap();
    let item = Regex::new(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:,|\}|$)").unwrap();
    for root_file in ["lib.rs", "main.rs"] {
        let Ok(text) = std::fs::read_to_string(src.join(root_file)) else {
            continue;
        };
        for m in root_use.captures_iter(&code(&text)) {
            if !top.contains(&m[1]) {
                continue;
            }
            for name in item.captures_iter(&m[2]) {
                exported.insert(name[1].to_owned(), m[1].to_owned());
            }
        }
    }
    // `crate::a`, `crate::Name`, `crate::{a, b::c, Name}`, `super::…::a`.
    let crate_path = Regex::new(r"\bcrate\s*::\s*([A-Za-z_][A-Za-z0-9_]*)").unwrap();
    let crate_group = Regex::new(r"\bcrate\s*::\s*\{([^}]*)").unwrap();
    let super_path = Regex::new(r"\b((?:super\s*::\s*)+)([a-z_][a-z0-9_]*)").unwrap();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let path = module_path(&src, file);
        let Some(from) = path.first().cloned() else {
            continue; // the crate root
        };
        if path.last().is_some_and(|m| m == "tests") {
            continue;
        }
        let text = code(&std::fs::read_to_string(file).unwrap());
        let mut used = BTreeSet::new();
        for m in crate_path.captures_iter(&text) {
            used.insert(m[1].to_owned());
        }
        for m in crate_group.captures_iter(&text) {
            for item in m[1].split(',') {
                let first = item.trim().split("::").next().unwrap_or_default().trim();
                used.insert(first.to_owned());
            }
        }
        // `super` climbs from the module the code is in: as many as the
        // module's depth reach the crate root.
        for m in super_path.captures_iter(&text) {
            let ups = m[1].matches("super").count();
            if ups >= path.len() {
                used.insert(m[2].to_owned());
            }
        }
        let entry = graph.entry(from.clone()).or_default();
        for name in used {
            let name = exported.get(&name).cloned().unwrap_or(name);
            if name != from && top.contains(&name) {
                entry.insert(name);
            }
        }
    }
    graph
}

/// The strongly connected components with more than one module (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn the_checker_finds_a_cycle_through_crate_and_super_paths() {
    let dir = std::env::temp_dir().join(format!("tack-modules-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("b")).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "pub mod a;\npub mod b;\npub mod c;\nmod d;\npub use c::C;\npub use d::{\n    D,\n};\n",
    )
    .unwrap();
    std::fs::write(src.join("a.rs"), "use crate::{b::Thing, c};\n").unwrap();
    std::fs::write(src.join("b/mod.rs"), "mod inner;\n").unwrap();
    std::fs::write(
        src.join("b/inner.rs"),
        "use super::super::a::X;\n// crate::c\n",
    )
    .unwrap();
    std::fs::write(src.join("c.rs"), "pub struct C;\nfn f(_: crate::D) {}\n").unwrap();
    std::fs::create_dir_all(src.join("d")).unwrap();
    std::fs::write(src.join("d/mod.rs"), "pub struct D;\nuse crate::C;\n").unwrap();
    let graph = module_graph(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    let mut found = cycles(&graph);
    found.sort();
    assert_eq!(
        found,
        [
            vec!["a".to_owned(), "b".to_owned()],
            vec!["c".to_owned(), "d".to_owned()]
        ],
        "{graph:?}"
    );
}

#[test]
fn no_crate_has_modules_in_a_cycle() {
    let mut found = Vec::new();
    for krate in crates() {
        let name = krate
            .strip_prefix(root())
            .unwrap_or(&krate)
            .display()
            .to_string();
        for cycle in cycles(&module_graph(&krate)) {
            found.push(format!("{name}: {}", cycle.join(" ↔ ")));
        }
    }
    assert!(
        found.is_empty(),
        "modules that depend on each other in a cycle (move what they share into a module both use):\n{}",
        found.join("\n")
    );
}
