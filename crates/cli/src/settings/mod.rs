//! The effective settings of a session, layered from files and flags, each
//! value remembering where it came from.
//!
//! Layers, later ones win (permission rules from every layer add up):
//!
//! 1. the user's `$XDG_CONFIG_HOME/tack/settings.json` (or `~/.config/…`);
//! 2. the workspace's `.tack/settings.json`;
//! 3. the workspace's `.tack/permissions.toml`;
//! 4. every `--settings FILE`, in order;
//! 5. `--permissions FILE`;
//! 6. the flags.
//!
//! The workspace's own files come with the code being worked on, so they
//! cannot switch the confinement off: they cannot set mode `allow-all` or
//! sandbox `full-access` (put those in the user's file, a `--settings` file,
//! or pass the flag). Nor can their allow rules act as those would: an
//! allow rule there must name one tool (no glob), a command pattern must
//! name its program (not a wildcard or only the start of a name, nor a
//! shell, interpreter or launcher followed by only options and a wildcard),
//! a path pattern must not be only wildcards, and an allow of
//! `bash` must have a command pattern (see [`widening`]). Their narrow
//! allow rules, asks and denies and `accept-edits` do apply, inside the
//! sandbox.

pub mod claude;
pub mod codex;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Deserializer};
use tack_agent::DEFAULT_MAX_STEPS;
use tack_permission::{Action, ArgKind, Mode, PermissionFile, Rule};
use tack_sandbox::SandboxMode;

use crate::args::{SessionArgs, parse_max_steps, parse_seconds};
use crate::model_spec::ModelSpec;
use crate::sandbox_layer::SandboxLayer;

/// The default request timeout of the HTTP models.
pub const DEFAULT_MODEL_TIMEOUT: Duration = Duration::from_secs(120);

/// Where a value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Nothing set it.
    Default,
    /// A settings or permission file (its layer and path).
    File {
        /// `user`, `workspace`, `--settings`, `--permissions`.
        layer: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// A command-line flag.
    Flag(&'static str),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::File { layer, path } => write!(f, "{layer} {}", path.display()),
            Origin::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

/// A value and its origin.
#[derive(Clone, Debug)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Where it came from.
    pub origin: Origin,
}

impl<T> Sourced<T> {
    fn default(value: T) -> Self {
        Self {
            value,
            origin: Origin::Default,
        }
    }

    pub(crate) fn set(&mut self, value: T, origin: Origin) {
        self.value = value;
        self.origin = origin;
    }
}

/// A permission rule and where it was written.
#[derive(Clone, Debug)]
pub struct SourcedRule {
    /// The rule.
    pub rule: Rule,
    /// `FILE line N` or `FILE key permissions.deny[0]`.
    pub origin: String,
}

/// The effective settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `mock`, `openai[:MODEL]`, `anthropic[:MODEL]` or `script:FILE`.
    pub model: Sourced<ModelSpec>,
    /// The HTTP model's base URL (`base_url`), over the environment's.
    pub base_url: Sourced<Option<String>>,
    /// The variable holding the HTTP model's key (`api_key_env`).
    pub api_key_env: Sourced<Option<String>>,
    /// The permission mode.
    pub mode: Sourced<Mode>,
    /// The sandbox mode.
    pub sandbox: Sourced<SandboxMode>,
    /// Which layer confines commands.
    pub sandbox_layer: Sourced<SandboxLayer>,
    /// Hidden paths and allowed Unix sockets for commands.
    pub sandbox_paths: crate::sandbox_paths::SandboxPaths,
    /// Model calls per turn.
    pub max_steps: Sourced<usize>,
    /// Every tool call's deadline (`None`: each tool's own).
    pub tool_timeout: Sourced<Option<Duration>>,
    /// The HTTP models' request timeout.
    pub model_timeout: Sourced<Duration>,
    /// `native`, `code` or `both`.
    pub presentation: Sourced<String>,
    /// The tool names hook commands see: `claude-code` (Claude Code's
    /// `Bash`, `file_path`, …) or `tack` (tack's own, unmapped).
    pub hook_names: Sourced<String>,
    /// Which of Claude Code's own settings files are read.
    pub claude_code_settings: Sourced<AgentFiles>,
    /// Which of codex's hooks files are read.
    pub codex_hooks: Sourced<AgentFiles>,
    /// The permission rules of every layer, in layer order.
    pub rules: Vec<SourcedRule>,
    /// The files read, in layer order.
    pub files: Vec<Origin>,
    /// The `hooks` of every layer that has some, in layer order.
    pub hooks: Vec<HookFile>,
    /// MCP servers by name (`.mcp.json`'s shape), later layers replacing
    /// earlier ones of the same name.
    pub mcp_servers: std::collections::BTreeMap<String, serde_json::Value>,
    /// The files read that define hooks or MCP servers, with the hash of
    /// the bytes read (judged by [`crate::trust`]).
    pub defining: Vec<crate::trust::Defining>,
    /// What was read but not used (unknown keys, Claude Code settings with
    /// no tack equivalent, rules read differently), once each, naming the
    /// file and key.
    pub warnings: Vec<String>,
    /// `disableAllHooks` requests: the file, and whether it is the
    /// workspace's.
    pub(crate) disable_hooks: Vec<(PathBuf, bool)>,
}

