//! The documentation's commands and links are real.
//!
//! Every `cargo run` command in `README.md` and `docs/**/*.md` — in a code
//! block, or in an inline code span (which may wrap across lines) — runs in
//! CI:
//!
//! * a cookbook example (`-p tack-examples --example NAME`) must exist in
//!   `examples/examples/`, and its test `examples/tests/all/NAME.rs` runs it and
//!   checks what it does;
//! * every other command is run here and must succeed, unless it is listed
//!   in [`NOT_RUN`] with the reason it cannot run in CI.
//!
//! And every relative Markdown link in those files points at a file of the
//! repository (and, into a Markdown file, at one of its headings).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Commands CI cannot run, by a piece of their text, with the reason.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "-m openai",
        "talks to a real model: needs an API key and the network",
    ),
    (
        "-m anthropic",
        "talks to a real model: needs an API key and the network",
    ),
    (
        "--example conformance_server",
        "an MCP server that runs until stopped; tack-mcp's conformance tests start it",
    ),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("examples/ sits in the workspace root")
        .to_path_buf()
}

/// `README.md` and every Markdown file under `docs/`.
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("the docs folder is readable")
            .map(|e| e.expect("a readable entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut files = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut files);
    files
}

/// The code in a Markdown text: each line of a fenced block (without a
/// leading `$ ` prompt or a trailing `# comment`), and each inline code span
/// outside the blocks (whitespace, line breaks included, collapsed to one space).
fn code_pieces(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut prose = String::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            prose.push('\n');
            continue;
        }
        if in_block {
            let line = line.trim().trim_start_matches("$ ");
            let line = line.split(" #").next().unwrap_or(line);
            pieces.push(line.trim().to_owned());
        } else {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    for (i, span) in prose.split('`').enumerate() {
        if i % 2 == 1 {
            pieces.push(span.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    pieces
}

/// Every `cargo run` command of the docs, with the file it is in.
fn cargo_run_commands() -> Vec<(PathBuf, String)> {
    let mut commands = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).expect("a readable Markdown file");
        for piece in code_pieces(&text) {
            if piece.starts_with("cargo run ") {
                commands.push((file.clone(), piece));
            }
        }
    }
    commands
}

/// Splits a shell-like command line into words (double quotes group).
fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let (mut word, mut quoted, mut started) = (String::new(), false, false);
    for c in command.chars() {
        match c {
            '"' => (quoted, started) = (!quoted, true),
            c if c.is_whitespace() && !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            c => (word, started) = (word + &c.to_string(), true),
        }
    }
    if started {
        words.push(word);
    }
    words
}

fn value_after<'a>(words: &'a [String], flag: &str) -> Option<&'a str> {
    let at = words.iter().position(|w| w == flag)?;
    words.get(at + 1).map(String::as_str)
}

#[test]
fn the_docs_have_cargo_run_commands_to_check() {
    let commands = cargo_run_commands();
    let examples: BTreeSet<&str> = commands
        .iter()
        .filter_map(|(_, c)| c.contains("-p tack-examples").then_some(c.as_str()))
        .collect();
    assert!(
        !examples.is_empty(),
        "the cookbook's commands were not found: {commands:#?}"
    );
    // The parser sees commands that wrap across lines in prose.
    assert!(
        commands
            .iter()
            .any(|(_, c)| c == "cargo run -p tack-sandbox --example sandbox"),
        "{commands:#?}"
    );
}

#[test]
fn every_cookbook_example_in_the_docs_exists_and_has_a_test() {
    let root = root();
    for (file, command) in cargo_run_commands() {
        let words = words(&command);
        if value_after(&words, "-p") != Some("tack-examples") {
            continue;
        }
        let name = value_after(&words, "--example")
            .unwrap_or_else(|| panic!("{}: `{command}` names no example", file.display()));
        let source = root.join("examples/examples").join(format!("{name}.rs"));
        assert!(
            source.is_file(),
            "{}: `{command}`: there is no {}",
            file.display(),
            source.display()
        );
        let test = root.join("examples/tests/all").join(format!("{name}.rs"));
        let test_text = std::fs::read_to_string(&test).unwrap_or_else(|_| {
            panic!(
                "{}: `{command}`: the example has no test {} (each example's test runs it)",
                file.display(),
                test.display()
            )
        });
        assert!(
            test_text.contains(&format!("\"{name}\"")),
            "{} does not run the example `{name}`",
            test.display()
        );
    }
}

