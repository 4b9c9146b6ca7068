//! The plugins that guard every call, built from the settings the same way
//! for `tack run`/`chat` and `tack mcp serve`: the timeout, the sandbox and
//! the permission rules.

use std::path::Path;
use std::time::Duration;

use tack_permission::{PermissionConfig, RuleSet};
use tack_sandbox::{Sandbox, SandboxPolicy};
use tack_timeout::{TimeoutConfig, TimeoutPolicy};

use crate::settings::Settings;

/// The `tool_timeout` setting as a policy: no setting, the plugin's default
/// budgets; a setting, that budget as both default and ceiling.
pub fn timeout(settings: &Settings) -> Result<TimeoutPolicy, String> {
    match settings.tool_timeout.value {
        None => Ok(TimeoutPolicy::default()),
        Some(budget) => TimeoutPolicy::new(
            TimeoutConfig::default()
                .default_budget(budget)
                .ceiling(budget)
                .grace(Duration::from_millis(500)),
        )
        .map_err(|e| format!("tool_timeout ({}): {e}", settings.tool_timeout.origin)),
    }
}

/// The `sandbox` setting over the workspace `root`.
pub fn sandbox(settings: &Settings, root: &Path) -> Result<Sandbox, String> {
    Sandbox::new(SandboxPolicy::new(settings.sandbox.value, root))
        .map_err(|e| format!("cannot set up the sandbox on {}: {e}", root.display()))
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
