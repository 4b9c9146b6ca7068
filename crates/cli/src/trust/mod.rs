//! Trusting the files that start programs outside the sandbox.
//!
//! Hooks (a settings file's `hooks`) and MCP stdio servers (`.mcp.json`,
//! the `mcpServers` settings key, `--mcp-config`) run as the user, outside
//! the tools' sandbox. A file inside the workspace may have been written by
//! a model in an earlier session, or by a tack older than its protected
//! paths, or under full access, or, on the floor (no bubblewrap), by a
//! command where `.tack/` already existed. So a file inside the workspace that defines hooks or
//! MCP servers is used only if its exact current contents were trusted
//! with `tack trust` (see [`store`]); otherwise `tack run`, `tack chat` and
//! `tack mcp serve` refuse to start. This holds under every sandbox mode,
//! `full-access` included: a file planted by an earlier, confined session
//! is not vouched for by this one's lifting the confinement. Files outside
//! the workspace are the user's own and need no trust.
//!
//! A file is inside the workspace when its path as named, its directory
//! with symlinks resolved, or the file with symlinks resolved is: a
//! symlink the model planted inside the workspace pointing to a file
//! outside it still counts as the workspace's. The trust is recorded for
//! the file's canonical path (symlinks resolved).

pub mod command_files;
pub mod shell_words;
pub mod store;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use command_files::{FileState, Runs};
use store::{TrustStore, sha256_hex};

/// A file that defines hooks or MCP servers, as read for a session.
#[derive(Clone, Debug)]
pub struct Defining {
    /// The file as named.
    pub path: PathBuf,
    /// The SHA-256 of the bytes read (the ones used).
    pub sha256: String,
    /// What it starts: `hook EVENT [MATCHER] `COMMAND``, `MCP server …`.
    pub starts: Vec<String>,
    /// Its hook commands.
    pub commands: Vec<String>,
    /// Its MCP servers (`.mcp.json`'s shape).
    pub servers: BTreeMap<String, Value>,
}

impl Defining {
    /// The file `path` whose text is `text`, if its hooks or servers start
    /// anything (`None` when it defines neither).
    pub fn of(
        path: &Path,
        text: &str,
        hooks: Option<&tack_hooks::HooksConfig>,
        servers: &BTreeMap<String, Value>,
    ) -> Option<Self> {
        let starts = describe(hooks, servers);
        (!starts.is_empty()).then(|| Self {
            path: path.to_owned(),
            sha256: sha256_hex(text.as_bytes()),
            starts,
            commands: hook_commands(hooks),
            servers: servers.clone(),
        })
    }

    /// What its hook commands and stdio servers run from inside the
    /// workspace `root`, now.
    pub fn runs(&self, root: &Path) -> Runs {
        runs_of(&self.commands, &self.servers, root)
    }
}

/// What `commands` (hook commands) and `servers` run from inside the
/// workspace `root`, now.
pub fn runs_of(commands: &[String], servers: &BTreeMap<String, Value>, root: &Path) -> Runs {
    let mut runs = Runs::default();
    for command in commands {
        runs.extend(command_files::of_hook(command, root));
    }
    for (name, server) in servers {
        runs.extend(command_files::of_server(name, server, root));
    }
    runs
}

/// Every hook command of `hooks`.
pub fn hook_commands(hooks: Option<&tack_hooks::HooksConfig>) -> Vec<String> {
    let mut commands = Vec::new();
    if let Some(config) = hooks {
        for event in tack_hooks::HookEvent::ALL {
            for group in config.groups(event) {
                commands.extend(
                    group
                        .hooks
                        .iter()
                        .filter(|h| h.unsupported.is_none())
                        .map(tack_hooks::HookCommand::command_line),
                );
            }
        }
    }
    commands
}

/// How a file a command runs differs from what was trusted: `None` when
/// it is as recorded.
pub fn difference(recorded: Option<&FileState>, now: &FileState) -> Option<&'static str> {
    match (recorded, now) {
        (Some(then), now) if then == now => None,
        (None, _) => Some("was not trusted with it (it is new to what the command runs)"),
        (Some(Some(_)), Some(_)) => Some("changed since it was trusted"),
        (Some(Some(_)), None) => Some("is missing, though it existed when trusted"),
        (Some(None), Some(_)) => Some(
            "appeared since it was trusted (it did not exist then, and was recorded as one that must not appear)",
        ),
        (Some(None), None) => None,
    }
}