#[test]
fn every_other_cargo_run_command_in_the_docs_runs() {
    let root = root();
    let state = tempfile::tempdir().unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut ran = BTreeSet::new();
    for (file, command) in cargo_run_commands() {
        let words = words(&command);
        if value_after(&words, "-p") == Some("tack-examples") {
            continue; // run by the example's own test
        }
        if let Some((_, reason)) = NOT_RUN.iter().find(|(piece, _)| command.contains(piece)) {
            eprintln!("not run: `{command}` ({reason})");
            continue;
        }
        if !ran.insert(command.clone()) {
            continue;
        }
        let mut args: Vec<String> = words[2..].to_vec();
        args.insert(0, "-q".to_owned());
        let output = Command::new(&cargo)
            .arg("run")
            .args(&args)
            .current_dir(&root)
            .env("XDG_STATE_HOME", state.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}: `{command}` failed ({}); run it in CI here, or list it in NOT_RUN with the reason:\n--- stdout\n{}\n--- stderr\n{}",
            file.display(),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    assert!(!ran.is_empty(), "no command was run");
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut in_block = false;
    let mut found = BTreeSet::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
        } else if !in_block && line.starts_with('#') {
            found.insert(anchor(line.trim_start_matches('#')));
        }
    }
    found
}

/// The targets of the inline links `[text](target)` outside code.
fn link_targets(markdown: &str) -> Vec<String> {
    let mut prose = String::new();
    let mut in_block = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
        } else if !in_block {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    let prose: String = prose
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join(" ");
    prose
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(|target| target.split_whitespace().next().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn every_relative_link_in_the_docs_resolves_inside_the_repository() {
    let root = root().canonicalize().unwrap();
    let mut checked = 0;
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = match target.split_once('#') {
                Some((path, fragment)) => (path, Some(fragment)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            let resolved = resolved.canonicalize().unwrap_or_else(|_| {
                panic!("{}: the link `{target}` points at nothing", file.display())
            });
            assert!(
                resolved.starts_with(&root),
                "{}: the link `{target}` leaves the repository",
                file.display()
            );
            if let Some(fragment) =
                fragment.filter(|_| resolved.extension().is_some_and(|e| e == "md"))
            {
                let headings = anchors(&std::fs::read_to_string(&resolved).unwrap());
                assert!(
                    headings.contains(fragment),
                    "{}: the link `{target}` names no heading of {} (it has {headings:?})",
                    file.display(),
                    resolved.display()
                );
            }
            checked += 1;
        }
    }
    assert!(
        checked > 20,
        "only {checked} links found: is the parser broken?"
    );
}

#[test]
fn the_cookbook_index_lists_every_example() {
    let index = std::fs::read_to_string(root().join("docs/cookbook/README.md")).unwrap();
    let dir = root().join("examples/examples");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
        assert!(
            index.contains(&format!("| `{name}` |")),
            "docs/cookbook/README.md has no row for the example `{name}`"
        );
    }
}

#[test]
fn the_shell_word_splitter_keeps_quoted_words() {
    assert_eq!(
        words(r#"cargo run -p tack-cli -- run "读文件 README.md""#),
        [
            "cargo",
            "run",
            "-p",
            "tack-cli",
            "--",
            "run",
            "读文件 README.md"
        ]
    );
    assert_eq!(
        code_pieces("see `cargo run -p a --example\nb` and\n```sh\n$ cargo run -p c # note\n```\n"),
        ["cargo run -p c", "cargo run -p a --example b"]
    );
    assert_eq!(
        anchor("Gate calls: `tools/pre-execute`"),
        "gate-calls-toolspre-execute"
    );
}
