//! `list_dir`: a directory's entries with kind and size.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tack_core::capability::EntryKind;
use tack_core::context::ToolRunContext;
use tack_core::tool::{Content, Tier, Tool, ToolError};

use crate::walk::{SkippedPath, join};

/// The deepest listing `depth` may ask for.
const MAX_DEPTH: u32 = 5;

/// The arguments of `list_dir`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirArgs {
    /// The directory to list: relative to the workspace root (`.` for the
    /// root itself), or absolute.
    pub path: String,
    /// How many levels to list: 1 (the default) lists the directory's own
    /// entries, 2 also the entries of its subdirectories, and so on, up to 5.
    #[serde(default)]
    #[schemars(range(min = 1, max = 5))]
    pub depth: Option<u32>,
}

/// What a listed entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EntryType {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
    /// Anything else (socket, device, fifo).
    Other,
}

impl From<EntryKind> for EntryType {
    fn from(kind: EntryKind) -> Self {
        match kind {
            EntryKind::File => EntryType::File,
            EntryKind::Dir => EntryType::Dir,
            EntryKind::Symlink => EntryType::Symlink,
            _ => EntryType::Other,
        }
    }
}

/// One entry of a listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListDirEntry {
    /// The path relative to the listed directory; directories end with `/`.
    pub path: String,
    /// `file`, `dir`, `symlink` (not followed) or `other`.
    pub kind: EntryType,
    /// The size in bytes (0 for directories).
    pub size: u64,
}

/// What `list_dir` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListDirOutput {
    /// The directory as given.
    pub path: String,
    /// The entries, in path order (each directory followed by its contents).
    /// Nothing is filtered out: hidden files and `.gitignore`d files are listed too.
    pub entries: Vec<ListDirEntry>,
    /// How many entries were found in the directories that were listed; more
    /// than `entries.len()` when the listing was capped.
    pub total_found: u64,
    /// Whether entries were left out because the listing reached its cap.
    pub truncated: bool,
    /// Subdirectories within `depth` that could not be listed (refused by the
    /// policy, unreadable, or not reached because of the cap), and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_listed: Vec<SkippedPath>,
}

/// The `list_dir` tool: lists a directory through the `fs` capability, to a
/// depth, capped at [`max_entries`](Self::with_max_entries) entries.
#[derive(Clone, Debug)]
pub struct ListDir {
    max_entries: usize,
}

impl Default for ListDir {
    fn default() -> Self {
        Self { max_entries: 1000 }
    }
}

impl ListDir {
    /// The tool with its default cap of 1000 entries.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the most entries one listing returns.
    pub fn with_max_entries(mut self, entries: usize) -> Self {
        self.max_entries = entries.max(1);
        self
    }
}

impl Tool for ListDir {
    const NAME: &'static str = "list_dir";
    type Args = ListDirArgs;
    type Output = ListDirOutput;

    fn description(&self) -> &str {
        "List the entries of a directory in the workspace, with their kind and size; \
         directories end with `/`. Use it to see what a directory contains or to get \
         your bearings in an unfamiliar project (start with path `.`). Pass `depth` \
         (up to 5) to also list subdirectories. To find files by name anywhere below a \
         directory, use `glob` instead."
    }

    fn tier(&self) -> Tier {
        Tier::ReadOnly
    }

    fn is_concurrency_safe(&self, _args: &ListDirArgs) -> bool {
        true
    }

    async fn execute(
        &self,
        args: ListDirArgs,
        cx: &ToolRunContext,
    ) -> Result<ListDirOutput, ToolError> {
        let depth = args.depth.unwrap_or(1);
        if !(1..=MAX_DEPTH).contains(&depth) {
            return Err(ToolError::invalid_arguments(format!(
                "`depth` must be from 1 to {MAX_DEPTH}, got {depth}"
            )));
        }
        let fs = cx.fs()?;
        let mut entries = Vec::new();
        let mut not_listed = Vec::new();
        let mut total_found = 0u64;
        // Depth first so that each directory is followed by its contents.
        let mut stack = vec![(String::new(), 1u32)];
        while let Some((rel, level)) = stack.pop() {
            if entries.len() >= self.max_entries {
                not_listed.push(SkippedPath {
                    path: format!("{rel}/"),
                    reason: format!(
                        "not listed: the listing reached its cap of {} entries",
                        self.max_entries
                    ),
                });
                continue;
            }
            let listing = match fs.list(Path::new(&join(&args.path, &rel))).await {
                Ok(listing) => listing,
                Err(err) if rel.is_empty() => return Err(err.into()),
                Err(err) => {
                    not_listed.push(SkippedPath {
                        path: format!("{rel}/"),
                        reason: err.to_string(),
                    });
                    continue;
                }
            };
            total_found += listing.len() as u64;
            let mut subdirs = Vec::new();
            for entry in listing {
                let child = join(&rel, &entry.name);
                if entry.kind == EntryKind::Dir && level < depth {
                    subdirs.push(child.clone());
                }
                if entries.len() < self.max_entries {
                    let path = if entry.kind == EntryKind::Dir {
                        format!("{child}/")
                    } else {
                        child
                    };
                    entries.push(ListDirEntry {
                        path,
                        kind: entry.kind.into(),
                        size: entry.size,
                    });
                }
            }
            subdirs.sort_by(|a, b| b.cmp(a));
            stack.extend(subdirs.into_iter().map(|d| (d, level + 1)));
        }
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        not_listed.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(ListDirOutput {
            path: args.path,
            truncated: (entries.len() as u64) < total_found,
            entries,
            total_found,
            not_listed,
        })
    }

