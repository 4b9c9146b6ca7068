//! `grep`: lines matching a regular expression, `.gitignore` respected.

use std::path::Path;

use globset::GlobMatcher;
use regex::RegexBuilder;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tack_core::capability::EntryKind;
use tack_core::context::ToolRunContext;
use tack_core::tool::{Content, Tier, Tool, ToolError};

use crate::glob::search_base;
use crate::glob_pattern::compile_glob;
use crate::text::{NotText, clip_line, decode_text};
use crate::walk::{
    SkippedPath, WalkLimits, WalkedFile, check_cancelled, push_ignored_note, push_incomplete_note,
    walk,
};

/// How many skipped files are named in the output (all are counted).
const MAX_SKIPPED_NAMED: usize = 20;
/// The longest matching line shown, in characters.
const MAX_LINE_CHARS: usize = 300;

/// The arguments of `grep`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// The regular expression to search for (Rust `regex` syntax, like
    /// ripgrep's: `fn\s+main`, `TODO|FIXME`, `log\.(warn|error)`). Escape
    /// literal metacharacters: `\.`, `\(`.
    pub pattern: String,
    /// The file or directory to search (default: the workspace root).
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files matching this glob: without a `/` it matches file
    /// names (`*.rs`), with one it matches paths relative to `path` (`src/**/*.rs`).
    #[serde(default)]
    pub glob: Option<String>,
    /// Match letters regardless of case (default false).
    #[serde(default)]
    pub case_insensitive: bool,
}

/// One matching line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GrepMatch {
    /// The file, usable as a path for the other tools.
    pub path: String,
    /// The line number, from 1.
    pub line_number: u64,
    /// The line (long lines are cut, with `…`).
    pub line: String,
}

/// What `grep` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GrepOutput {
    /// The pattern as given.
    pub pattern: String,
    /// The file or directory searched.
    pub path: String,
    /// The matching lines, by file path then line number.
    pub matches: Vec<GrepMatch>,
    /// How many files were searched.
    pub files_searched: u64,
    /// Whether the search stopped at the match cap (more matches may exist).
    pub truncated: bool,
    /// How many entries `.gitignore` rules (and `.git`) excluded.
    pub ignored: u64,
    /// How many files or directories could not be searched (binary, not
    /// UTF-8, too large, refused, unreadable).
    pub skipped_total: u64,
    /// The first of them, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedPath>,
    /// Set when the walk stopped at a depth or size limit, saying which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

/// The `grep` tool: walks a directory through the `fs` capability (respecting
/// `.gitignore`, skipping `.git`), reads each text file through it and
/// returns the lines matching a regex, capped at
/// [`max_matches`](Self::with_max_matches). Binary, non-UTF-8, oversized and
/// refused files are skipped and reported.
#[derive(Clone, Debug)]
pub struct Grep {
    max_matches: usize,
    max_file_bytes: u64,
    limits: WalkLimits,
}

impl Default for Grep {
    fn default() -> Self {
        Self {
            max_matches: 200,
            max_file_bytes: 2 * 1024 * 1024,
            limits: WalkLimits {
                max_depth: 32,
                max_entries: 100_000,
            },
        }
    }
}

impl Grep {
    /// The tool with its defaults: 200 matches, files up to 2 MiB, 32 levels,
    /// 100,000 entries walked.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the most matching lines one call returns.
    pub fn with_max_matches(mut self, matches: usize) -> Self {
        self.max_matches = matches.max(1);
        self
    }

    /// Sets the largest file searched.
    pub fn with_max_file_bytes(mut self, bytes: u64) -> Self {
        self.max_file_bytes = bytes;
        self
    }

    /// Sets how deep and how far the walk goes.
    pub fn with_walk_limits(mut self, max_depth: usize, max_entries: usize) -> Self {
        self.limits = WalkLimits {
            max_depth,
            max_entries,
        };
        self
    }
}

/// What is wrong with a pattern the `regex` crate refused, and how to fix it.
fn regex_error(error: &regex::Error) -> String {
    match error {
        regex::Error::CompiledTooBig(limit) => format!(
            "`pattern` is too large once compiled (over {limit} bytes): use smaller counted \
             repetitions than `{{1000}}`, fewer alternatives, or ASCII classes (`[a-z]`, \
             `(?-u:\\w)`) instead of Unicode ones"
        ),
        error => format!(
            "`pattern` is not a valid regular expression (Rust `regex` syntax; escape a \
             special character with `\\` to match it literally, or nest groups less \
             deeply):\n{error}"
        ),
    }
}

/// The glob filter: by file name when the glob has no `/`, else by relative path.
struct FileFilter {
    matcher: GlobMatcher,
    by_name: bool,
}

impl FileFilter {
    fn admits(&self, rel: &str) -> bool {
        if self.by_name {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            self.matcher.is_match(name)
        } else {
            self.matcher.is_match(rel)
        }
    }
}