/// The first file of `runs` that differs from what `recorded` says of it
/// (see [`TrustStore::recorded`]), and how.
pub fn first_difference(
    recorded: impl Fn(&Path) -> Option<FileState>,
    runs: &Runs,
) -> Option<(PathBuf, &'static str)> {
    runs.files.iter().find_map(|(path, now)| {
        difference(recorded(path).as_ref(), now).map(|why| (path.clone(), why))
    })
}

/// One line per hook command and MCP server.
pub fn describe(
    hooks: Option<&tack_hooks::HooksConfig>,
    servers: &BTreeMap<String, Value>,
) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(config) = hooks {
        for event in tack_hooks::HookEvent::ALL {
            for group in config.groups(event) {
                for hook in group.hooks.iter().filter(|h| h.unsupported.is_none()) {
                    let matcher = if group.matcher.is_empty() {
                        "*"
                    } else {
                        &group.matcher
                    };
                    lines.push(format!(
                        "hook {event} [{matcher}] `{}`",
                        tack_agent::escape_line(&hook.command_line())
                    ));
                }
            }
        }
    }
    for (name, server) in servers {
        let name = tack_agent::escape_line(name);
        let line = match (server.get("command"), server.get("url")) {
            (Some(command), _) => {
                let mut words = vec![text_of(command)];
                if let Some(Value::Array(args)) = server.get("args") {
                    words.extend(args.iter().map(text_of));
                }
                format!(
                    "MCP server `{name}`: runs `{}`",
                    tack_agent::escape_line(&words.join(" "))
                )
            }
            (None, Some(url)) => format!(
                "MCP server `{name}`: connects to {}",
                tack_agent::escape_line(&text_of(url))
            ),
            _ => format!("MCP server `{name}`"),
        };
        lines.push(line);
    }
    lines
}

fn text_of(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

/// Whether `path` lies inside the workspace `root` (canonical): as named
/// (made absolute), with its directory's symlinks resolved, or resolved
/// whole.
pub fn inside(path: &Path, root: &Path) -> bool {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    if absolute.starts_with(root) {
        return true;
    }
    if let (Some(dir), Some(name)) = (absolute.parent(), absolute.file_name())
        && let Ok(dir) = dir.canonicalize()
        && dir.join(name).starts_with(root)
    {
        return true;
    }
    path.canonicalize().is_ok_and(|real| real.starts_with(root))
}

/// Where a file stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// Outside the workspace: the user's own.
    Outside,
    /// Inside, and these exact contents are trusted.
    Trusted,
    /// Inside, never trusted.
    New,
    /// Inside, trusted with other contents.
    Changed,
    /// Inside and trusted, but a file one of its commands runs is not as
    /// trusted: changed, missing, appeared, or never trusted with it.
    Runs {
        /// The file.
        file: PathBuf,
        /// How it differs.
        why: &'static str,
    },
}

impl State {
    /// For `tack config`.
    pub fn describe(&self) -> String {
        if let State::Runs { file, why } = self {
            return format!(
                "NOT trusted: {}, which one of its commands runs, {why}; run `tack trust` after reviewing it",
                file.display()
            );
        }
        match self {
            State::Outside => "outside the workspace (yours)",
            State::Trusted => "trusted",
            State::New => "NOT trusted (never reviewed): run `tack trust` after reviewing it",
            State::Changed | State::Runs { .. } => {
                "NOT trusted (changed since trusted): run `tack trust` after reviewing it"
            }
        }
        .to_owned()
    }
}

/// Judges files against the trust store, loaded when first needed.
pub struct Judge {
    root: PathBuf,
    store: Option<TrustStore>,
}

