//! Walking a directory tree through the `fs` capability, respecting `.gitignore`.
//!
//! No directory walker that touches the disk itself is used: every listing and
//! every `.gitignore` read goes through [`FileSystem`], so the host's
//! confinement applies. `.gitignore` files are parsed with `ignore`'s
//! [`GitignoreBuilder`] from the text the capability returned.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tack_core::capability::{CapabilityError, EntryKind, FileSystem};
use tack_core::context::ToolRunContext;
use tack_core::tool::ToolError;

use crate::glob_pattern::check_glob_limits;

/// A path a tool did not look into, and why (refused by the policy, binary,
/// too large, unreadable): reported, never dropped silently.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkippedPath {
    /// The path, as the tool would have reported it.
    pub path: String,
    /// Why it was skipped.
    pub reason: String,
}

/// How far a walk may go.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WalkLimits {
    /// Directory levels below the base that are listed.
    pub max_depth: usize,
    /// Directory entries looked at in total.
    pub max_entries: usize,
}

/// A file (or symlink) found by a walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WalkedFile {
    /// The path to report and to open: the base joined with `rel`.
    pub path: String,
    /// The path relative to the walk's base, `/`-separated.
    pub rel: String,
    /// A file or a symlink (not followed).
    pub kind: EntryKind,
    /// Its size in bytes.
    pub size: u64,
}

/// What a walk found.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    /// The files, sorted by path.
    pub files: Vec<WalkedFile>,
    /// Directories (and `.gitignore` files) that could not be read.
    pub skipped: Vec<SkippedPath>,
    /// Entries left out by `.gitignore` rules or because they are `.git`.
    pub ignored: u64,
    /// Set when a limit stopped the walk early, saying which.
    pub limit_hit: Option<String>,
}

/// One directory's `.gitignore`, with the directory it is relative to.
struct IgnoreLayer {
    dir: String,
    matcher: Gitignore,
}

type Chain = Arc<Vec<Arc<IgnoreLayer>>>;

struct Frame {
    dir: String,
    rel: String,
    depth: usize,
    chain: Chain,
}

/// `base` joined with `rel`, `/`-separated; a base of `.` or `` adds nothing.
pub(crate) fn join(base: &str, rel: &str) -> String {
    if base.is_empty() || base == "." {
        rel.to_owned()
    } else if rel.is_empty() {
        base.to_owned()
    } else if base.ends_with('/') {
        format!("{base}{rel}")
    } else {
        format!("{base}/{rel}")
    }
}

/// Whether the chain of `.gitignore` layers ignores `path` (deepest rule wins).
fn is_ignored(chain: &[Arc<IgnoreLayer>], path: &str, is_dir: bool) -> bool {
    for layer in chain.iter().rev() {
        let rel = if layer.dir.is_empty() || layer.dir == "." {
            path
        } else {
            match path
                .strip_prefix(layer.dir.as_str())
                .and_then(|rest| rest.strip_prefix('/'))
            {
                Some(rest) => rest,
                None => continue,
            }
        };
        match layer.matcher.matched(Path::new(rel), is_dir) {
            Match::None => continue,
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
        }
    }
    false
}

/// Parses the text of the `.gitignore` in `dir`. Lines git would reject are
/// skipped, as git does, and so are lines nested or long past what globset
/// can compile.
fn parse_gitignore(dir: &str, text: &str) -> Option<IgnoreLayer> {
    // The root only serves to strip prefixes; paths are matched relative to
    // `dir` already, and an absolute root never prefixes a relative path.
    let mut builder = GitignoreBuilder::new(Path::new("/").join(dir));
    let from = PathBuf::from(join(dir, ".gitignore"));
    for line in text.lines() {
        // A line past globset's limits would make the whole file unusable
        // (or worse); it is skipped like a line git rejects.
        if let Err(limit) = check_glob_limits(line) {
            tracing::debug!(file = %from.display(), %limit, "skipping a .gitignore line");
            continue;
        }
        if let Err(err) = builder.add_line(Some(from.clone()), line) {
            tracing::debug!(file = %from.display(), %err, "skipping a .gitignore line");
        }
    }
    match builder.build() {
        Ok(matcher) if !matcher.is_empty() => Some(IgnoreLayer {
            dir: dir.to_owned(),
            matcher,
        }),
        Ok(_) => None,
        Err(err) => {
            tracing::debug!(file = %from.display(), %err, "unusable .gitignore");
            None
        }
    }
}