/// A settings file's `hooks` (checked by `tack-hooks`).
#[derive(Clone, Debug)]
pub struct HookFile {
    /// The file.
    pub path: PathBuf,
    /// Its hooks.
    pub config: tack_hooks::HooksConfig,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            model: Sourced::default(ModelSpec::Mock),
            base_url: Sourced::default(None),
            api_key_env: Sourced::default(None),
            mode: Sourced::default(Mode::Ask),
            sandbox: Sourced::default(SandboxMode::WorkspaceWrite),
            sandbox_layer: Sourced::default(SandboxLayer::Auto),
            sandbox_paths: Default::default(),
            max_steps: Sourced::default(DEFAULT_MAX_STEPS),
            tool_timeout: Sourced::default(None),
            model_timeout: Sourced::default(DEFAULT_MODEL_TIMEOUT),
            presentation: Sourced::default("native".to_owned()),
            hook_names: Sourced::default("claude-code".to_owned()),
            claude_code_settings: Sourced::default(AgentFiles::All),
            codex_hooks: Sourced::default(AgentFiles::Project),
            rules: Vec::new(),
            files: Vec::new(),
            hooks: Vec::new(),
            mcp_servers: Default::default(),
            defining: Vec::new(),
            warnings: Vec::new(),
            disable_hooks: Vec::new(),
        }
    }
}

/// One settings file as written (every key optional; unknown keys are
/// warned about by [`unknown_keys`] and ignored).
#[derive(Debug, Default, Deserialize)]
struct RawSettings {
    #[serde(default, deserialize_with = "parsed")]
    model: Option<ModelSpec>,
    #[serde(default, deserialize_with = "non_empty")]
    base_url: Option<String>,
    #[serde(default, deserialize_with = "non_empty")]
    api_key_env: Option<String>,
    #[serde(default, deserialize_with = "parsed")]
    mode: Option<Mode>,
    #[serde(default, deserialize_with = "parsed")]
    sandbox: Option<SandboxMode>,
    #[serde(default, deserialize_with = "parsed")]
    sandbox_layer: Option<SandboxLayer>,
    #[serde(default)]
    sandbox_hide: Vec<String>,
    #[serde(default)]
    sandbox_unhide: Vec<String>,
    #[serde(default)]
    sandbox_unix_sockets: Vec<String>,
    #[serde(default, deserialize_with = "steps")]
    max_steps: Option<usize>,
    #[serde(default, deserialize_with = "seconds")]
    tool_timeout: Option<Duration>,
    #[serde(default, deserialize_with = "seconds")]
    model_timeout: Option<Duration>,
    #[serde(default, deserialize_with = "presentation")]
    presentation: Option<String>,
    #[serde(default, deserialize_with = "hook_names")]
    hook_names: Option<String>,
    #[serde(default, deserialize_with = "parsed")]
    claude_code_settings: Option<AgentFiles>,
    #[serde(default, deserialize_with = "parsed")]
    codex_hooks: Option<AgentFiles>,
    /// Claude Code's switch, also read in tack's own files.
    #[serde(default, rename = "disableAllHooks")]
    disable_all_hooks: Option<bool>,
    #[serde(default)]
    permissions: Option<RawPermissions>,
    /// Claude Code's `hooks` object, read by `tack-hooks`.
    #[serde(default)]
    hooks: Option<serde_json::Value>,
    #[serde(default, rename = "mcpServers")]
    mcp_servers: std::collections::BTreeMap<String, serde_json::Value>,
}

/// `"permissions": {"allow": [...], "ask": [...], "deny": [...]}` in the
/// compact rule syntax of `permissions.toml` (or Claude Code's).
#[derive(Debug, Default, Deserialize)]
struct RawPermissions {
    #[serde(default)]
    allow: Vec<AllowRule>,
    #[serde(default)]
    ask: Vec<AskRule>,
    #[serde(default)]
    deny: Vec<DenyRule>,
}

fn parsed<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: std::str::FromStr,
    T::Err: fmt::Display,
{
    let text = String::deserialize(d)?;
    text.parse().map(Some).map_err(serde::de::Error::custom)
}

fn non_empty<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let text = String::deserialize(d)?;
    if text.trim().is_empty() {
        return Err(serde::de::Error::custom("must not be empty"));
    }
    Ok(Some(text))
}

fn presentation<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let text = String::deserialize(d)?;
    if ["native", "code", "both"].contains(&text.as_str()) {
        Ok(Some(text))
    } else {
        Err(serde::de::Error::custom(format!(
            "unknown presentation `{text}`: use native, code or both"
        )))
    }
}

fn hook_names<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let text = String::deserialize(d)?;
    if ["claude-code", "tack"].contains(&text.as_str()) {
        Ok(Some(text))
    } else {
        Err(serde::de::Error::custom(format!(
            "unknown hook names `{text}`: use claude-code (Bash, file_path, …) or tack (bash, path, …)"
        )))
    }
}

fn steps<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    let n = serde_json::Number::deserialize(d)?;
    parse_max_steps(&n.to_string())
        .map(Some)
        .map_err(serde::de::Error::custom)
}

fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let n = serde_json::Number::deserialize(d)?;
    parse_seconds(&n.to_string())
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// One rule of a compact list, parsed with the list's action (each list
/// element is deserialized on its own, so an error names its index). A
/// rule in Claude Code's syntax (`Bash(npm run test:*)`, `Read(./.env)`)
/// is read with Claude Code's meaning, as one or more tack rules.
macro_rules! rule_of {
    ($name:ident, $action:expr) => {
        #[derive(Debug)]
        struct $name(Vec<Rule>, Option<String>);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                match Rule::parse($action, &text) {
                    Ok(rule) => Ok($name(vec![rule], None)),
                    Err(tack_error) if looks_like_claude_rule(&text) => {
                        let home = std::env::var_os("HOME").map(PathBuf::from);
                        let read =
                            tack_permission::claude_rule($action, &text, home.as_deref(), None)
                                .map_err(|e| {
                                    serde::de::Error::custom(format!(
                                        "{tack_error}; read as a Claude Code rule: {e}"
                                    ))
                                })?;
                        Ok($name(read.rules, read.note))
                    }
                    Err(e) => Err(serde::de::Error::custom(e)),
                }
            }
        }
    };
}

/// Whether `text` is written like a Claude Code rule (`Bash`, `Read(...)`,
/// `mcp__server`): a capitalized tool name, or an MCP name with no
/// argument list in tack's `name: "pattern"` form.
fn looks_like_claude_rule(text: &str) -> bool {
    let text = text.trim();
    let tool = text.split('(').next().unwrap_or_default();
    tool.starts_with(|c: char| c.is_ascii_uppercase())
        || (tool.starts_with("mcp__") && !text.contains(": \""))
}

rule_of!(AllowRule, Action::Allow);
rule_of!(AskRule, Action::Ask);
rule_of!(DenyRule, Action::Deny);

/// Parses one settings file's text; errors read `FILE:LINE:COLUMN: key
/// `K`: what is wrong`.
fn parse_settings(text: &str, name: &str) -> Result<RawSettings, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let describe = |inner: &serde_json::Error, path: &str| {
        let suffix = format!(" at line {} column {}", inner.line(), inner.column());
        let full = inner.to_string();
        let message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
        let key = if path == "." || path.is_empty() {
            String::new()
        } else {
            format!("key `{path}`: ")
        };
        let (line, column) = if inner.classify() == serde_json::error::Category::Data {
            value_end(text, inner.line(), inner.column())
        } else {
            (inner.line(), inner.column())
        };
        format!("{name}:{line}:{column}: {key}{message}")
    };
    let raw: RawSettings = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| describe(e.inner(), &e.path().to_string()))?;
    // Trailing text after the object is an error too.
    de.end().map_err(|e| describe(&e, ""))?;
    Ok(raw)
}

/// tack's own settings keys.
const KNOWN_KEYS: &[&str] = &[
    "model",
    "base_url",
    "api_key_env",
    "mode",
    "sandbox",
    "sandbox_layer",
    "max_steps",
    "tool_timeout",
    "model_timeout",
    "presentation",
    "hook_names",
    "claude_code_settings",
    "codex_hooks",
    "disableAllHooks",
    "permissions",
    "hooks",
    "mcpServers",
];

/// The keys of a settings file (already parsed, so valid JSON) that tack
/// does not read, as `key` or `permissions.key`.
fn unknown_keys(text: &str) -> Vec<String> {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let mut unknown: Vec<String> = map
        .keys()
        .filter(|k| !KNOWN_KEYS.contains(&k.as_str()))
        .cloned()
        .collect();
    if let Some(serde_json::Value::Object(p)) = map.get("permissions") {
        unknown.extend(
            p.keys()
                .filter(|k| !["allow", "ask", "deny"].contains(&k.as_str()))
                .map(|k| format!("permissions.{k}")),
        );
    }
    unknown
}

/// Where the value before `(line, column)` ends. serde_json reports a bad
/// value where it stopped reading, which can be the next line's `}`; the
/// value itself ends at the last non-blank character before that.
fn value_end(text: &str, line: usize, column: usize) -> (usize, usize) {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let mut offset = (line_start + column.saturating_sub(1)).min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = text[..offset].trim_end();
    let end_line = before.matches('\n').count() + 1;
    let end_column = before.rsplit('\n').next().map_or(0, |l| l.chars().count());
    (end_line, end_column.max(1))
}

/// The 1-based line of the first `"key":` in `text` (for errors found after
/// parsing).
fn key_line(text: &str, key: &str, quoted: bool) -> usize {
    let needle = if quoted {
        format!("\"{key}\"")
    } else {
        key.to_owned()
    };
    text.lines()
        .position(|line| line.trim_start().starts_with(&needle))
        .map_or(1, |i| i + 1)
}

/// Which of another agent's own files a session reads:
/// `claude_code_settings` (Claude Code's settings files) and `codex_hooks`
/// (codex's hooks files).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum AgentFiles {
    /// None of them.
    None,
    /// The workspace's (`.claude/`, `.codex/`), not the user's.
    Project,
    /// The user's and the workspace's.
    All,
}

impl AgentFiles {
    /// The setting's value.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentFiles::None => "none",
            AgentFiles::Project => "project",
            AgentFiles::All => "all",
        }
    }
}