impl Judge {
    /// A judge for the workspace `root` (canonical).
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.to_owned(),
            store: None,
        }
    }

    fn store(&mut self) -> Result<&TrustStore, String> {
        if self.store.is_none() {
            let path = store::default_path()?;
            if inside(&path, &self.root) {
                return Err(format!(
                    "the trust store {} is inside the workspace {}, where the tools could write it, so it cannot vouch for the workspace's hook and MCP files; set XDG_STATE_HOME to a directory outside the workspace",
                    path.display(),
                    self.root.display()
                ));
            }
            self.store = Some(TrustStore::load(&path)?);
        }
        self.store
            .as_ref()
            .ok_or_else(|| "the trust store was not loaded".to_owned())
    }

    /// The state of `file`.
    ///
    /// # Errors
    ///
    /// The trust store cannot be read or is inside the workspace, or the
    /// file's canonical path cannot be found.
    pub fn state(&mut self, file: &Defining) -> Result<State, String> {
        if !inside(&file.path, &self.root) {
            return Ok(State::Outside);
        }
        let canonical = file
            .path
            .canonicalize()
            .map_err(|e| format!("cannot resolve {}: {e}", file.path.display()))?;
        let root = self.root.clone();
        let store = self.store()?;
        Ok(match store.get(&canonical) {
            Some(entry) if entry.sha256 == file.sha256 => {
                match first_difference(|path| store.recorded(path), &file.runs(&root)) {
                    Some((file, why)) => State::Runs { file, why },
                    None => State::Trusted,
                }
            }
            Some(_) => State::Changed,
            None => State::New,
        })
    }

    /// Every state the trust store records of the files commands run (see
    /// [`TrustStore::recorded`]).
    ///
    /// # Errors
    ///
    /// As [`Judge::state`].
    pub fn recorded(&mut self) -> Result<BTreeMap<PathBuf, FileState>, String> {
        Ok(self.store()?.all_recorded())
    }

    /// `Ok(Some(refusal))` for the first file inside the workspace whose
    /// contents are not trusted.
    ///
    /// # Errors
    ///
    /// As [`Judge::state`].
    pub fn refusal<'a>(
        &mut self,
        files: impl IntoIterator<Item = &'a Defining>,
    ) -> Result<Option<String>, String> {
        for file in files {
            let why = match self.state(file)? {
                State::Outside | State::Trusted => continue,
                State::New => "it has not been trusted".to_owned(),
                State::Changed => "it changed since it was trusted".to_owned(),
                State::Runs { file, why } => format!(
                    "the file {}, which one of its commands runs, {why}",
                    file.display()
                ),
            };
            let path = file.path.display();
            let mut message = format!(
                "refusing to start: {path} defines hooks or MCP servers, which start programs outside the sandbox with your rights, and {why}. It is inside the workspace, where a model could have written it. Review it and what its commands run, then run `tack trust {path}` (or `tack trust` for all of the workspace's files). It starts:"
            );
            for line in &file.starts {
                message.push_str("\n  ");
                message.push_str(line);
            }
            return Ok(Some(message));
        }
        Ok(None)
    }

    /// Errs with the refusal of the first untrusted file.
    ///
    /// # Errors
    ///
    /// A file inside the workspace is not trusted, or as [`Judge::state`].
    pub fn enforce<'a>(
        &mut self,
        files: impl IntoIterator<Item = &'a Defining>,
    ) -> Result<(), String> {
        match self.refusal(files)? {
            Some(refusal) => Err(refusal),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_inside_to_a_file_outside_is_inside() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let ws = base.join("ws");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        let outside = base.join("evil.json");
        std::fs::write(&outside, "{}").unwrap();
        let link = ws.join("settings.json");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        assert!(inside(&link, &ws));
        assert!(!inside(&outside, &ws));
        // A directory link inside pointing outside.
        std::os::unix::fs::symlink(&base, ws.join("up")).unwrap();
        assert!(inside(&ws.join("up/evil.json"), &ws));
        // A link outside pointing inside.
        std::fs::write(ws.join("sub/real.json"), "{}").unwrap();
        let back = base.join("back.json");
        std::os::unix::fs::symlink(ws.join("sub/real.json"), &back).unwrap();
        assert!(inside(&back, &ws));
        // Another spelling of the workspace through a link.
        let alias = base.join("alias");
        std::os::unix::fs::symlink(&ws, &alias).unwrap();
        assert!(inside(&alias.join("sub/real.json"), &ws));
    }

    #[test]
    fn descriptions_name_each_command_and_server() {
        let hooks = tack_hooks::HooksConfig::from_settings(
            &serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /x"}]}]}}),
            None,
        )
        .unwrap();
        let servers: BTreeMap<String, Value> = serde_json::from_value(serde_json::json!({
            "fs": {"command": "npx", "args": ["-y", "server"]},
            "web": {"type": "http", "url": "http://127.0.0.1:1/mcp"}
        }))
        .unwrap();
        assert_eq!(
            describe(Some(&hooks), &servers),
            [
                "hook Stop [*] `touch /x`",
                "MCP server `fs`: runs `npx -y server`",
                "MCP server `web`: connects to http://127.0.0.1:1/mcp",
            ]
        );
        assert!(Defining::of(Path::new("a"), "{}", None, &BTreeMap::new()).is_none());
    }
}
