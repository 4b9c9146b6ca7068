//! An in-memory [`FileSystem`] for the unit tests: the tools' logic without a
//! disk, and [`call`] / [`MemFs::run`] to run a tool against it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use tack_core::capability::{Access, CapabilityError, EntryKind, FileBytes, FileSystem, Metadata};
use tack_core::context::ToolRunContext;
use tack_core::host::Capabilities;
use tack_core::host::{NewExecutionToken, NewRunContext, NewToolExecution, RunEffects};
use tack_core::tool::{
    CallId, ExecutionToken, Tier, Tool, ToolDefinition, ToolError, ToolExecution, ToolName,
};
use tokio_util::sync::CancellationToken;

#[derive(Clone, Debug)]
enum Node {
    File(Vec<u8>),
    Dir,
}

/// Files and directories keyed by their workspace-relative path (`""` is the root).
#[derive(Default)]
pub(crate) struct MemFs {
    nodes: Mutex<BTreeMap<String, Node>>,
    refused: BTreeSet<String>,
}

fn key(path: &Path) -> String {
    let text = path.to_string_lossy();
    let text = text.trim_start_matches("./").trim_end_matches('/');
    if text == "." {
        String::new()
    } else {
        text.to_owned()
    }
}

fn parent(key: &str) -> Option<&str> {
    if key.is_empty() {
        None
    } else {
        Some(key.rsplit_once('/').map_or("", |(p, _)| p))
    }
}