impl std::str::FromStr for AgentFiles {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "all" => Ok(AgentFiles::All),
            "project" => Ok(AgentFiles::Project),
            "none" => Ok(AgentFiles::None),
            other => Err(format!(
                "unknown value `{other}`: use all (your own files and the workspace's), project (the workspace's only) or none"
            )),
        }
    }
}

/// `claude_code_settings` and `codex_hooks` from tack's own settings files:
/// the user's, then every `--settings` (the later wins). They are the
/// user's choice: the workspace's `.tack/settings.json` cannot set them (it
/// could turn off the user's own guard hooks and deny rules, or turn on
/// hooks the user left to another agent), and a warning says so.
fn agent_files(
    workspace: &Path,
    args: &SessionArgs,
    warnings: &mut Vec<String>,
) -> Result<(Sourced<AgentFiles>, Sourced<AgentFiles>), String> {
    let mut claude = Sourced::default(AgentFiles::All);
    let mut codex = Sourced::default(AgentFiles::Project);
    let mut layers: Vec<(PathBuf, &'static str, bool)> = Vec::new();
    if let Some(user) = user_settings_path() {
        layers.push((user, "user", true));
    }
    layers.push((
        workspace.join(".tack").join("settings.json"),
        "workspace",
        true,
    ));
    layers.extend(
        args.settings
            .iter()
            .map(|file| (file.clone(), "--settings", false)),
    );
    for (path, layer, optional) in layers {
        let Some(text) = read_optional(&path, optional, "settings file")? else {
            continue;
        };
        let name = path.display().to_string();
        let raw = parse_settings(&text, &name)?;
        for (key, value, chosen) in [
            (
                "claude_code_settings",
                raw.claude_code_settings,
                &mut claude,
            ),
            ("codex_hooks", raw.codex_hooks, &mut codex),
        ] {
            let Some(value) = value else {
                continue;
            };
            if layer == "workspace" {
                warnings.push(format!(
                    "{name}: key `{key}`: a workspace's own settings cannot choose which of your own agents' files are read (it could turn off your own hooks and deny rules); ignored — set it in your user settings or a --settings file"
                ));
                continue;
            }
            chosen.set(
                value,
                Origin::File {
                    layer,
                    path: path.clone(),
                },
            );
        }
    }
    Ok((claude, codex))
}

/// The user's settings file: `$XDG_CONFIG_HOME/tack/settings.json`, or
/// `$HOME/.config/tack/settings.json` (only absolute values count).
pub fn user_settings_path() -> Option<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    absolute("XDG_CONFIG_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".config")))
        .map(|config| config.join("tack").join("settings.json"))
}

/// Reads `path`, a `what` (`settings file`, `permissions file`);
/// `Ok(None)` when it is absent and `optional`.
fn read_optional(path: &Path, optional: bool, what: &str) -> Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if optional && e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read the {what} {}: {e}", path.display())),
    }
}

/// Tools whose allow rules need a command pattern in a workspace's own
/// file: they run programs.
const EXECUTING_TOOLS: &[&str] = &["bash"];

/// Programs that run whatever their arguments say: a command pattern of
/// one of them followed by a wildcard allows any command.
const LAUNCHERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "fish", "env", "exec", "eval", "command", "builtin",
    "xargs", "sudo", "doas", "nohup", "nice", "timeout", "time", "stdbuf", "setsid", "python",
    "python3", "node", "perl", "ruby", "php", "lua", "deno", "bun", "npx", "uv", "uvx",
];

fn has_wildcard(text: &str) -> bool {
    text.contains(['*', '?', '[', '{'])
}

/// Why `rule`, in a workspace's own permission rules, would widen the
/// confinement the way mode `allow-all` would (`None`: it does not; only
/// allow rules can).
pub fn widening(rule: &Rule) -> Option<String> {
    if rule.action() != Action::Allow {
        return None;
    }
    let tool = rule.tool();
    if has_wildcard(tool) {
        return Some(format!(
            "its tool pattern `{tool}` is not one tool's name, so it allows every tool it matches"
        ));
    }
    for arg in rule.args() {
        let pattern = arg.pattern();
        match arg.kind() {
            ArgKind::Command => {
                if let Some(why) = command_widening(pattern) {
                    return Some(format!("its command pattern `{pattern}` {why}"));
                }
            }
            _ => {
                if pattern
                    .chars()
                    .all(|c| matches!(c, '*' | '?' | '/' | '.' | ' '))
                {
                    return Some(format!(
                        "its path pattern `{pattern}` is only wildcards, so it allows every path"
                    ));
                }
            }
        }
    }
    if EXECUTING_TOOLS.contains(&tool) && !rule.args().iter().any(|a| a.kind() == ArgKind::Command)
    {
        return Some(format!(
            "`{tool}` runs commands and the rule names none, so it allows any command"
        ));
    }
    None
}

