//! `glob`: file paths matching a glob pattern, `.gitignore` respected.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tack_core::context::ToolRunContext;
use tack_core::tool::{Content, Tier, Tool, ToolError};

use crate::glob_pattern::compile_glob;

use crate::walk::{SkippedPath, WalkLimits, push_ignored_note, push_incomplete_note, walk};

/// The arguments of `glob`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// The pattern, matched against paths relative to `path`: `*` matches within
    /// one directory level, `**` across levels, `?` one character, `[ab]` and
    /// `{a,b}` alternatives. E.g. `**/*.rs`, `src/*.toml`, `**/test_*.py`.
    pub pattern: String,
    /// The directory to search (default: the workspace root).
    #[serde(default)]
    pub path: Option<String>,
}

/// What `glob` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GlobOutput {
    /// The pattern as given.
    pub pattern: String,
    /// The directory searched.
    pub path: String,
    /// The matching files, sorted by path, usable as paths for the other tools.
    pub matches: Vec<String>,
    /// How many files matched; more than `matches.len()` when capped.
    pub total_matches: u64,
    /// Whether matches were left out because of the cap.
    pub truncated: bool,
    /// How many entries `.gitignore` rules (and `.git`) excluded.
    pub ignored: u64,
    /// Directories that could not be searched, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedPath>,
    /// Set when the search stopped at a depth or size limit, saying which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

/// The `glob` tool: walks a directory through the `fs` capability (respecting
/// `.gitignore`, skipping `.git`) and returns the files whose path matches a
/// glob, capped at [`max_results`](Self::with_max_results).
#[derive(Clone, Debug)]
pub struct Glob {
    max_results: usize,
    limits: WalkLimits,
}

impl Default for Glob {
    fn default() -> Self {
        Self {
            max_results: 500,
            limits: WalkLimits {
                max_depth: 32,
                max_entries: 200_000,
            },
        }
    }
}

impl Glob {
    /// The tool with its defaults: 500 paths, 32 levels, 200,000 entries walked.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the most paths one call returns.
    pub fn with_max_results(mut self, results: usize) -> Self {
        self.max_results = results.max(1);
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

/// The directory a search starts from: `.` by default, without a trailing `/`.
pub(crate) fn search_base(path: Option<&str>) -> String {
    match path.map(str::trim) {
        None | Some("") => ".".to_owned(),
        Some("/") => "/".to_owned(),
        Some(p) => p.trim_end_matches('/').to_owned(),
    }
}

impl Tool for Glob {
    const NAME: &'static str = "glob";
    type Args = GlobArgs;
    type Output = GlobOutput;

    fn description(&self) -> &str {
        "Find files by name: return the paths below a directory that match a glob \
         pattern, such as `**/*.rs` (all Rust files) or `src/**/mod.rs`. Use it to locate \
         files when you know part of their name or extension. Files ignored by \
         `.gitignore` and the `.git` directory are skipped. To search file contents, \
         use `grep`; to see one directory, use `list_dir`."
    }

    fn tier(&self) -> Tier {
        Tier::ReadOnly
    }

    fn timeout(&self) -> Option<std::time::Duration> {
        // The walk checks the cancellation signal between directories.
        Some(std::time::Duration::from_secs(60))
    }

    fn is_concurrency_safe(&self, _args: &GlobArgs) -> bool {
        true
    }

    async fn execute(&self, args: GlobArgs, cx: &ToolRunContext) -> Result<GlobOutput, ToolError> {
        let matcher = compile_glob("pattern", &args.pattern)?;
        let base = search_base(args.path.as_deref());
        let found = walk(cx, &base, self.limits).await?;
        let mut matches = Vec::new();
        let mut total = 0u64;
        for file in found.files.iter().filter(|f| matcher.is_match(&f.rel)) {
            total += 1;
            if matches.len() < self.max_results {
                matches.push(file.path.clone());
            }
        }
        Ok(GlobOutput {
            pattern: args.pattern,
            path: base,
            truncated: (matches.len() as u64) < total,
            matches,
            total_matches: total,
            ignored: found.ignored,
            skipped: found.skipped,
            incomplete: found.limit_hit,
        })
    }

    fn render(&self, _args: &GlobArgs, out: &GlobOutput) -> Content {
        let mut text = if out.matches.is_empty() {
            format!("No files below {} match {}.", out.path, out.pattern)
        } else {
            out.matches.join("\n")
        };
        if out.truncated {
            text.push_str(&format!(
                "\n[showing {} of {} matching files; use a more specific pattern or path]",
                out.matches.len(),
                out.total_matches
            ));
        }
        push_ignored_note(&mut text, out.ignored);
        for skipped in &out.skipped {
            text.push_str(&format!(
                "\n[{} not searched: {}]",
                skipped.path, skipped.reason
            ));
        }
        push_incomplete_note(&mut text, out.incomplete.as_deref());
        Content::text(text)
    }

    fn present_call(&self, args: &GlobArgs) -> Option<String> {
        Some(match &args.path {
            Some(path) => format!("Glob {} in {path}", args.pattern),
            None => format!("Glob {}", args.pattern),
        })
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
            .file(".gitignore", "target/\n")
            .file("Cargo.toml", "")
            .file("src/lib.rs", "")
            .file("src/a/mod.rs", "")
            .file("target/gen.rs", "")
    }

    async fn glob(tool: Glob, args: Value) -> Result<GlobOutput, ToolError> {
        fs().run(tool, args).await
    }

    #[tokio::test]
    async fn double_star_crosses_directories_and_star_does_not() {
        let out = glob(Glob::new(), json!({"pattern": "**/*.rs"}))
            .await
            .unwrap();
        assert_eq!(out.matches, ["src/a/mod.rs", "src/lib.rs"]);
        assert_eq!(out.ignored, 1);
        let out = glob(Glob::new(), json!({"pattern": "*.rs", "path": "src"}))
            .await
            .unwrap();
        assert_eq!(out.matches, ["src/lib.rs"]);
    }

    #[tokio::test]
    async fn capped_results_say_how_many_matched() {
        let out = glob(
            Glob::new().with_max_results(1),
            json!({"pattern": "**/*.rs"}),
        )
        .await
        .unwrap();
        assert_eq!(
            (out.matches.len(), out.total_matches, out.truncated),
            (1, 2, true)
        );
        let text = Glob::new().render(
            &GlobArgs {
                pattern: "**/*.rs".into(),
                path: None,
            },
            &out,
        );
        assert!(
            text[0]
                .as_text()
                .unwrap()
                .contains("[showing 1 of 2 matching files;")
        );
    }

    #[tokio::test]
    async fn an_invalid_glob_names_the_problem() {
        let err = glob(Glob::new(), json!({"pattern": "src/[a-"}))
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArguments);
        assert!(
            err.message().contains("`pattern` is not a valid glob"),
            "{err}"
        );
        assert!(err.message().contains("unclosed character class"), "{err}");
    }

    #[test]
    fn search_bases_are_normalized() {
        assert_eq!(search_base(None), ".");
        assert_eq!(search_base(Some("src/")), "src");
        assert_eq!(search_base(Some("/")), "/");
    }
}
