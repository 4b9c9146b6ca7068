//! The session facts every hook's input and environment carry.

use std::path::PathBuf;

use crate::names::ToolNames;

/// What hooks are told about the session.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HookSession {
    /// `session_id`.
    pub session_id: String,
    /// `transcript_path`: the session log.
    pub transcript_path: Option<PathBuf>,
    /// `cwd`, where hooks run: the workspace root.
    pub cwd: PathBuf,
    /// `CLAUDE_PROJECT_DIR` and `TACK_PROJECT_DIR`: the workspace root.
    pub project_dir: PathBuf,
    /// `permission_mode` (tack's: `default`).
    pub permission_mode: String,
    /// Claude Code's tool names and fields, or tack's.
    pub names: ToolNames,
}

impl HookSession {
    /// A session in `workspace` (also the hooks' working directory).
    pub fn new(session_id: impl Into<String>, workspace: impl Into<PathBuf>) -> Self {
        let workspace = workspace.into();
        Self {
            session_id: session_id.into(),
            transcript_path: None,
            cwd: workspace.clone(),
            project_dir: workspace,
            permission_mode: "default".to_owned(),
            names: ToolNames::default(),
        }
    }

    /// Sets the session log's path (`transcript_path`).
    pub fn with_transcript(mut self, path: impl Into<PathBuf>) -> Self {
        self.transcript_path = Some(path.into());
        self
    }

    /// Sets the permission mode reported to hooks.
    pub fn with_permission_mode(mut self, mode: impl Into<String>) -> Self {
        self.permission_mode = mode.into();
        self
    }

    /// Chooses the tool names hooks see.
    pub fn with_names(mut self, names: ToolNames) -> Self {
        self.names = names;
        self
    }
}