/// Why the command pattern `pattern` of an allow rule allows any command.
/// A pattern is literal words, with one `*` at the end for a prefix
/// (`git status*`); when the text before that `*` ends in a character other
/// than a letter, digit or space, its last word is a prefix of a word too.
fn command_widening(pattern: &str) -> Option<&'static str> {
    let trimmed = pattern.trim();
    let (body, prefix) = match trimmed.strip_suffix('*') {
        Some(body) => (body, true),
        None => (trimmed, false),
    };
    let words: Vec<&str> = body.split_whitespace().collect();
    let Some(program) = words.first() else {
        return Some("does not name the program, so it allows any command");
    };
    if has_wildcard(program) {
        return Some("does not name the program, so it allows any command");
    }
    let partial = body
        .chars()
        .last()
        .is_some_and(|c| !c.is_alphanumeric() && !c.is_whitespace());
    if prefix && partial && words.len() == 1 {
        return Some(
            "names only the start of the program, so it allows any program that starts so",
        );
    }
    let base = program.rsplit('/').next().unwrap_or(program);
    // A launcher followed only by options, assignments or numbers, then
    // anything: it runs whatever follows.
    let open = words[1..].iter().all(|w| {
        w.starts_with('-') || is_env_assignment(w) || w.chars().all(|c| c.is_ascii_digit())
    });
    if prefix && LAUNCHERS.contains(&base) && open {
        return Some(
            "lets a shell, interpreter or launcher run whatever follows, so it allows any command",
        );
    }
    None
}

fn is_env_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The refusal of a widening allow rule of a workspace's own file, in the
/// words of the `mode = "allow-all"` refusal.
fn refuse_allow(place: &str, key: &str, rule: &Rule, why: &str) -> String {
    format!(
        "{place}: key `{key}`: a workspace's own permission rules cannot {rule}: {why}, which acts like mode `allow-all` (it would loosen the confinement for anyone running tack here); allow specific commands or paths instead (e.g. `bash(command: \"git status*\")`), or put the rule in your user settings ({}) or a --permissions file, or pass --mode allow-all",
        user_settings_path().map_or_else(
            || "$XDG_CONFIG_HOME/tack/settings.json".to_owned(),
            |p| p.display().to_string()
        ),
    )
}

impl Settings {
    /// The effective settings for a session in `workspace` with `args`.
    ///
    /// # Errors
    ///
    /// A message naming the file, line and key of a bad value, or the flag.
    pub fn load(workspace: &Path, args: &SessionArgs) -> Result<Self, String> {
        let mut settings = Settings::default();
        // Which of Claude Code's files to read is decided by tack's own
        // files before any of them is read.
        (settings.claude_code_settings, settings.codex_hooks) =
            agent_files(workspace, args, &mut settings.warnings)?;
        let claude = settings.claude_code_settings.value;
        // Claude Code's files first, each below tack's own of its scope;
        // the workspace's above the user's (Claude Code's precedence).
        if claude == AgentFiles::All
            && let Some(path) = crate::settings::claude::claude_user_settings_path()
        {
            settings.apply_claude_file(&path, "claude-user")?;
        }
        if let Some(user) = user_settings_path() {
            settings.apply_json_file(&user, "user", true)?;
        }
        if claude != AgentFiles::None {
            let [shared, local] =
                crate::settings::claude::claude_workspace_settings_paths(workspace);
            settings.apply_claude_file(&shared, "claude-project")?;
            settings.apply_claude_file(&local, "claude-local")?;
        }
        // codex's hooks files (hooks only), the user's then the workspace's.
        if settings.codex_hooks.value != AgentFiles::None {
            let user = settings.codex_hooks.value == AgentFiles::All;
            settings.apply_codex_files(workspace, user)?;
        }
        let dot = workspace.join(".tack");
        settings.apply_json_file(&dot.join("settings.json"), "workspace", true)?;
        settings.apply_permission_file(&dot.join("permissions.toml"), "workspace", true)?;
        for file in &args.settings {
            settings.apply_json_file(file, "--settings", false)?;
        }
        if let Some(file) = &args.permissions {
            settings.apply_permission_file(file, "--permissions", false)?;
        }
        settings.apply_flags(args)?;
        settings.apply_disable_hooks(workspace);
        Ok(settings)
    }