/// Reads and parses `dir/.gitignore`; a missing file is no layer, an
/// unreadable one is reported in `skipped`.
async fn load_gitignore(
    fs: &dyn FileSystem,
    dir: &str,
    skipped: &mut Vec<SkippedPath>,
) -> Option<IgnoreLayer> {
    let path = join(dir, ".gitignore");
    match fs.read_to_string(Path::new(&path)).await {
        Ok(text) => parse_gitignore(dir, &text),
        Err(CapabilityError::NotFound { .. }) => None,
        Err(err) => {
            skipped.push(SkippedPath {
                path,
                reason: format!("its rules could not be read, so they were not applied: {err}"),
            });
            None
        }
    }
}

/// The ancestors of a relative `base` within the workspace (`""`, `src`, …),
/// whose `.gitignore` rules also apply below `base`.
fn ancestors(base: &str) -> Vec<String> {
    let path = Path::new(base);
    if path.is_absolute() || base.split('/').any(|c| c == "..") {
        return Vec::new();
    }
    let parts: Vec<&str> = base
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    (0..parts.len()).map(|n| parts[..n].join("/")).collect()
}

/// Fails once the call's cancellation signal has fired: the walk checks it
/// between directories, and a search over the walked files between files.
///
/// # Errors
///
/// `CANCELLED`: "the search was cancelled".
pub(crate) fn check_cancelled(cx: &ToolRunContext) -> Result<(), ToolError> {
    if cx.is_cancelled() {
        return Err(ToolError::cancelled("the search was cancelled"));
    }
    Ok(())
}

/// Appends to a search tool's text the note that `.gitignore` rules (or
/// `.git`) kept `ignored` entries out of the walk; nothing when none were.
pub(crate) fn push_ignored_note(text: &mut String, ignored: u64) {
    if ignored > 0 {
        text.push_str(&format!(
            "\n[{ignored} entries ignored by .gitignore or .git were not searched]"
        ));
    }
}

/// Appends to a search tool's text why the walk stopped early (its
/// [`limit_hit`](Walk::limit_hit)); nothing when it did not.
pub(crate) fn push_incomplete_note(text: &mut String, incomplete: Option<&str>) {
    if let Some(why) = incomplete {
        text.push_str(&format!("\n[incomplete: {why}]"));
    }
}