    fn render(&self, _args: &ListDirArgs, out: &ListDirOutput) -> Content {
        let mut text = String::new();
        if out.entries.is_empty() {
            text.push_str(&format!("{} is empty.", out.path));
        }
        for entry in &out.entries {
            if !text.is_empty() {
                text.push('\n');
            }
            match entry.kind {
                EntryType::File => {
                    text.push_str(&format!("{}  ({} bytes)", entry.path, entry.size))
                }
                EntryType::Symlink => text.push_str(&format!("{}  (symlink)", entry.path)),
                _ => text.push_str(&entry.path),
            }
        }
        if out.truncated {
            text.push_str(&format!(
                "\n[showing {} of {} entries found; list a subdirectory or use a smaller depth to see the rest]",
                out.entries.len(),
                out.total_found
            ));
        }
        for skipped in &out.not_listed {
            text.push_str(&format!(
                "\n[{} not listed: {}]",
                skipped.path, skipped.reason
            ));
        }
        Content::text(text)
    }

    fn present_call(&self, args: &ListDirArgs) -> Option<String> {
        Some(match args.depth {
            Some(depth) if depth > 1 => format!("List {} (depth {depth})", args.path),
            _ => format!("List {}", args.path),
        })
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;
    use crate::mem_fs::MemFs;

    fn fs() -> MemFs {
        MemFs::new()
            .file("b.txt", "bb")
            .file(".hidden", "")
            .file("src/lib.rs", "fn f() {}")
            .file("src/deep/x.rs", "")
            .dir("empty")
    }

    async fn list(tool: ListDir, fs: MemFs, args: Value) -> Result<ListDirOutput, ToolError> {
        fs.run(tool, args).await
    }

    fn paths(out: &ListDirOutput) -> Vec<&str> {
        out.entries.iter().map(|e| e.path.as_str()).collect()
    }

    #[tokio::test]
    async fn depth_one_lists_everything_in_the_directory_sorted() {
        let out = list(ListDir::new(), fs(), json!({"path": "."}))
            .await
            .unwrap();
        assert_eq!(paths(&out), [".hidden", "b.txt", "empty/", "src/"]);
        assert_eq!(out.total_found, 4);
        assert!(!out.truncated);
    }

    #[tokio::test]
    async fn deeper_listings_nest_under_their_directory() {
        let out = list(ListDir::new(), fs(), json!({"path": ".", "depth": 3}))
            .await
            .unwrap();
        assert_eq!(
            paths(&out),
            [
                ".hidden",
                "b.txt",
                "empty/",
                "src/",
                "src/deep/",
                "src/deep/x.rs",
                "src/lib.rs"
            ]
        );
    }

    #[tokio::test]
    async fn a_capped_listing_says_how_much_it_left_out() {
        let out = list(
            ListDir::new().with_max_entries(2),
            fs(),
            json!({"path": ".", "depth": 2}),
        )
        .await
        .unwrap();
        assert_eq!(out.entries.len(), 2);
        assert!(out.truncated);
        assert_eq!(out.total_found, 4);
        let text = ListDir::new().render(
            &ListDirArgs {
                path: ".".into(),
                depth: Some(2),
            },
            &out,
        );
        assert!(
            text[0]
                .as_text()
                .unwrap()
                .contains("[showing 2 of 4 entries found;")
        );
        assert_eq!(out.not_listed.len(), 2); // empty/ and src/ were not reached
    }

    #[tokio::test]
    async fn bad_depth_and_missing_directories_are_clear_errors() {
        let err = list(ListDir::new(), fs(), json!({"path": ".", "depth": 9}))
            .await
            .unwrap_err();
        assert!(
            err.message().contains("`depth` must be from 1 to 5"),
            "{err}"
        );
        let err = list(ListDir::new(), fs(), json!({"path": "nope"}))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), Some("ENOENT"));
        assert!(err.message().contains("nope"));
    }
}
