//! codex's hooks, read where codex reads them: `hooks.json` and the
//! `[hooks]` tables of `config.toml`, in codex's home (`$CODEX_HOME`, or
//! `~/.codex`) and in the workspace's `.codex/`.
//!
//! codex's hooks have Claude Code's shape (events, matcher groups, command
//! handlers, the same JSON on stdin and stdout), so tack turns a codex file
//! into a Claude Code `hooks` object and reads it with `tack-hooks`, keeping
//! codex's own rules where they differ: an `async` handler and a `prompt`
//! or `agent` handler are skipped (codex skips them), handler keys codex
//! does not read (`if`, `once`, `shell`, `args`, …) are ignored with a
//! warning (codex ignores them), `timeout_sec` is `timeout`, a `hooks.json`
//! with a root key other than `description` and `hooks` is not used (codex
//! refuses it), `[features] hooks = false` turns the hooks off, and a hook
//! the user disabled in codex (`[hooks.state."KEY"] enabled = false` in the
//! user's `config.toml`) does not run. The workspace's files are used
//! only once trusted (`tack trust`), like every workspace file defining
//! hooks.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::settings::{Origin, Settings};

/// codex's home: `$CODEX_HOME`, or `$HOME/.codex` (absolute values only).
pub fn codex_home() -> Option<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    absolute("CODEX_HOME").or_else(|| absolute("HOME").map(|home| home.join(".codex")))
}

/// The workspace's codex files that may define hooks.
pub fn codex_workspace_paths(workspace: &Path) -> [PathBuf; 2] {
    let dir = workspace.join(".codex");
    [dir.join("hooks.json"), dir.join("config.toml")]
}

/// Whether `path` is one of codex's files (by its name and folder).
pub fn is_codex_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str());
    let in_codex_dir = path
        .parent()
        .is_some_and(|dir| dir.file_name().is_some_and(|n| n == ".codex"))
        || codex_home().is_some_and(|home| path.parent() == Some(home.as_path()));
    in_codex_dir && matches!(name, Some("hooks.json" | "config.toml"))
}

/// A codex file turned into Claude Code's shape.
#[derive(Debug, Default)]
pub struct CodexHooks {
    /// `{"hooks": {...}}`, or `None` when the file defines no hooks (or is
    /// not used).
    pub settings: Option<Value>,
    /// What was skipped or read differently, naming the file and key.
    pub warnings: Vec<String>,
    /// `[features] hooks = false` (or `codex_hooks = false`).
    pub hooks_off: bool,
    /// The `[hooks.state]` keys with `enabled = false`.
    pub disabled: BTreeSet<String>,
}

/// Handler keys codex reads (with their spellings).
const CODEX_HANDLER_KEYS: &[&str] = &[
    "type",
    "command",
    "timeout",
    "timeout_sec",
    "timeoutSec",
    "async",
    "statusMessage",
    "status_message",
    "commandWindows",
    "command_windows",
    "server",
    "tool",
    "input",
];

