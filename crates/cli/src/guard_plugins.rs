//! The plugins that guard every call, built from the settings the same way
//! for `tack run`/`chat` and `tack mcp serve`: the timeout, the sandbox and
//! the permission rules.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tack_permission::{PermissionConfig, RuleSet};
use tack_sandbox::{CommandAdmission, Enforcement, Sandbox, SandboxMode, SandboxPolicy};
use tack_timeout::{Timeout, TimeoutConfig};

use crate::args::SessionArgs;
use crate::sandbox_layer::SandboxLayer;
use crate::settings::{Settings, user_settings_path};

/// The `tool_timeout` setting as a policy: no setting, the plugin's default
/// budgets; a setting, that budget as both default and ceiling.
pub fn timeout(settings: &Settings) -> Result<Timeout, String> {
    match settings.tool_timeout.value {
        None => Ok(Timeout::default()),
        Some(budget) => Timeout::new(
            TimeoutConfig::default()
                .default_budget(budget)
                .ceiling(budget)
                .grace(Duration::from_millis(500)),
        )
        .map_err(|e| format!("tool_timeout ({}): {e}", settings.tool_timeout.origin)),
    }
}

/// tack's own files: the user's configuration directory, the state
/// directory (session logs, trust store), and the settings, permission and
/// log files named on the command line. The tools must never change them:
/// a model that rewrote them would set the next session's confinement, or
/// the record of this one.
pub fn own_paths(args: &SessionArgs) -> Vec<PathBuf> {
    let mut paths = own_dirs();
    paths.extend(args.settings.iter().cloned());
    paths.extend(args.permissions.iter().cloned());
    paths.extend(args.log.iter().cloned());
    paths.extend(args.resume.iter().cloned());
    paths
        .into_iter()
        .map(|p| std::path::absolute(&p).unwrap_or(p))
        .collect()
}

/// tack's configuration and state directories (`$XDG_CONFIG_HOME/tack`,
/// `$XDG_STATE_HOME/tack`, or their places under the home directory):
/// commands may not read them either (session logs, the trust store).
fn own_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    dirs.extend(
        user_settings_path()
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf),
    );
    dirs.extend(tack_agent::state_home_from_env().map(|state| state.join("tack")));
    dirs
}

/// The `sandbox` setting over the workspace `root`, with tack's own files
/// ([`own_paths`]) protected.
///
/// # Errors
///
/// The sandbox cannot be built, or one of tack's own files lies inside a
/// writable root while commands run where existing files cannot be kept
/// read-only (without the namespace layer): the message names the file and
/// the ways out.
pub fn sandbox(settings: &Settings, root: &Path, args: &SessionArgs) -> Result<Sandbox, String> {
    let own = own_paths(args);
    let mut policy = settings.sandbox_paths.apply(
        SandboxPolicy::new(settings.sandbox.value, root)
            .with_namespaces(settings.sandbox_layer.value.namespaces()),
    );
    for path in &own {
        policy = policy.with_protected(&path.to_string_lossy());
    }
    for dir in own_dirs() {
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        policy = policy.with_hidden(&dir.to_string_lossy());
    }
    let sandbox = Sandbox::new(policy)
        .map_err(|e| format!("cannot set up the sandbox on {}: {e}", root.display()))?;
    if let (SandboxLayer::Namespaces, Some(CommandAdmission::Refused { reason })) = (
        settings.sandbox_layer.value,
        sandbox.status().policy.map(|p| p.commands),
    ) {
        return Err(format!(
            "refusing to start: sandbox_layer = namespaces ({}) requires the namespace layer, and commands cannot run in it here: {reason}",
            settings.sandbox_layer.origin
        ));
    }
    own_files_kept(&sandbox, &own)?;
    Ok(sandbox)
}

/// Refuses a sandbox whose commands could change one of `own` (tack's own
/// files), when it lies inside the workspace.
fn own_files_kept(sandbox: &Sandbox, own: &[PathBuf]) -> Result<(), String> {
    if sandbox.policy().mode() != SandboxMode::WorkspaceWrite {
        // read-only writes nothing; full-access is the user's choice to
        // lift every confinement.
        return Ok(());
    }
    let enforced = sandbox
        .status()
        .policy
        .is_some_and(|p| p.protected == Enforcement::Enforced);
    if enforced {
        return Ok(());
    }
    let workspace = sandbox.workspace_root();
    let inside = own.iter().find(|path| {
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        canonical.starts_with(workspace) || path.starts_with(workspace)
    });
    match inside {
        None => Ok(()),
        Some(path) => Err(format!(
            "refusing to start: tack's own file {} is inside the workspace {}, and commands here \
             run without the namespace layer (bubblewrap), so they could change it (the session \
             log, the trust store, or the settings the next session starts with); run tack on a \
             workspace that does not contain it, set XDG_CONFIG_HOME and XDG_STATE_HOME (or \
             --log/--settings) to paths outside the workspace, or install bubblewrap",
            path.display(),
            workspace.display()
        )),
    }
}

/// The `mode` and `rules` settings over the workspace `root`; the caller
/// adds how approvals are asked.
pub fn permission(settings: &Settings, root: &Path) -> PermissionConfig {
    let mut rules = RuleSet::new();
    for sourced in &settings.rules {
        rules.push(sourced.rule.clone());
    }
    PermissionConfig::default()
        .mode(settings.mode.value)
        .rules(rules)
        .workspace_root(root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tack_sandbox::Namespaces;

    #[test]
    fn own_files_inside_the_workspace_refuse_the_floor_but_not_the_namespace_layer() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let own = vec![root.join(".local/state/tack")];
        let outside = vec![PathBuf::from("/nonexistent/tack")];
        let floor = Sandbox::new(
            SandboxPolicy::workspace_write(&root).with_namespaces(Namespaces::Disabled),
        )
        .unwrap();
        let err = own_files_kept(&floor, &own).unwrap_err();
        assert!(err.contains(".local/state/tack"), "{err}");
        assert!(err.contains("XDG_STATE_HOME"), "{err}");
        assert!(own_files_kept(&floor, &outside).is_ok());
        let full = Sandbox::new(SandboxPolicy::full_access(&root)).unwrap();
        assert!(own_files_kept(&full, &own).is_ok());
        let layered = Sandbox::new(SandboxPolicy::workspace_write(&root)).unwrap();
        let enforced = layered
            .status()
            .policy
            .is_some_and(|p| p.protected == Enforcement::Enforced);
        assert_eq!(own_files_kept(&layered, &own).is_ok(), enforced);
    }
}
