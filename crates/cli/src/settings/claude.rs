//! Claude Code's own settings files, read where they are:
//! `~/.claude/settings.json` (the user's), the workspace's
//! `.claude/settings.json` (shared) and `.claude/settings.local.json`
//! (personal).
//!
//! tack takes what it has an equivalent for — `hooks`, `disableAllHooks`,
//! `permissions` (`allow`, `ask`, `deny` in Claude Code's rule syntax,
//! `defaultMode`) — and names every other key once, in one warning per
//! file, as ignored. Nothing in such a file refuses the session except
//! text that is not JSON: a rule tack cannot read the same way is skipped
//! (an allow) or made broader (a deny or ask), with a warning.
//!
//! The workspace's files come with the code being worked on, so they get
//! the workspace's limits: hooks in them run only once their exact
//! contents are trusted (`tack trust`), `defaultMode: bypassPermissions`
//! is not applied, an allow rule that would act like `allow-all` is
//! skipped, and their `disableAllHooks` turns off the workspace's hooks
//! only, never the user's.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tack_permission::{Action, Mode, claude_rule};

use crate::settings::{Origin, Settings, SourcedRule, widening};

/// The user's Claude Code settings: `$HOME/.claude/settings.json` (only an
/// absolute `HOME` counts).
pub fn claude_user_settings_path() -> Option<PathBuf> {
    home().map(|home| home.join(".claude").join("settings.json"))
}

