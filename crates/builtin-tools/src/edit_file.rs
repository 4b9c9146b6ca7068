//! `edit_file`: replaces an exact string in a file, with a diff for the UI.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use similar::TextDiff;
use tack_core::capability::EntryKind;
use tack_core::context::ToolRunContext;
use tack_core::tool::{Content, Tier, Tool, ToolError};

use crate::text::{NotText, decode_text};

/// The arguments of `edit_file`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// The file to edit: relative to the workspace root, or absolute.
    pub path: String,
    /// The exact text to replace, including whitespace and indentation. It must
    /// occur exactly once in the file, unless `replace_all` is true: include
    /// enough surrounding lines to make it unique.
    pub old_string: String,
    /// The text to put in its place (may be empty, to delete `old_string`).
    pub new_string: String,
    /// Replace every occurrence of `old_string` instead of requiring exactly one
    /// (default false). Use it for renames.
    #[serde(default)]
    pub replace_all: bool,
}

/// What `edit_file` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EditFileOutput {
    /// The path as given.
    pub path: String,
    /// How many occurrences were replaced.
    pub replacements: u64,
    /// The line number (from 1) where the first replacement starts.
    pub first_line: u64,
    /// The change as a unified diff, for UIs (the model is not shown it).
    pub diff: String,
}

/// The largest file `edit_file` edits (16 MiB).
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The `edit_file` tool: replaces an exact, unique string in a UTF-8 file
/// through the `fs` capability. The unified diff of the change is kept in the
/// value and projected into the result's presentation meta (the UI's diff
/// card); the model reads a one-line summary.
#[derive(Clone, Debug, Default)]
pub struct EditFile;

impl EditFile {
    /// The tool.
    pub fn new() -> Self {
        Self
    }
}

/// The edited text, the number of replacements and the byte offset of the
/// first one, or an error that says what to fix.
fn replace(
    path: &str,
    text: &str,
    old: &str,
    new: &str,
    all: bool,
) -> Result<(String, u64, usize), ToolError> {
    if old.is_empty() {
        return Err(ToolError::invalid_arguments(
            "`old_string` is empty: give the exact text to replace (to create a file or \
             replace all of it, use write_file)",
        ));
    }
    if old == new {
        return Err(ToolError::invalid_arguments(
            "`old_string` and `new_string` are the same, so the edit would change nothing",
        ));
    }
    let count = text.matches(old).count() as u64;
    let first = text.find(old);
    match (count, first) {
        (0, _) | (_, None) => Err(ToolError::new(format!(
            "`old_string` was not found in {path}: read the file again and copy the text \
             exactly, including whitespace, indentation and line breaks"
        ))
        .with_kind("not_found")),
        (n, Some(_)) if n > 1 && !all => Err(ToolError::new(format!(
            "`old_string` occurs {n} times in {path}, so the edit is ambiguous: include more \
             surrounding lines to make it unique, or set `replace_all` to true to replace \
             every occurrence"
        ))
        .with_kind("not_unique")
        .with_data(json!({ "matches": n }))),
        (n, Some(at)) => {
            let edited = if all {
                text.replace(old, new)
            } else {
                text.replacen(old, new, 1)
            };
            Ok((edited, n, at))
        }
    }
}

impl Tool for EditFile {
    const NAME: &'static str = "edit_file";
    type Args = EditFileArgs;
    type Output = EditFileOutput;

    fn description(&self) -> &str {
        "Edit a text file in the workspace by replacing an exact string with another. \
         Use it for targeted changes to an existing file: read the file first, then pass \
         the exact text to change as `old_string` (with enough surrounding lines to be \
         unique in the file) and its replacement as `new_string`. Set `replace_all` to \
         change every occurrence (e.g. a rename). To create a file or rewrite it \
         entirely, use `write_file`."
    }

    fn tier(&self) -> Tier {
        Tier::Writes
    }

