//! A temporary workspace behind a real sandbox, and helpers to call tools in it.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use tack_core::context::ToolRunContext;
use tack_core::host::Capabilities;
use tack_core::host::{NewExecutionToken, NewOutcome, NewRunContext, NewToolExecution, RunEffects};
use tack_core::tool::{
    CallId, ExecutionToken, Outcome, Tool, ToolDefinition, ToolError, ToolExecution,
};
use tack_sandbox::{Sandbox, SandboxPolicy};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// A temporary directory and the sandbox capabilities confined to it.
pub struct Workspace {
    pub dir: TempDir,
    pub caps: Arc<Capabilities>,
}

impl Workspace {
    /// A workspace the tools may read and write.
    pub fn new() -> Self {
        Self::with_policy(|root| SandboxPolicy::workspace_write(root))
    }

    /// A workspace the tools may only read.
    pub fn read_only() -> Self {
        Self::with_policy(|root| SandboxPolicy::read_only(root))
    }

    /// A workspace under the policy `policy(root)` (OS isolation not required).
    pub fn with_policy(policy: impl FnOnce(&Path) -> SandboxPolicy) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let sandbox = Sandbox::new(policy(&root).require_os_isolation(false)).unwrap();
        let caps = Capabilities::default()
            .with_fs(sandbox.fs())
            .with_shell(sandbox.shell());
        Self {
            dir,
            caps: Arc::new(caps),
        }
    }

    /// Writes a fixture file (test setup, outside the tools), creating parents.
    pub fn file(&self, rel: &str, contents: impl AsRef<[u8]>) -> &Self {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
        self
    }

    /// Creates a fixture directory.
    pub fn dir(&self, rel: &str) -> &Self {
        std::fs::create_dir_all(self.dir.path().join(rel)).unwrap();
        self
    }

    /// Reads a file back (to check what a tool did).
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(rel)).unwrap()
    }

    /// The run context of one call, with `cancel` as its signal.
    pub fn cx_with(&self, name: &str, cancel: CancellationToken) -> ToolRunContext {
        let exec = Arc::new(ToolExecution::new(
            CallId::from("c1"),
            tack_core::tool::ToolName::new(name).unwrap(),
            Arc::new(serde_json::json!({})),
            tack_core::tool::Tier::ReadOnly,
            ExecutionToken::issue(CallId::from("c1")),
        ));
        ToolRunContext::new(exec, self.caps.clone(), cancel, RunEffects::new())
    }

    /// Runs the body of `def` with `args` (no schema validation, as a direct call).
    pub async fn call_def(&self, def: &ToolDefinition, args: Value) -> Result<Value, ToolError> {
        let cx = self.cx_with(def.name().as_str(), CancellationToken::new());
        def.run_body(Arc::new(args), cx).await
    }

    /// Runs the body of a typed tool with `args`.
    pub async fn call<T: Tool>(&self, tool: T, args: Value) -> Result<Value, ToolError> {
        self.call_def(&ToolDefinition::from_tool(tool).unwrap(), args)
            .await
    }

    /// The value of a call of `tool` that must succeed.
    pub async fn value<T: Tool>(&self, tool: T, args: Value) -> Value {
        let name = T::NAME;
        self.call(tool, args.clone())
            .await
            .unwrap_or_else(|err| panic!("{name} {args} failed: {err}"))
    }

    /// The typed output of a call of `tool` that must succeed.
    pub async fn output<T: Tool>(&self, tool: T, args: Value) -> T::Output {
        serde_json::from_value(self.value(tool, args).await).unwrap()
    }

    /// The error of a call of `tool` that must fail.
    pub async fn error<T: Tool>(&self, tool: T, args: Value) -> ToolError {
        let name = T::NAME;
        match self.call(tool, args.clone()).await {
            Ok(value) => panic!("{name} {args} succeeded, returning {value}"),
            Err(err) => err,
        }
    }

    /// Runs a call the way the pipeline ends it: body, render and presentation
    /// meta on success, the failure content otherwise, then `finalize_content`.
    pub async fn outcome(&self, def: &ToolDefinition, args: Value) -> Outcome {
        let name = def.name().as_str();
        let mut outcome = match self.call_def(def, args.clone()).await {
            Ok(value) => {
                let content = def.output().render_value(&args, &value).unwrap();
                let presentation = def.output().presentation_value(&args, &value).unwrap();
                let mut ok = Outcome::success(CallId::from("c1"), name, value, content);
                ok.presentation = presentation;
                ok
            }
            Err(err) => Outcome::failure(CallId::from("c1"), name, err),
        };
        if let Some(content) = def.finalize_content(&outcome) {
            outcome.content = content;
        }
        outcome
    }

    /// The model-visible text of a successful call of `tool`.
    pub async fn text<T: Tool>(&self, tool: T, args: Value) -> String {
        let def = ToolDefinition::from_tool(tool).unwrap();
        let outcome = self.outcome(&def, args).await;
        assert!(outcome.is_success(), "{:?}", outcome.failure_info());
        outcome.content.joined_text()
    }
}

/// Compares `actual` with `tests/golden/<name>`; `UPDATE_GOLDEN=1` rewrites it.
pub fn assert_golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read golden file {}: {e}; run with UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    pretty_assertions::assert_eq!(
        actual,
        expected,
        "golden file {name} differs (UPDATE_GOLDEN=1 rewrites it)"
    );
}