/// The workspace's Claude Code settings files, in Claude Code's precedence
/// (the later wins): shared, then local.
pub fn claude_workspace_settings_paths(workspace: &Path) -> [PathBuf; 2] {
    let dir = workspace.join(".claude");
    [dir.join("settings.json"), dir.join("settings.local.json")]
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// Keys of Claude Code's settings that tack reads.
const READ_KEYS: &[&str] = &["hooks", "disableAllHooks", "permissions", "$schema"];

/// `permissions` keys that tack reads.
const PERMISSION_KEYS: &[&str] = &["allow", "ask", "deny", "defaultMode"];

impl Settings {
    /// Reads one Claude Code settings file, if it exists. `layer` is
    /// `claude-user`, `claude-project` or `claude-local`; the last two are
    /// the workspace's.
    pub(crate) fn apply_claude_file(
        &mut self,
        path: &Path,
        layer: &'static str,
    ) -> Result<(), String> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(format!(
                    "cannot read the Claude Code settings file {}: {e}",
                    path.display()
                ));
            }
        };
        let name = path.display().to_string();
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{name}:{}:{}: not valid JSON ({e}); fix the file (Claude Code cannot read it either)",
                e.line(),
                e.column()
            )
        })?;
        let Value::Object(map) = &value else {
            return Err(format!(
                "{name}: a settings file is a JSON object (`{{\"hooks\": ...}}`)"
            ));
        };
        let workspace = layer != "claude-user";
        let origin = Origin::File {
            layer,
            path: path.to_owned(),
        };
        let mut ignored: Vec<String> = Vec::new();
        for (key, value) in map {
            if READ_KEYS.contains(&key.as_str()) {
                continue;
            }
            ignored.push(match key.as_str() {
                "env" => "`env` (tack does not set environment variables from settings; set them where you start tack)".to_owned(),
                "model" => format!(
                    "`model` ({value}; tack's model is `--model` or tack's own `model` setting)"
                ),
                other => format!("`{other}`"),
            });
        }
        if !ignored.is_empty() {
            self.warnings.push(format!(
                "{name}: Claude Code settings tack has no equivalent for, ignored: {}",
                ignored.join(", ")
            ));
        }

        // Hooks (checked and merged with the others by `crate::hooks`).
        let disable = match map.get("disableAllHooks") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                self.warnings.push(format!(
                    "{name}: key `disableAllHooks`: must be true or false, not {other}; ignored"
                ));
                false
            }
        };
        if disable {
            self.disable_hooks.push((path.to_owned(), workspace));
        }
        let hooks = if map.contains_key("hooks") {
            Some(self.add_hooks(path, &value)?)
        } else {
            None
        };
        self.defining.extend(crate::trust::Defining::of(
            path,
            &text,
            hooks.as_ref(),
            &Default::default(),
        ));

        // Permissions.
        if let Some(permissions) = map.get("permissions") {
            self.apply_claude_permissions(&name, permissions, workspace, &origin);
        }
        self.files.push(origin);
        Ok(())
    }

    fn apply_claude_permissions(
        &mut self,
        name: &str,
        permissions: &Value,
        workspace: bool,
        origin: &Origin,
    ) {
        let Value::Object(permissions) = permissions else {
            self.warnings.push(format!(
                "{name}: key `permissions`: must be an object with `allow`, `ask`, `deny`; ignored"
            ));
            return;
        };
        let ignored: Vec<String> = permissions
            .keys()
            .filter(|k| !PERMISSION_KEYS.contains(&k.as_str()))
            .map(|k| format!("`permissions.{k}`"))
            .collect();
        if !ignored.is_empty() {
            self.warnings.push(format!(
                "{name}: Claude Code permission settings tack has no equivalent for, ignored: {}",
                ignored.join(", ")
            ));
        }
        if let Some(mode) = permissions.get("defaultMode") {
            let mapped = match mode.as_str() {
                Some("default") => Some(Mode::Ask),
                Some("acceptEdits") => Some(Mode::AcceptEdits),
                Some("plan") => Some(Mode::ReadOnly),
                Some("bypassPermissions") if workspace => {
                    self.warnings.push(format!(
                        "{name}: key `permissions.defaultMode`: a workspace's own settings cannot set `bypassPermissions` (tack's allow-all: it would loosen the confinement for anyone running tack here); not applied — pass --mode allow-all, or set it in your user settings"
                    ));
                    None
                }
                Some("bypassPermissions") => Some(Mode::AllowAll),
                _ => {
                    self.warnings.push(format!(
                        "{name}: key `permissions.defaultMode`: {mode} has no tack equivalent (default, acceptEdits, plan, bypassPermissions); ignored"
                    ));
                    None
                }
            };
            if let Some(mode) = mapped {
                self.mode.set(mode, origin.clone());
            }
        }
        let home = home();
        for (list, action) in [
            ("allow", Action::Allow),
            ("ask", Action::Ask),
            ("deny", Action::Deny),
        ] {
            let Some(entries) = permissions.get(list) else {
                continue;
            };
            let Some(entries) = entries.as_array() else {
                self.warnings.push(format!(
                    "{name}: key `permissions.{list}`: must be a list of rules such as \"Bash(npm run test:*)\"; ignored"
                ));
                continue;
            };
            for (i, entry) in entries.iter().enumerate() {
                let at = format!("permissions.{list}[{i}]");
                let Some(text) = entry.as_str() else {
                    self.warnings
                        .push(format!("{name}: key `{at}`: must be a string; ignored"));
                    continue;
                };
                let place = format!("{name} key {at}");
                let read = match claude_rule(action, text, home.as_deref(), Some(&place)) {
                    Ok(read) => read,
                    Err(e) => {
                        let effect = if action == Action::Allow {
                            "skipped"
                        } else {
                            "skipped — a deny or ask that tack cannot read; fix it"
                        };
                        self.warnings
                            .push(format!("{name}: key `{at}`: {e}; {effect}"));
                        continue;
                    }
                };
                if let Some(note) = &read.note {
                    self.warnings
                        .push(format!("{name}: key `{at}` (`{text}`): {note}"));
                }
                for rule in read.rules {
                    if workspace && let Some(why) = widening(&rule) {
                        self.warnings.push(format!(
                            "{name}: key `{at}` (`{text}`): a workspace's own permission rules cannot {rule}: {why}, which acts like mode `allow-all`; skipped — put it in your user settings, or pass --mode allow-all"
                        ));
                        continue;
                    }
                    self.rules.push(SourcedRule {
                        rule,
                        origin: format!("{name} key {at} `{text}`"),
                    });
                }
            }
        }
    }

    /// Applies `disableAllHooks`: a user file's turns off every hook, a
    /// workspace file's the workspace's hooks only.
    pub(crate) fn apply_disable_hooks(&mut self, workspace: &Path) {
        let requests = std::mem::take(&mut self.disable_hooks);
        for (file, from_workspace) in requests {
            let before = self.hooks.len();
            let turned_off = |path: &Path| !from_workspace || crate::trust::inside(path, workspace);
            self.hooks.retain(|h| !turned_off(&h.path));
            self.defining
                .retain(|d| !(turned_off(&d.path) && d.servers.is_empty()));
            let scope = if from_workspace {
                "the workspace's hooks are"
            } else {
                "all hooks are"
            };
            self.warnings.push(format!(
                "{}: `disableAllHooks` is true: {scope} off ({} file{} with hooks not used)",
                file.display(),
                before - self.hooks.len(),
                if before - self.hooks.len() == 1 {
                    ""
                } else {
                    "s"
                }
            ));
        }
    }
}