/// Walks the directory `base` (as the model wrote it), depth first, through
/// the `fs` capability: skips `.git` and whatever `.gitignore` files in `base`,
/// its ancestors and its descendants ignore, does not follow symlinks, and
/// stops at `limits`.
///
/// # Errors
///
/// The `fs` capability is missing, `base` cannot be listed (the error names
/// it: `ENOENT`, `ENOTDIR`, `EACCES` …), or the call was cancelled.
pub(crate) async fn walk(
    cx: &ToolRunContext,
    base: &str,
    limits: WalkLimits,
) -> Result<Walk, ToolError> {
    let fs = cx.fs()?;
    let mut out = Walk::default();
    let mut root_chain = Vec::new();
    for dir in ancestors(base) {
        if let Some(layer) = load_gitignore(fs, &dir, &mut out.skipped).await {
            root_chain.push(Arc::new(layer));
        }
    }
    let mut stack = vec![Frame {
        dir: base.to_owned(),
        rel: String::new(),
        depth: 0,
        chain: Arc::new(root_chain),
    }];
    let mut seen = 0usize;
    while let Some(frame) = stack.pop() {
        check_cancelled(cx)?;
        let entries = match fs.list(Path::new(&frame.dir)).await {
            Ok(entries) => entries,
            Err(err) if frame.depth == 0 => return Err(err.into()),
            Err(err) => {
                out.skipped.push(SkippedPath {
                    path: frame.dir.clone(),
                    reason: err.to_string(),
                });
                continue;
            }
        };
        seen += entries.len();
        if seen > limits.max_entries {
            out.limit_hit = Some(format!(
                "the walk stopped after looking at {} entries; search a narrower path",
                limits.max_entries
            ));
            break;
        }
        let mut chain = frame.chain.clone();
        let has_gitignore = entries
            .iter()
            .any(|e| e.name == ".gitignore" && e.kind == EntryKind::File);
        if has_gitignore {
            if let Some(layer) = load_gitignore(fs, &frame.dir, &mut out.skipped).await {
                let mut layers = Vec::clone(&chain);
                layers.push(Arc::new(layer));
                chain = Arc::new(layers);
            }
        }
        let mut subdirs = Vec::new();
        for entry in entries {
            let path = join(&frame.dir, &entry.name);
            let rel = join(&frame.rel, &entry.name);
            let is_dir = entry.kind == EntryKind::Dir;
            if (is_dir && entry.name == ".git") || is_ignored(&chain, &path, is_dir) {
                out.ignored += 1;
                continue;
            }
            match entry.kind {
                EntryKind::Dir if frame.depth < limits.max_depth => subdirs.push(Frame {
                    dir: path,
                    rel,
                    depth: frame.depth + 1,
                    chain: chain.clone(),
                }),
                EntryKind::Dir => {
                    out.limit_hit = Some(format!(
                        "directories deeper than {} levels were not searched (e.g. {path}); \
                         search from a deeper path",
                        limits.max_depth
                    ));
                }
                EntryKind::File | EntryKind::Symlink => out.files.push(WalkedFile {
                    path,
                    rel,
                    kind: entry.kind,
                    size: entry.size,
                }),
                _ => {}
            }
        }
        // Depth first, in name order: the first subdirectory is popped next.
        subdirs.sort_by(|a, b| b.dir.cmp(&a.dir));
        stack.extend(subdirs);
    }
    out.files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem_fs::MemFs;

    const LIMITS: WalkLimits = WalkLimits {
        max_depth: 16,
        max_entries: 1000,
    };

    fn paths(walk: &Walk) -> Vec<&str> {
        walk.files.iter().map(|f| f.path.as_str()).collect()
    }

    #[tokio::test]
    async fn gitignore_rules_apply_below_their_directory_and_git_is_skipped() {
        let cx = MemFs::new()
            .file(".gitignore", "target/\n*.log\n!keep.log\n")
            .file("src/lib.rs", "")
            .file("src/.gitignore", "gen.rs\n")
            .file("src/gen.rs", "")
            .file("gen.rs", "")
            .file("a.log", "")
            .file("keep.log", "")
            .file("target/debug/x", "")
            .file(".git/HEAD", "")
            .context();
        let walk = walk(&cx, ".", LIMITS).await.unwrap();
        assert_eq!(
            paths(&walk),
            [
                ".gitignore",
                "gen.rs",
                "keep.log",
                "src/.gitignore",
                "src/lib.rs"
            ]
        );
        assert_eq!(walk.ignored, 4); // target/, a.log, src/gen.rs, .git/
        assert!(walk.skipped.is_empty() && walk.limit_hit.is_none());
    }

    #[tokio::test]
    async fn a_gitignore_line_nested_past_the_limit_is_skipped_and_the_rest_applies() {
        let bomb = format!("{}x{}", "{a,".repeat(300), "}".repeat(300));
        let cx = MemFs::new()
            .file(".gitignore", format!("{bomb}\n*.log\n"))
            .file("a.log", "")
            .file("src/lib.rs", "")
            .context();
        let walk = walk(&cx, ".", LIMITS).await.unwrap();
        assert_eq!(paths(&walk), [".gitignore", "src/lib.rs"]);
        assert_eq!(walk.ignored, 1);
    }

    #[tokio::test]
    async fn ancestor_rules_apply_when_walking_a_subdirectory() {
        let cx = MemFs::new()
            .file(".gitignore", "*.tmp\n")
            .file("src/a.rs", "")
            .file("src/b.tmp", "")
            .context();
        let walk = walk(&cx, "src", LIMITS).await.unwrap();
        assert_eq!(paths(&walk), ["src/a.rs"]);
        assert_eq!(walk.files[0].rel, "a.rs");
    }

    #[tokio::test]
    async fn refused_directories_are_reported_not_dropped() {
        let cx = MemFs::new()
            .file("ok.txt", "")
            .file("secret/key", "")
            .refuse("secret")
            .context();
        let walk = walk(&cx, "", LIMITS).await.unwrap();
        assert_eq!(paths(&walk), ["ok.txt"]);
        assert_eq!(walk.skipped.len(), 1);
        assert_eq!(walk.skipped[0].path, "secret");
        assert!(walk.skipped[0].reason.contains("refused"));
    }

    #[tokio::test]
    async fn limits_stop_the_walk_and_say_so() {
        let cx = MemFs::new()
            .file("a/b/c/d.txt", "")
            .file("top.txt", "")
            .context();
        let shallow = WalkLimits {
            max_depth: 1,
            max_entries: 100,
        };
        let walk1 = walk(&cx, "", shallow).await.unwrap();
        assert_eq!(paths(&walk1), ["top.txt"]);
        assert!(walk1.limit_hit.unwrap().contains("deeper than 1"));

        let few = WalkLimits {
            max_depth: 16,
            max_entries: 1,
        };
        let walk2 = walk(&cx, "", few).await.unwrap();
        assert!(
            walk2
                .limit_hit
                .unwrap()
                .contains("after looking at 1 entries")
        );
    }

    #[tokio::test]
    async fn a_missing_base_is_an_enoent_error() {
        let cx = MemFs::new().context();
        let err = walk(&cx, "nope", LIMITS).await.unwrap_err();
        assert_eq!(err.kind(), Some("ENOENT"));
        assert!(err.message().contains("nope"));
    }

    #[test]
    fn ancestors_of_a_relative_base() {
        assert_eq!(ancestors("src/a"), ["", "src"]);
        assert!(ancestors("/abs/x").is_empty());
        assert!(ancestors(".").is_empty());
    }
}
