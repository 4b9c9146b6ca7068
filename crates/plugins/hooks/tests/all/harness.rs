//! The test bed: the hooks plugin installed by the `tack-test` harness over
//! the real pipeline, next to fake `bash`, `write_file` and `edit_file` tools
//! that record the arguments they ran with.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tack_core::policy::ApprovalService;
use tack_core::tool::Tier;
use tack_hooks::{HookReport, HookSession, Hooks, HooksConfig, ToolNames};
use tack_test::{Call, FakeTool, Harness, Report};
use tempfile::TempDir;

pub struct Bed {
    pub dir: TempDir,
    pub harness: Harness<Hooks>,
    pub runs: Arc<AtomicUsize>,
    pub seen: Arc<Mutex<Vec<Value>>>,
    pub reports: Arc<Mutex<Vec<HookReport>>>,
}

pub fn python() -> bool {
    std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A tool with the given schema that records the arguments it ran with.
fn recording(
    name: &str,
    schema: Value,
    runs: &Arc<AtomicUsize>,
    seen: &Arc<Mutex<Vec<Value>>>,
) -> FakeTool {
    let runs = runs.clone();
    let seen = seen.clone();
    FakeTool::new(name)
        .description("Records its arguments.")
        .tier(Tier::Executes)
        .schema(schema)
        .body(move |args, _cx| {
            runs.fetch_add(1, Ordering::SeqCst);
            seen.lock().unwrap().push((*args).clone());
            async move { Ok(json!({"ran": *args})) }
        })
}

impl Bed {
    /// A workspace with `scripts` (name, body; made executable) and the
    /// settings `settings(dir)`.
    pub fn new(scripts: &[(&str, &str)], settings: impl FnOnce(&Path) -> Value) -> Self {
        Self::with_names(scripts, settings, ToolNames::ClaudeCode)
    }

    pub fn with_names(
        scripts: &[(&str, &str)],
        settings: impl FnOnce(&Path) -> Value,
        names: ToolNames,
    ) -> Self {
        Self::build(scripts, settings, names, None)
    }

    /// A bed whose calls that ask go to `approval` (without one, no one can
    /// be asked).
    pub fn with_approval(
        scripts: &[(&str, &str)],
        settings: impl FnOnce(&Path) -> Value,
        approval: Arc<dyn ApprovalService>,
    ) -> Self {
        Self::build(scripts, settings, ToolNames::ClaudeCode, Some(approval))
    }

    fn build(
        scripts: &[(&str, &str)],
        settings: impl FnOnce(&Path) -> Value,
        names: ToolNames,
        approval: Option<Arc<dyn ApprovalService>>,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for (name, body) in scripts {
            write_script(&dir.path().join(name), body);
        }
        let config = HooksConfig::from_settings(&settings(dir.path()), None).unwrap();
        let reports = Arc::new(Mutex::new(Vec::new()));
        let sink = reports.clone();
        let session = HookSession::new("session-1", dir.path())
            .with_transcript(dir.path().join("log.jsonl"))
            .with_names(names);
        let hooks = Hooks::with_reporter(
            config,
            session,
            Arc::new(move |r: &HookReport| sink.lock().unwrap().push(r.clone())),
        );
        let runs = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let bash = recording(
            "bash",
            json!({"type": "object", "properties": {"command": {"type": "string"}, "timeout_ms": {"type": "integer", "minimum": 1}},
                   "required": ["command"], "additionalProperties": false}),
            &runs,
            &seen,
        );
        let write = recording(
            "write_file",
            json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                   "required": ["path", "content"], "additionalProperties": false}),
            &runs,
            &seen,
        );
        let edit = recording(
            "edit_file",
            json!({"type": "object", "properties": {"path": {"type": "string"}, "old_string": {"type": "string"},
                   "new_string": {"type": "string"}, "replace_all": {"type": "boolean"}},
                   "required": ["path", "old_string", "new_string"], "additionalProperties": false}),
            &runs,
            &seen,
        );
        let mut builder = Harness::builder().tool(bash).tool(write).tool(edit);
        if let Some(approval) = approval {
            builder = builder.approval(approval);
        }
        let harness = builder.install(hooks).unwrap();
        Self {
            dir,
            harness,
            runs,
            seen,
            reports,
        }
    }

    /// The plugin, for the agent's hook points (prompt, stop, session).
    pub fn hooks(&self) -> &Hooks {
        self.harness.plugin()
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Calls `tool` (id `call-1`) through every stage; what happened.
    pub async fn call(&self, tool: &str, args: Value) -> Report {
        self.harness.call(Call::new(tool, args).id("call-1")).await
    }

    pub fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }

    pub fn reports(&self) -> Vec<String> {
        self.reports
            .lock()
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect()
    }
}

pub fn write_script(path: &PathBuf, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Settings with one group: `event`, `matcher`, the command `command`.
pub fn one(event: &str, matcher: &str, command: String) -> Value {
    json!({"hooks": {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}})
}