    async fn execute(
        &self,
        args: EditFileArgs,
        cx: &ToolRunContext,
    ) -> Result<EditFileOutput, ToolError> {
        let fs = cx.fs()?;
        let path = Path::new(&args.path);
        let meta = fs.metadata(path).await?;
        if meta.kind == EntryKind::Dir {
            return Err(ToolError::new(format!(
                "{} is a directory, not a file: edit_file changes one file",
                args.path
            ))
            .with_kind("EISDIR"));
        }
        if meta.size > MAX_FILE_BYTES {
            return Err(ToolError::new(format!(
                "{} is {} bytes, over edit_file's limit of {MAX_FILE_BYTES} bytes: edit it \
                 with bash instead (e.g. `sed -i`)",
                args.path, meta.size
            ))
            .with_kind("EFBIG"));
        }
        let file = fs.read(path, Some(MAX_FILE_BYTES)).await?;
        if file.truncated {
            // It grew past the limit since `metadata`: never write back a partial file.
            return Err(ToolError::new(format!(
                "{} grew past edit_file's limit of {MAX_FILE_BYTES} bytes while being read; \
                 nothing was changed",
                args.path
            ))
            .with_kind("EFBIG"));
        }
        let text = decode_text(&file.bytes, false).map_err(|reason| {
            let why = match reason {
                NotText::Nul(at) => format!("a NUL byte at offset {at}"),
                NotText::InvalidUtf8(at) => format!("invalid UTF-8 at offset {at}"),
            };
            ToolError::new(format!(
                "{} is not a UTF-8 text file ({why}): edit_file only edits text",
                args.path
            ))
            .with_kind("EILSEQ")
        })?;
        let (edited, replacements, at) = replace(
            &args.path,
            text,
            &args.old_string,
            &args.new_string,
            args.replace_all,
        )?;
        let diff = TextDiff::from_lines(text, edited.as_str())
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{}", args.path), &format!("b/{}", args.path))
            .to_string();
        fs.write(path, edited.as_bytes()).await?;
        Ok(EditFileOutput {
            first_line: text[..at].matches('\n').count() as u64 + 1,
            path: args.path,
            replacements,
            diff,
        })
    }

    fn render(&self, _args: &EditFileArgs, out: &EditFileOutput) -> Content {
        let what = if out.replacements == 1 {
            "1 replacement".to_owned()
        } else {
            format!("{} replacements", out.replacements)
        };
        Content::text(format!(
            "Edited {}: {what}, the first at line {}.",
            out.path, out.first_line
        ))
    }

    fn presentation_meta(&self, _args: &EditFileArgs, out: &EditFileOutput) -> Option<Value> {
        Some(json!({
            "kind": "diff",
            "path": out.path,
            "replacements": out.replacements,
            "diff": out.diff,
        }))
    }

    fn present_call(&self, args: &EditFileArgs) -> Option<String> {
        Some(if args.replace_all {
            format!("Edit {} (replace all)", args.path)
        } else {
            format!("Edit {}", args.path)
        })
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use tack_core::tool::ErrorCode;

    #[test]
    fn a_unique_string_is_replaced_once() {
        let (text, n, at) = replace("f", "a b c", "b", "B", false).unwrap();
        assert_eq!((text.as_str(), n, at), ("a B c", 1, 2));
    }

    #[test]
    fn replace_all_replaces_every_occurrence() {
        let (text, n, _) = replace("f", "x y x", "x", "z", true).unwrap();
        assert_eq!((text.as_str(), n), ("z y z", 2));
    }

    #[test]
    fn ambiguous_missing_and_empty_strings_are_explained() {
        let err = replace("f.rs", "x y x", "x", "z", false).unwrap_err();
        assert_eq!(err.kind(), Some("not_unique"));
        assert!(err.message().contains("occurs 2 times in f.rs"), "{err}");
        assert!(err.message().contains("replace_all"), "{err}");
        let err = replace("f.rs", "abc", "zzz", "y", false).unwrap_err();
        assert_eq!(err.kind(), Some("not_found"));
        assert!(err.message().contains("not found in f.rs"), "{err}");
        let err = replace("f.rs", "abc", "", "y", false).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArguments);
        let err = replace("f.rs", "abc", "a", "a", false).unwrap_err();
        assert!(err.message().contains("the same"), "{err}");
    }
}
