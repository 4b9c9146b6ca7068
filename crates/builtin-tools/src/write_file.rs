//! `write_file`: creates or replaces a file.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tack_core::context::ToolRunContext;
use tack_core::tool::{Content, Tier, Tool, ToolError};

use crate::text::count_lines;

/// The arguments of `write_file`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// The file to write: relative to the workspace root, or absolute.
    /// Missing parent directories are created.
    pub path: String,
    /// The whole new contents of the file.
    pub content: String,
}

/// What `write_file` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WriteFileOutput {
    /// The path as given.
    pub path: String,
    /// How many bytes were written.
    pub bytes_written: u64,
    /// `true` when the file was created, `false` when an existing file was replaced.
    pub created: bool,
}

/// The `write_file` tool: creates or atomically replaces a file through the
/// `fs` capability, creating its parent directories through it too.
#[derive(Clone, Debug, Default)]
pub struct WriteFile;

impl WriteFile {
    /// The tool.
    pub fn new() -> Self {
        Self
    }
}

impl Tool for WriteFile {
    const NAME: &'static str = "write_file";
    type Args = WriteFileArgs;
    type Output = WriteFileOutput;

    fn description(&self) -> &str {
        "Create a file, or replace a file's whole contents, in the workspace (missing \
         parent directories are created). Use it to create new files, or to rewrite a \
         file completely. To change part of an existing file, use `edit_file` instead: \
         it is safer and shows the change as a diff. Read a file before replacing it."
    }

    fn tier(&self) -> Tier {
        Tier::Writes
    }

    async fn execute(
        &self,
        args: WriteFileArgs,
        cx: &ToolRunContext,
    ) -> Result<WriteFileOutput, ToolError> {
        let fs = cx.fs()?;
        let path = Path::new(&args.path);
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs.create_dir_all(parent).await?;
        }
        let created = fs.write(path, args.content.as_bytes()).await?;
        Ok(WriteFileOutput {
            bytes_written: args.content.len() as u64,
            path: args.path,
            created,
        })
    }

    fn render(&self, _args: &WriteFileArgs, out: &WriteFileOutput) -> Content {
        let verb = if out.created { "Created" } else { "Replaced" };
        Content::text(format!(
            "{verb} {} ({} bytes written).",
            out.path, out.bytes_written
        ))
    }

    fn presentation_meta(&self, args: &WriteFileArgs, out: &WriteFileOutput) -> Option<Value> {
        Some(json!({
            "path": out.path,
            "created": out.created,
            "bytes_written": out.bytes_written,
            "lines": count_lines(&args.content),
        }))
    }

    fn present_call(&self, args: &WriteFileArgs) -> Option<String> {
        Some(format!(
            "Write {} ({} bytes)",
            args.path,
            args.content.len()
        ))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tack_core::tool::ToolDefinition;

    use super::*;
    use crate::mem_fs::{MemFs, call};

    #[tokio::test]
    async fn creates_parents_then_replaces() {
        let cx = MemFs::new().context();
        let def = ToolDefinition::from_tool(WriteFile).unwrap();
        let args = json!({"path": "a/b/c.txt", "content": "hi\n"});
        let first = call(&def, args.clone(), &cx).await.unwrap();
        assert_eq!(
            first,
            json!({"path": "a/b/c.txt", "bytes_written": 3, "created": true})
        );
        let second = call(&def, args, &cx).await.unwrap();
        assert_eq!(second["created"], false);
        let text = cx
            .fs()
            .unwrap()
            .read_to_string(Path::new("a/b/c.txt"))
            .await
            .unwrap();
        assert_eq!(text, "hi\n");
    }
}
