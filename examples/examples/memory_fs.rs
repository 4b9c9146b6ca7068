//! A custom capability: a read-only file system held in memory. A plugin
//! provides it as the `fs` capability, and tack's builtin tools — which do all
//! their file I/O through that capability — read from it, list it, and are
//! refused when they try to write.
//!
//! Run: `cargo run -p tack-examples --features agent --example memory_fs`

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tack_agent::PluginSet;
use tack_core::capability::{Access, CapabilityError, EntryKind, FileBytes, FileSystem, Metadata};
use tack_core::prelude::*;
use tack_tools as _; // links the `builtin-tools` plugin installed by name below

/// Files by name; the root, `/memory`, is the only directory. It implements
/// no `write`, `create_dir_all` or `remove`: the trait's defaults refuse them.
struct MemoryFs(BTreeMap<&'static str, &'static str>);

impl MemoryFs {
    fn file(&self, path: &Path) -> Result<&'static str, CapabilityError> {
        let name = path.strip_prefix("/memory").unwrap_or(path).to_str();
        let text = name.and_then(|name| self.0.get(name).copied());
        text.ok_or_else(|| CapabilityError::not_found(path))
    }
}

#[async_trait]
impl FileSystem for MemoryFs {
    fn workspace_root(&self) -> &Path {
        Path::new("/memory")
    }
    fn resolve(&self, path: &Path, _access: Access) -> Result<PathBuf, CapabilityError> {
        Ok(self.workspace_root().join(path)) // nothing outside memory to escape to
    }
    async fn read(&self, path: &Path, limit: Option<u64>) -> Result<FileBytes, CapabilityError> {
        let bytes = self.file(path)?.as_bytes();
        let keep = limit.map_or(bytes.len(), |l| bytes.len().min(l as usize));
        let (total, truncated) = (bytes.len() as u64, keep < bytes.len());
        Ok(FileBytes::new(bytes[..keep].to_vec(), total, truncated))
    }
    async fn metadata(&self, path: &Path) -> Result<Metadata, CapabilityError> {
        // Named by the path's last component; nothing is writable.
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        Ok(match path.to_str() {
            Some("." | "" | "/memory") => Metadata::new(name, EntryKind::Dir, 0),
            _ => Metadata::new(name, EntryKind::File, self.file(path)?.len() as u64),
        })
    }
    async fn list(&self, path: &Path) -> Result<Vec<Metadata>, CapabilityError> {
        if self.metadata(path).await?.kind != EntryKind::Dir {
            return Err(CapabilityError::not_a_directory(path));
        }
        let file = |(n, t): (&&str, &&str)| Metadata::new(*n, EntryKind::File, t.len() as u64);
        Ok(self.0.iter().map(file).collect())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        ("README.md", "# demo\nfrom memory\n"),
        ("notes.txt", "ship it\n"),
    ];
    let fs = Arc::new(MemoryFs(BTreeMap::from(files)));
    let memory = PluginFn::new("memory-fs", move |cx| {
        cx.provide_fs(fs.clone()); // every tool's `cx.fs()` is now this
        Ok(())
    });
    let plugins = PluginSet::new().with(memory).with_named("builtin-tools");
    let plugins = plugins.build()?;
    let pipeline = &plugins.pipeline;
    for (tool, args) in [
        ("read_file", r#"{"path": "README.md"}"#),
        ("list_dir", r#"{"path": "."}"#),
        ("write_file", r#"{"path": "a.txt", "content": "x"}"#),
        ("read_file", r#"{"path": "b.txt"}"#),
    ] {
        let call = ToolCall::new("c1", tool, args);
        let outcome = pipeline.execute(call, CancellationToken::new()).await;
        println!("{tool} {args}:\n{}", outcome.content.joined_text());
    }
    Ok(())
}