impl MemFs {
    pub(crate) fn new() -> Self {
        let fs = Self::default();
        fs.lock().insert(String::new(), Node::Dir);
        fs
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Node>> {
        self.nodes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a file (and its parent directories).
    pub(crate) fn file(self, path: &str, contents: impl AsRef<[u8]>) -> Self {
        let mut nodes = self.lock();
        let mut dir = parent(path);
        while let Some(d) = dir {
            nodes.insert(d.to_owned(), Node::Dir);
            dir = parent(d);
        }
        nodes.insert(path.to_owned(), Node::File(contents.as_ref().to_vec()));
        drop(nodes);
        self
    }

    /// Adds an empty directory.
    pub(crate) fn dir(self, path: &str) -> Self {
        self.lock().insert(path.to_owned(), Node::Dir);
        self
    }

    /// Refuses every access to `path` and below.
    pub(crate) fn refuse(mut self, path: &str) -> Self {
        self.refused.insert(path.to_owned());
        self
    }

    fn check(&self, k: &str) -> Result<(), CapabilityError> {
        if self
            .refused
            .iter()
            .any(|r| k == r || k.starts_with(&format!("{r}/")))
        {
            return Err(CapabilityError::Refused {
                path: k.to_owned(),
                reason: "denied by the test policy".into(),
            });
        }
        Ok(())
    }

    fn not_found(k: &str) -> CapabilityError {
        CapabilityError::NotFound { path: k.to_owned() }
    }

    /// The context of one call with this file system as its only capability.
    pub(crate) fn context(self) -> ToolRunContext {
        let exec = Arc::new(ToolExecution::new(
            CallId::from("c1"),
            ToolName::new("test").unwrap_or_else(|e| panic!("{e}")),
            Arc::new(json!({})),
            Tier::ReadOnly,
            ExecutionToken::issue(CallId::from("c1")),
        ));
        let caps = Capabilities::default().with_fs(Arc::new(self));
        ToolRunContext::new(
            exec,
            Arc::new(caps),
            CancellationToken::new(),
            RunEffects::new(),
        )
    }

    /// Runs `tool` with `args` against this file system (a [`call`] in its
    /// [`context`](Self::context)) and reads the output back.
    pub(crate) async fn run<T: Tool>(self, tool: T, args: Value) -> Result<T::Output, ToolError> {
        let def = ToolDefinition::from_tool(tool).unwrap_or_else(|e| panic!("{e}"));
        let value = call(&def, args, &self.context()).await?;
        Ok(serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}")))
    }
}

/// Runs the body of `def` with `args` in `cx`, as a direct call: the
/// arguments are not validated against the schema first.
pub(crate) async fn call(
    def: &ToolDefinition,
    args: Value,
    cx: &ToolRunContext,
) -> Result<Value, ToolError> {
    def.run_body(args.into(), cx.clone()).await
}

/// A node as [`FileSystem::metadata`] and [`FileSystem::list`] describe it:
/// every node is writable, no time is kept.
fn describe(name: impl Into<String>, node: &Node) -> Metadata {
    match node {
        Node::Dir => Metadata::new(name, EntryKind::Dir, 0),
        Node::File(b) => Metadata::new(name, EntryKind::File, b.len() as u64),
    }
    .with_writable(true)
}

#[async_trait]
impl FileSystem for MemFs {
    fn workspace_root(&self) -> &Path {
        Path::new("/ws")
    }

    fn resolve(&self, path: &Path, _access: Access) -> Result<PathBuf, CapabilityError> {
        let k = key(path);
        self.check(&k)?;
        Ok(Path::new("/ws").join(k))
    }

    async fn read(&self, path: &Path, limit: Option<u64>) -> Result<FileBytes, CapabilityError> {
        let k = key(path);
        self.check(&k)?;
        match self.lock().get(&k) {
            None => Err(Self::not_found(&k)),
            Some(Node::Dir) => Err(CapabilityError::IsADirectory { path: k }),
            Some(Node::File(bytes)) => {
                let total = bytes.len() as u64;
                let keep = limit.map_or(bytes.len(), |l| bytes.len().min(l as usize));
                Ok(FileBytes::new(
                    bytes[..keep].to_vec(),
                    total,
                    keep < bytes.len(),
                ))
            }
        }
    }

    async fn write(&self, path: &Path, contents: &[u8]) -> Result<bool, CapabilityError> {
        let k = key(path);
        self.check(&k)?;
        let mut nodes = self.lock();
        if !matches!(parent(&k).and_then(|p| nodes.get(p)), Some(Node::Dir)) {
            return Err(Self::not_found(&k));
        }
        let created = match nodes.get(&k) {
            Some(Node::Dir) => return Err(CapabilityError::IsADirectory { path: k }),
            Some(Node::File(_)) => false,
            None => true,
        };
        nodes.insert(k, Node::File(contents.to_vec()));
        Ok(created)
    }

    async fn list(&self, path: &Path) -> Result<Vec<Metadata>, CapabilityError> {
        let k = key(path);
        self.check(&k)?;
        let nodes = self.lock();
        match nodes.get(&k) {
            None => return Err(Self::not_found(&k)),
            Some(Node::File(_)) => return Err(CapabilityError::NotADirectory { path: k }),
            Some(Node::Dir) => {}
        }
        Ok(nodes
            .iter()
            .filter(|(p, _)| !p.is_empty() && parent(p) == Some(k.as_str()))
            .map(|(p, node)| {
                let name = p.rsplit('/').next().unwrap_or(p);
                describe(name, node)
            })
            .collect())
    }

    async fn metadata(&self, path: &Path) -> Result<Metadata, CapabilityError> {
        let k = key(path);
        self.check(&k)?;
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        match self.lock().get(&k) {
            None => Err(Self::not_found(&k)),
            Some(node) => Ok(describe(name, node)),
        }
    }

    async fn create_dir_all(&self, path: &Path) -> Result<(), CapabilityError> {
        let k = key(path);
        self.check(&k)?;
        let mut nodes = self.lock();
        let mut dir = Some(k.as_str());
        while let Some(d) = dir {
            if let Some(Node::File(_)) = nodes.get(d) {
                return Err(CapabilityError::NotADirectory { path: d.to_owned() });
            }
            nodes.insert(d.to_owned(), Node::Dir);
            dir = parent(d);
        }
        Ok(())
    }

    async fn remove(&self, path: &Path, _recursive: bool) -> Result<(), CapabilityError> {
        let k = key(path);
        self.check(&k)?;
        self.lock()
            .remove(&k)
            .map(|_| ())
            .ok_or_else(|| Self::not_found(&k))
    }
}