/// Reads one codex file's text (`hooks.json` or `config.toml`) into
/// Claude Code's shape; `disabled` are the user's `enabled = false` keys.
///
/// # Errors
///
/// Text that is not JSON (`hooks.json`) or TOML (`config.toml`).
pub fn read_codex(
    path: &Path,
    text: &str,
    disabled: &BTreeSet<String>,
) -> Result<CodexHooks, String> {
    let name = path.display().to_string();
    let mut out = CodexHooks::default();
    let toml_file = path.extension().is_some_and(|e| e == "toml");
    let hooks = if toml_file {
        let table: toml::Table = toml::from_str(text).map_err(|e| {
            format!("{name}: not valid TOML ({e}); fix the file (codex cannot read it either)")
        })?;
        let value = serde_json::to_value(&table)
            .map_err(|e| format!("{name}: cannot be read as settings ({e})"))?;
        if let Some(features) = value.get("features") {
            for key in ["hooks", "codex_hooks"] {
                if features.get(key).and_then(Value::as_bool) == Some(false) {
                    out.hooks_off = true;
                }
            }
        }
        let Some(Value::Object(mut hooks)) = value.get("hooks").cloned() else {
            return Ok(out);
        };
        // Per-hook state (trust, enablement) is codex's own, not an event.
        if let Some(Value::Object(state)) = hooks.remove("state") {
            for (key, entry) in state {
                if entry.get("enabled").and_then(Value::as_bool) == Some(false) {
                    out.disabled.insert(key.trim().to_owned());
                }
            }
        }
        hooks
    } else {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            format!(
                "{name}:{}:{}: not valid JSON ({e}); fix the file (codex cannot read it either)",
                e.line(),
                e.column()
            )
        })?;
        let Value::Object(map) = value else {
            return Err(format!(
                "{name}: a hooks file is a JSON object (`{{\"hooks\": ...}}`)"
            ));
        };
        let others: Vec<String> = map
            .keys()
            .filter(|k| !["description", "hooks"].contains(&k.as_str()))
            .map(|k| format!("`{k}`"))
            .collect();
        if !others.is_empty() {
            out.warnings.push(format!(
                "{name}: codex refuses a hooks.json with keys other than `description` and `hooks` ({}), so its hooks are not used either",
                others.join(", ")
            ));
            return Ok(out);
        }
        match map.get("hooks") {
            Some(Value::Object(hooks)) => hooks.clone(),
            Some(_) => {
                out.warnings.push(format!(
                    "{name}: `hooks` must be an object of events; not used"
                ));
                return Ok(out);
            }
            None => return Ok(out),
        }
    };
    let mut events = Map::new();
    for (event, groups) in hooks {
        let Value::Array(groups) = groups else {
            // Left as it is: tack-hooks names what is wrong with it.
            events.insert(event, groups);
            continue;
        };
        let snake = snake_case(&event);
        let mut kept_groups = Vec::new();
        for (g, group) in groups.into_iter().enumerate() {
            let Value::Object(mut group) = group else {
                kept_groups.push(group);
                continue;
            };
            let handlers = match group.remove("hooks") {
                Some(Value::Array(handlers)) => handlers,
                Some(other) => {
                    group.insert("hooks".into(), other);
                    kept_groups.push(Value::Object(group));
                    continue;
                }
                None => Vec::new(),
            };
            let mut kept = Vec::new();
            for (h, handler) in handlers.into_iter().enumerate() {
                let at = format!("hooks.{event}[{g}].hooks[{h}]");
                let key = format!("{}:{snake}:{g}:{h}", path.display());
                if disabled.contains(&key) || disabled.contains(&format!("file:{key}")) {
                    out.warnings.push(format!(
                        "{name}: `{at}`: disabled in codex (`enabled = false` in your config.toml's [hooks.state]); not run"
                    ));
                    continue;
                }
                let Value::Object(mut handler) = handler else {
                    kept.push(handler);
                    continue;
                };
                let kind = handler
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("command");
                if matches!(kind, "prompt" | "agent") {
                    out.warnings.push(format!(
                        "{name}: `{at}`: codex skips `{kind}` handlers; skipped"
                    ));
                    continue;
                }
                if handler.get("async").and_then(Value::as_bool) == Some(true) {
                    out.warnings.push(format!(
                        "{name}: `{at}.async`: codex skips async hooks; skipped"
                    ));
                    continue;
                }
                handler.remove("async");
                for windows in ["commandWindows", "command_windows"] {
                    handler.remove(windows);
                }
                for alias in ["timeout_sec", "timeoutSec"] {
                    if let Some(timeout) = handler.remove(alias) {
                        handler.entry("timeout").or_insert(timeout);
                    }
                }
                if let Some(message) = handler.remove("status_message") {
                    handler.entry("statusMessage").or_insert(message);
                }
                let ignored: Vec<String> = handler
                    .keys()
                    .filter(|k| !CODEX_HANDLER_KEYS.contains(&k.as_str()))
                    .cloned()
                    .collect();
                for key in ignored {
                    handler.remove(&key);
                    out.warnings.push(format!(
                        "{name}: `{at}.{key}`: codex does not read this key; ignored"
                    ));
                }
                kept.push(Value::Object(handler));
            }
            group.insert("hooks".into(), Value::Array(kept));
            kept_groups.push(Value::Object(group));
        }
        events.insert(event, Value::Array(kept_groups));
    }
    if !events.is_empty() {
        out.settings = Some(serde_json::json!({ "hooks": events }));
    }
    Ok(out)
}