    fn apply_json_file(
        &mut self,
        path: &Path,
        layer: &'static str,
        optional: bool,
    ) -> Result<(), String> {
        let Some(text) = read_optional(path, optional, "settings file")? else {
            return Ok(());
        };
        let name = path.display().to_string();
        let raw = parse_settings(&text, &name)?;
        let unknown = unknown_keys(&text);
        if !unknown.is_empty() {
            self.warnings.push(format!(
                "{name}: not tack settings, ignored: {}",
                unknown
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let origin = Origin::File {
            layer,
            path: path.to_owned(),
        };
        if layer == "workspace" {
            let refuse = |key: &str, value: &str| {
                format!(
                    "{name}:{}: key `{key}`: a workspace's own settings cannot set {key} `{value}` (it would loosen the confinement for anyone running tack here); set it in your user settings ({}) or pass --{key} {value}",
                    key_line(&text, key, true),
                    user_settings_path().map_or_else(
                        || "$XDG_CONFIG_HOME/tack/settings.json".to_owned(),
                        |p| p.display().to_string()
                    ),
                )
            };
            if raw.mode == Some(Mode::AllowAll) {
                return Err(refuse("mode", "allow-all"));
            }
            if raw.sandbox == Some(SandboxMode::FullAccess) {
                return Err(refuse("sandbox", "full-access"));
            }
            if raw.sandbox_layer == Some(SandboxLayer::Floor) {
                return Err(refuse("sandbox_layer", "floor"));
            }
        }
        let hooks = match raw.hooks {
            Some(value) => Some(self.add_hooks(path, &serde_json::json!({ "hooks": value }))?),
            None => None,
        };
        self.defining.extend(crate::trust::Defining::of(
            path,
            &text,
            hooks.as_ref(),
            &raw.mcp_servers,
        ));
        if let Some(v) = raw.model {
            self.model.set(v, origin.clone());
        }
        if let Some(v) = raw.base_url {
            self.base_url.set(Some(v), origin.clone());
        }
        if let Some(v) = raw.api_key_env {
            self.api_key_env.set(Some(v), origin.clone());
        }
        if let Some(v) = raw.mode {
            self.mode.set(v, origin.clone());
        }
        if let Some(v) = raw.sandbox {
            self.sandbox.set(v, origin.clone());
        }
        if let Some(v) = raw.sandbox_layer {
            self.sandbox_layer.set(v, origin.clone());
        }
        self.sandbox_paths.add(
            &name,
            layer == "workspace",
            raw.sandbox_hide,
            raw.sandbox_unhide,
            raw.sandbox_unix_sockets,
        )?;
        if let Some(v) = raw.max_steps {
            self.max_steps.set(v, origin.clone());
        }
        if let Some(v) = raw.tool_timeout {
            self.tool_timeout.set(Some(v), origin.clone());
        }
        if let Some(v) = raw.model_timeout {
            self.model_timeout.set(v, origin.clone());
        }
        if let Some(v) = raw.presentation {
            self.presentation.set(v, origin.clone());
        }
        if let Some(v) = raw.hook_names {
            self.hook_names.set(v, origin.clone());
        }
        if raw.disable_all_hooks == Some(true) {
            self.disable_hooks
                .push((path.to_owned(), layer == "workspace"));
        }
        self.mcp_servers.extend(raw.mcp_servers);
        if let Some(p) = raw.permissions {
            if layer == "workspace" {
                for (i, rules) in p.allow.iter().enumerate() {
                    for rule in &rules.0 {
                        if let Some(why) = widening(rule) {
                            return Err(refuse_allow(
                                &format!("{name}:{}", key_line(&text, "allow", true)),
                                &format!("permissions.allow[{i}]"),
                                rule,
                                &why,
                            ));
                        }
                    }
                }
            }
            /// A list entry: its rules and a note on how it was read.
            type Entry = (Vec<Rule>, Option<String>);
            let lists: [(&str, Vec<Entry>); 3] = [
                ("allow", p.allow.into_iter().map(|r| (r.0, r.1)).collect()),
                ("ask", p.ask.into_iter().map(|r| (r.0, r.1)).collect()),
                ("deny", p.deny.into_iter().map(|r| (r.0, r.1)).collect()),
            ];
            for (list, entries) in lists {
                for (i, (rules, note)) in entries.into_iter().enumerate() {
                    if let Some(note) = note {
                        self.warnings
                            .push(format!("{name}: key `permissions.{list}[{i}]`: {note}"));
                    }
                    for rule in rules {
                        self.rules.push(SourcedRule {
                            rule,
                            origin: format!("{name} key permissions.{list}[{i}]"),
                        });
                    }
                }
            }
        }
        self.files.push(origin);
        Ok(())
    }

    /// Reads the `hooks` of `settings` (a whole settings object), the file
    /// at `path`, and keeps them.
    pub(crate) fn add_hooks(
        &mut self,
        path: &Path,
        settings: &serde_json::Value,
    ) -> Result<tack_hooks::HooksConfig, String> {
        let config = tack_hooks::HooksConfig::from_settings(settings, Some(path))
            .map_err(|e| e.to_string())?;
        self.hooks.push(HookFile {
            path: path.to_owned(),
            config: config.clone(),
        });
        Ok(config)
    }

    fn apply_permission_file(
        &mut self,
        path: &Path,
        layer: &'static str,
        optional: bool,
    ) -> Result<(), String> {
        let Some(text) = read_optional(path, optional, "permissions file")? else {
            return Ok(());
        };
        let name = path.display().to_string();
        let file = PermissionFile::parse(&text, &name).map_err(|e| e.to_string())?;
        let origin = Origin::File {
            layer,
            path: path.to_owned(),
        };
        if let Some(mode) = file.mode {
            if layer == "workspace" && mode == Mode::AllowAll {
                return Err(format!(
                    "{name}:{}: key `mode`: a workspace's own permission file cannot set mode `allow-all` (it would loosen the confinement for anyone running tack here); pass --mode allow-all, or set it in your user settings",
                    key_line(&text, "mode", false)
                ));
            }
            self.mode.set(mode, origin.clone());
        }
        if layer == "workspace" {
            for rule in file.rules.rules() {
                if let Some(why) = widening(rule) {
                    // `FILE line N` → `FILE:N`, and the key it was written under.
                    let line = rule
                        .origin()
                        .and_then(|o| o.rsplit_once(" line "))
                        .and_then(|(_, n)| n.parse::<usize>().ok());
                    let key = match line.and_then(|n| text.lines().nth(n.saturating_sub(1))) {
                        Some(l) if l.trim_start().starts_with("action") => "rule",
                        _ => "allow",
                    };
                    let place = line.map_or_else(|| name.clone(), |n| format!("{name}:{n}"));
                    return Err(refuse_allow(&place, key, rule, &why));
                }
            }
        }
        for rule in file.rules.rules() {
            self.rules.push(SourcedRule {
                rule: rule.clone(),
                origin: rule.origin().map_or_else(|| name.clone(), str::to_owned),
            });
        }
        self.files.push(origin);
        Ok(())
    }

    fn apply_flags(&mut self, args: &SessionArgs) -> Result<(), String> {
        // Enumerated values were checked by the command line's parser.
        if let Some(model) = &args.agent.model {
            self.model.set(model.clone(), Origin::Flag("--model"));
        }
        if let Some(mode) = args.mode {
            self.mode.set(mode.into(), Origin::Flag("--mode"));
        }
        if let Some(layer) = args.sandbox_layer {
            self.sandbox_layer
                .set(layer, Origin::Flag("--sandbox-layer"));
        }
        if let Some(sandbox) = args.sandbox {
            self.sandbox.set(sandbox.into(), Origin::Flag("--sandbox"));
        }
        if let Some(steps) = args.agent.max_steps {
            self.max_steps.set(steps, Origin::Flag("--max-steps"));
        }
        if let Some(timeout) = args.tool_timeout {
            self.tool_timeout
                .set(Some(timeout), Origin::Flag("--tool-timeout"));
        }
        if let Some(timeout) = args.agent.model_timeout {
            self.model_timeout
                .set(timeout, Origin::Flag("--model-timeout"));
        }
        if let Some(presentation) = args.presentation {
            self.presentation.set(
                presentation.as_str().to_owned(),
                Origin::Flag("--presentation"),
            );
        }
        Ok(())
    }

    /// The settings as `key = value  (origin)` lines, for `tack config`.
    pub fn describe(&self) -> Vec<String> {
        let seconds = |d: &Duration| format!("{}s", d.as_secs_f64());
        let rows: Vec<(&str, String, &Origin)> = vec![
            ("model", self.model.value.to_string(), &self.model.origin),
            (
                "base_url",
                self.base_url
                    .value
                    .clone()
                    .unwrap_or_else(|| "provider default".to_owned()),
                &self.base_url.origin,
            ),
            (
                "api_key_env",
                self.api_key_env
                    .value
                    .clone()
                    .unwrap_or_else(|| "provider default".to_owned()),
                &self.api_key_env.origin,
            ),
            (
                "mode",
                self.mode.value.as_str().to_owned(),
                &self.mode.origin,
            ),
            (
                "sandbox",
                self.sandbox.value.as_str().to_owned(),
                &self.sandbox.origin,
            ),
            (
                "sandbox_layer",
                self.sandbox_layer.value.as_str().to_owned(),
                &self.sandbox_layer.origin,
            ),
            (
                "max_steps",
                self.max_steps.value.to_string(),
                &self.max_steps.origin,
            ),
            (
                "tool_timeout",
                self.tool_timeout
                    .value
                    .as_ref()
                    .map_or_else(|| "each tool's own".to_owned(), seconds),
                &self.tool_timeout.origin,
            ),
            (
                "model_timeout",
                seconds(&self.model_timeout.value),
                &self.model_timeout.origin,
            ),
            (
                "presentation",
                self.presentation.value.clone(),
                &self.presentation.origin,
            ),
            (
                "hook_names",
                self.hook_names.value.clone(),
                &self.hook_names.origin,
            ),
            (
                "claude_code_settings",
                self.claude_code_settings.value.as_str().to_owned(),
                &self.claude_code_settings.origin,
            ),
            (
                "codex_hooks",
                self.codex_hooks.value.as_str().to_owned(),
                &self.codex_hooks.origin,
            ),
        ];
        let width = rows
            .iter()
            .map(|(k, v, _)| k.len() + v.len())
            .max()
            .unwrap_or(0);
        let mut out: Vec<String> = rows
            .iter()
            .map(|(key, value, origin)| {
                let pad = width - key.len() - value.len();
                format!("{key} = {value}{:pad$}  ({origin})", "")
            })
            .collect();
        if self.rules.is_empty() {
            out.push("permission rules: none".to_owned());
        } else {
            out.push("permission rules (the strictest matching rule wins):".to_owned());
            for sourced in &self.rules {
                out.push(format!("  {}  ({})", sourced.rule, sourced.origin));
            }
        }
        if self.files.is_empty() {
            out.push("files read: none".to_owned());
        } else {
            out.push("files read:".to_owned());
            for file in &self.files {
                out.push(format!("  {file}"));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse_settings(text, "s.json").unwrap_err()
    }

    #[test]
    fn errors_name_file_line_and_key() {
        let e = err("{\n  \"model\": \"mock\",\n  \"mode\": \"allow-everything\"\n}");
        assert!(e.starts_with("s.json:3:"), "{e}");
        assert!(e.contains("key `mode`"), "{e}");
        assert!(e.contains("allow-everything"), "{e}");
        let e = err("{\n \"max_steps\": 0\n}");
        assert!(
            e.starts_with("s.json:2:") && e.contains("key `max_steps`") && e.contains("at least 1"),
            "{e}"
        );
        let e = err("{\"permissions\": {\"deny\": [\"bash(command: \\\"rm *\\\"\"]}}");
        assert!(e.contains("key `permissions.deny[0]`"), "{e}");
        assert!(parse_settings("{\n\"mcp_servers\": {}\n}", "s.json").is_ok());
        assert_eq!(
            unknown_keys("{\"mcp_servers\": {}, \"model\": \"mock\"}"),
            ["mcp_servers"]
        );
        let e = err("{\"model\": \"mock\",}");
        assert!(e.starts_with("s.json:1:"), "{e}");
        let e = err("{} {}");
        assert!(e.contains("trailing"), "{e}");
        let e = err("{\"tool_timeout\": -1}");
        assert!(e.contains("key `tool_timeout`"), "{e}");
        let e = err("{\"model\": \"gpt\"}");
        assert!(e.contains("unknown model `gpt`"), "{e}");
    }

    #[test]
    fn every_key_is_read() {
        let raw = parse_settings(
            r#"{"model": "anthropic", "mode": "read-only", "sandbox": "read-only",
                "max_steps": 3, "tool_timeout": 2.5, "model_timeout": 9,
                "presentation": "code", "mcpServers": {"fs": {"command": "mcp-fs"}},
                "permissions": {"allow": ["read_file"], "deny": ["bash(command: \"rm *\")"]}}"#,
            "s.json",
        )
        .unwrap();
        assert_eq!(raw.model, Some(ModelSpec::Anthropic(None)));
        assert_eq!(raw.mode, Some(Mode::ReadOnly));
        assert_eq!(raw.sandbox, Some(SandboxMode::ReadOnly));
        assert_eq!(raw.max_steps, Some(3));
        assert_eq!(raw.tool_timeout, Some(Duration::from_millis(2500)));
        assert_eq!(raw.model_timeout, Some(Duration::from_secs(9)));
        assert_eq!(raw.presentation.as_deref(), Some("code"));
        assert_eq!(raw.mcp_servers["fs"]["command"], "mcp-fs");
        let p = raw.permissions.unwrap();
        assert_eq!(p.allow.len(), 1);
        assert_eq!(p.deny[0].0[0].to_string(), r#"deny bash(command: "rm *")"#);
    }

    #[test]
    fn only_narrow_allows_are_not_widening() {
        let widens = |text: &str| widening(&Rule::parse(Action::Allow, text).unwrap());
        for wide in [
            "*",
            "bash",
            "b*",
            "mcp__*",
            r#"bash(command: "*")"#,
            r#"bash(command: "* status")"#,
            r#"bash(command: "sh -c *")"#,
            r#"bash(command: "sh*")"#,
            r#"bash(command: "/usr/bin/env *")"#,
            r#"bash(command: "env FOO=1 *")"#,
            r#"bash(command: "timeout 10 *")"#,
            r#"bash(command: "/*")"#,
            r#"bash(command: "./*")"#,
            r#"write_file(path: "**")"#,
            r#"edit_file(path: "**/*")"#,
        ] {
            assert!(widens(wide).is_some(), "{wide}");
        }
        for narrow in [
            r#"bash(command: "git status*")"#,
            r#"bash(command: "cargo test")"#,
            r#"bash(command: "ls*")"#,
            r#"bash(command: "ls -*")"#,
            r#"bash(command: "python3 -m pytest*")"#,
            r#"bash(command: "timeout 10 cargo test*")"#,
            r#"bash(command: "sh scripts/check.sh")"#,
            "read_file",
            "write_file",
            r#"write_file(path: "src/**")"#,
        ] {
            assert_eq!(widens(narrow), None, "{narrow}");
        }
        assert_eq!(
            widening(&Rule::parse(Action::Deny, "*").unwrap()),
            None,
            "denies only narrow"
        );
    }

    proptest::proptest! {
        /// Whatever a settings file holds, it is read or refused with a
        /// place inside the file; it never panics.
        #[test]
        fn any_text_is_read_or_refused_with_its_place(text in "\\PC{0,80}") {
            if let Err(e) = parse_settings(&text, "s.json") {
                let rest = e.strip_prefix("s.json:").unwrap();
                let mut parts = rest.splitn(3, ':');
                let line: usize = parts.next().unwrap().parse().unwrap();
                let column: usize = parts.next().unwrap().parse().unwrap();
                proptest::prop_assert!(line >= 1 && line <= text.lines().count().max(1) + 1, "{e}");
                proptest::prop_assert!(column >= 1 || text.is_empty(), "{e}");
            }
        }

        /// A bad value on any line of a pretty file is reported on that line.
        #[test]
        fn a_bad_value_is_reported_on_its_line(before in 0usize..6, value in "[a-z]{1,8}") {
            let fillers = [
                "\"model\": \"mock\"",
                "\"sandbox\": \"read-only\"",
                "\"max_steps\": 4",
                "\"tool_timeout\": 1.5",
                "\"model_timeout\": 30",
                "\"presentation\": \"both\"",
            ];
            let mut text = String::from("{\n");
            for filler in &fillers[..before] {
                text.push_str(&format!("  {filler},\n"));
            }
            text.push_str(&format!("  \"mode\": \"x{value}\"\n}}\n"));
            let e = parse_settings(&text, "s.json").unwrap_err();
            let want = format!("s.json:{}:", before + 2);
            proptest::prop_assert!(e.starts_with(&want), "{e} (want {want})");
            proptest::prop_assert!(e.contains("key `mode`"), "{e}");
        }
    }
}