impl Tool for Grep {
    const NAME: &'static str = "grep";
    type Args = GrepArgs;
    type Output = GrepOutput;

    fn description(&self) -> &str {
        "Search file contents with a regular expression and return the matching lines \
         with their file and line number. Use it to find where something is defined or \
         used (a function, an error message, a config key) before reading the files. \
         Narrow it with `path` and `glob` (e.g. `*.rs`); set `case_insensitive` for \
         either case. Files ignored by `.gitignore`, the `.git` directory and binary \
         files are skipped. To find files by name, use `glob`."
    }

    fn tier(&self) -> Tier {
        Tier::ReadOnly
    }

    fn timeout(&self) -> Option<std::time::Duration> {
        // The search checks the cancellation signal between files.
        Some(std::time::Duration::from_secs(60))
    }

    fn is_concurrency_safe(&self, _args: &GrepArgs) -> bool {
        true
    }

    async fn execute(&self, args: GrepArgs, cx: &ToolRunContext) -> Result<GrepOutput, ToolError> {
        let regex = RegexBuilder::new(&args.pattern)
            .case_insensitive(args.case_insensitive)
            .build()
            .map_err(|e| ToolError::invalid_arguments(regex_error(&e)))?;
        let filter = match args.glob.as_deref() {
            None => None,
            Some(glob) => Some(FileFilter {
                matcher: compile_glob("glob", glob)?,
                by_name: !glob.contains('/'),
            }),
        };
        let fs = cx.fs()?;
        let base = search_base(args.path.as_deref());
        let meta = fs.metadata(Path::new(&base)).await?;
        let (files, mut skipped, ignored, incomplete) = if meta.kind == EntryKind::Dir {
            let found = walk(cx, &base, self.limits).await?;
            (found.files, found.skipped, found.ignored, found.limit_hit)
        } else {
            let name = base.rsplit('/').next().unwrap_or(&base).to_owned();
            let file = WalkedFile {
                path: base.clone(),
                rel: name,
                kind: meta.kind,
                size: meta.size,
            };
            (vec![file], Vec::new(), 0, None)
        };

        let mut matches = Vec::new();
        let mut files_searched = 0u64;
        let mut truncated = false;
        for file in &files {
            if filter.as_ref().is_some_and(|f| !f.admits(&file.rel)) {
                continue;
            }
            check_cancelled(cx)?;
            let reason = match file.kind {
                EntryKind::File if file.size > self.max_file_bytes => Some(format!(
                    "{} bytes, over grep's limit of {} bytes",
                    file.size, self.max_file_bytes
                )),
                EntryKind::File => None,
                _ => Some("a symlink or special file, not followed".to_owned()),
            };
            if let Some(reason) = reason {
                skipped.push(SkippedPath {
                    path: file.path.clone(),
                    reason,
                });
                continue;
            }
            let bytes = match fs
                .read(Path::new(&file.path), Some(self.max_file_bytes))
                .await
            {
                Ok(read) if read.truncated => {
                    skipped.push(SkippedPath {
                        path: file.path.clone(),
                        reason: format!("over grep's limit of {} bytes", self.max_file_bytes),
                    });
                    continue;
                }
                Ok(read) => read.bytes,
                Err(err) => {
                    // Refused, vanished, unreadable: report it and search on.
                    skipped.push(SkippedPath {
                        path: file.path.clone(),
                        reason: err.to_string(),
                    });
                    continue;
                }
            };
            let text = match decode_text(&bytes, false) {
                Ok(text) => text,
                Err(NotText::Nul(_)) => {
                    skipped.push(SkippedPath {
                        path: file.path.clone(),
                        reason: "binary".into(),
                    });
                    continue;
                }
                Err(NotText::InvalidUtf8(at)) => {
                    skipped.push(SkippedPath {
                        path: file.path.clone(),
                        reason: format!("not UTF-8 text (invalid byte at offset {at})"),
                    });
                    continue;
                }
            };
            files_searched += 1;
            for (i, line) in text.lines().enumerate() {
                if regex.is_match(line) {
                    if matches.len() == self.max_matches {
                        truncated = true;
                        break;
                    }
                    matches.push(GrepMatch {
                        path: file.path.clone(),
                        line_number: i as u64 + 1,
                        line: clip_line(line, MAX_LINE_CHARS),
                    });
                }
            }
            if truncated {
                break;
            }
        }
        let skipped_total = skipped.len() as u64;
        skipped.truncate(MAX_SKIPPED_NAMED);
        Ok(GrepOutput {
            pattern: args.pattern,
            path: base,
            matches,
            files_searched,
            truncated,
            ignored,
            skipped_total,
            skipped,
            incomplete,
        })
    }