/// `PreToolUse` → `pre_tool_use` (how codex names an event in a hook's key).
fn snake_case(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

impl Settings {
    /// Reads codex's files: the user's (with `user`), then the
    /// workspace's.
    pub(crate) fn apply_codex_files(&mut self, workspace: &Path, user: bool) -> Result<(), String> {
        let mut files: Vec<(PathBuf, &'static str)> = Vec::new();
        let mut disabled = BTreeSet::new();
        let mut user_off = false;
        if user && let Some(home) = codex_home() {
            // The user's hook state and feature switch first: they apply
            // to every codex file.
            let config = home.join("config.toml");
            if let Some(text) = read(&config)? {
                let read = read_codex(&config, &text, &BTreeSet::new())?;
                disabled = read.disabled;
                user_off = read.hooks_off;
            }
            files.push((home.join("hooks.json"), "codex-user"));
            files.push((config, "codex-user"));
        }
        if user_off {
            self.warnings.push(format!(
                "{}: `[features] hooks = false`: codex's hooks are off",
                codex_home()
                    .map(|h| h.join("config.toml").display().to_string())
                    .unwrap_or_default()
            ));
            return Ok(());
        }
        let workspace_files = codex_workspace_paths(workspace);
        let workspace_off = match read(&workspace_files[1])? {
            Some(text) => read_codex(&workspace_files[1], &text, &disabled)?.hooks_off,
            None => false,
        };
        if workspace_off {
            self.warnings.push(format!(
                "{}: `[features] hooks = false`: the workspace's codex hooks are off",
                workspace_files[1].display()
            ));
        } else {
            files.extend(workspace_files.into_iter().map(|p| (p, "codex-project")));
        }
        let mut layer_defines: Vec<(&'static str, PathBuf)> = Vec::new();
        for (path, layer) in files {
            let Some(text) = read(&path)? else {
                continue;
            };
            let codex = read_codex(&path, &text, &disabled)?;
            self.warnings.extend(codex.warnings);
            let hooks = match &codex.settings {
                Some(settings) => Some(self.add_hooks(&path, settings)?),
                None => None,
            };
            if hooks.as_ref().is_some_and(|h| !h.is_empty()) {
                if let Some((_, other)) = layer_defines.iter().find(|(l, _)| *l == layer) {
                    self.warnings.push(format!(
                        "{}: hooks are in both {} and this file; both are used (as codex does), but codex advises one per layer",
                        path.display(),
                        other.display()
                    ));
                }
                layer_defines.push((layer, path.clone()));
            }
            self.defining.extend(crate::trust::Defining::of(
                &path,
                &text,
                hooks.as_ref(),
                &Default::default(),
            ));
            if hooks.is_some() {
                self.files.push(Origin::File { layer, path });
            }
        }
        Ok(())
    }
}

fn read(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!(
            "cannot read the codex file {}: {e}",
            path.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_codex_file_reads_as_claude_codes_shape_with_codexs_rules() {
        let text = r#"
model = "o4"
[features]
hooks = true

[[hooks.PreToolUse]]
matcher = "Bash"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "guard.sh"
timeout_sec = 5
commandWindows = "guard.ps1"
if = "Bash(rm *)"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "later.sh"
async = true
[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "prompt"

[hooks.state."/h/config.toml:pre_tool_use:0:1"]
enabled = false
"#;
        let path = Path::new("/h/config.toml");
        let read = read_codex(path, text, &BTreeSet::new()).unwrap();
        assert!(read.disabled.contains("/h/config.toml:pre_tool_use:0:1"));
        let settings = read.settings.unwrap();
        let handler = &settings["hooks"]["PreToolUse"][0]["hooks"][0];
        assert_eq!(handler["command"], "guard.sh");
        assert_eq!(handler["timeout"], 5);
        assert!(handler.get("if").is_none() && handler.get("commandWindows").is_none());
        assert_eq!(
            settings["hooks"]["PreToolUse"][0]["hooks"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        assert!(settings["hooks"].get("state").is_none());
        let warnings = read.warnings.join("\n");
        assert!(
            warnings.contains("`hooks.PreToolUse[0].hooks[0].if`: codex does not read"),
            "{warnings}"
        );
        assert!(warnings.contains("codex skips async hooks"), "{warnings}");
        assert!(
            warnings.contains("codex skips `prompt` handlers"),
            "{warnings}"
        );
        // The user's `enabled = false` turns that hook off.
        let read = read_codex(path, text, &read.disabled).unwrap();
        assert!(read.warnings.join("\n").contains("disabled in codex"));

        let off = read_codex(path, "[features]\nhooks = false\n", &BTreeSet::new()).unwrap();
        assert!(off.hooks_off && off.settings.is_none());
        let refused = read_codex(
            Path::new("/h/hooks.json"),
            r#"{"$schema": "x", "hooks": {}}"#,
            &BTreeSet::new(),
        )
        .unwrap();
        assert!(refused.settings.is_none());
        assert!(
            refused.warnings[0].contains("codex refuses"),
            "{:?}",
            refused.warnings
        );
        assert_eq!(snake_case("UserPromptSubmit"), "user_prompt_submit");
    }
}