    fn render(&self, _args: &GrepArgs, out: &GrepOutput) -> Content {
        let mut text = String::new();
        if out.matches.is_empty() {
            text.push_str(&format!(
                "No matches for /{}/ in {} ({} files searched).",
                out.pattern, out.path, out.files_searched
            ));
        }
        for m in &out.matches {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("{}:{}: {}", m.path, m.line_number, m.line));
        }
        if out.truncated {
            text.push_str(&format!(
                "\n[stopped at {} matches; narrow the pattern, path or glob to see the rest]",
                out.matches.len()
            ));
        }
        push_ignored_note(&mut text, out.ignored);
        if out.skipped_total > 0 {
            let named: Vec<String> = out
                .skipped
                .iter()
                .map(|s| format!("{} ({})", s.path, s.reason))
                .collect();
            let more = out.skipped_total - out.skipped.len() as u64;
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            text.push_str(&format!(
                "\n[{} not searched: {}{more}]",
                out.skipped_total,
                named.join(", ")
            ));
        }
        push_incomplete_note(&mut text, out.incomplete.as_deref());
        Content::text(text)
    }

    fn present_call(&self, args: &GrepArgs) -> Option<String> {
        let mut text = format!("Grep /{}/", args.pattern);
        if let Some(path) = &args.path {
            text.push_str(&format!(" in {path}"));
        }
        if let Some(glob) = &args.glob {
            text.push_str(&format!(" ({glob})"));
        }
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;
    use crate::mem_fs::MemFs;
    use tack_core::tool::ErrorCode;

    fn fs() -> MemFs {
        MemFs::new()
            .file(".gitignore", "*.log\n")
            .file("src/lib.rs", "fn main() {}\n// TODO: more\n")
            .file("src/util.py", "def main():\n    pass\n")
            .file("app.log", "fn main() in a log\n")
            .file("logo.png", b"\x89PNG\0fn main")
            .file("secret/key.rs", "fn main() {}")
            .refuse("secret")
    }

    async fn grep(tool: Grep, args: Value) -> Result<GrepOutput, ToolError> {
        fs().run(tool, args).await
    }

    fn found(out: &GrepOutput) -> Vec<(&str, u64)> {
        out.matches
            .iter()
            .map(|m| (m.path.as_str(), m.line_number))
            .collect()
    }

    #[tokio::test]
    async fn matches_respect_gitignore_and_report_what_was_skipped() {
        let out = grep(Grep::new(), json!({"pattern": "main"})).await.unwrap();
        assert_eq!(found(&out), [("src/lib.rs", 1), ("src/util.py", 1)]);
        assert_eq!(out.ignored, 1);
        let skipped: Vec<(&str, &str)> = out
            .skipped
            .iter()
            .map(|s| (s.path.as_str(), s.reason.as_str()))
            .collect();
        assert_eq!(skipped[0].0, "secret");
        assert!(skipped[0].1.contains("refused"));
        assert_eq!(skipped[1], ("logo.png", "binary"));
        assert_eq!(out.skipped_total, 2);
    }

    #[tokio::test]
    async fn glob_filters_by_name_and_case_can_be_ignored() {
        let out = grep(Grep::new(), json!({"pattern": "TODO", "glob": "*.rs"}))
            .await
            .unwrap();
        assert_eq!(found(&out), [("src/lib.rs", 2)]);
        let out = grep(
            Grep::new(),
            json!({"pattern": "DEF", "case_insensitive": true}),
        )
        .await
        .unwrap();
        assert_eq!(found(&out), [("src/util.py", 1)]);
        let out = grep(
            Grep::new(),
            json!({"pattern": "pass", "path": "src/util.py"}),
        )
        .await
        .unwrap();
        assert_eq!(found(&out), [("src/util.py", 2)]);
    }

    #[tokio::test]
    async fn the_match_cap_stops_the_search_and_says_so() {
        let out = grep(Grep::new().with_max_matches(1), json!({"pattern": "."}))
            .await
            .unwrap();
        assert_eq!(out.matches.len(), 1);
        assert!(out.truncated);
    }

    #[tokio::test]
    async fn a_regex_too_large_or_too_deep_is_refused_with_a_fix() {
        let err = grep(Grep::new(), json!({"pattern": "\\w{1000}{1000}"}))
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArguments);
        assert!(err.message().contains("too large once compiled"), "{err}");
        assert!(err.message().contains("ASCII classes"), "{err}");
        let deep = format!("{}a{}", "(".repeat(300), ")".repeat(300));
        let err = grep(Grep::new(), json!({"pattern": deep}))
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArguments);
        assert!(err.message().contains("nested parentheses"), "{err}");
        assert!(err.message().contains("nest groups less deeply"), "{err}");
    }

    #[tokio::test]
    async fn an_invalid_regex_names_the_position() {
        let err = grep(Grep::new(), json!({"pattern": "fn (main"}))
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArguments);
        assert!(err.message().contains("unclosed group"), "{err}");
        assert!(err.message().contains("    ^"), "{err}");
    }
}
