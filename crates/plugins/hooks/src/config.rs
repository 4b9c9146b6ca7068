//! The configuration: Claude Code's `settings.json` `hooks` object.
//!
//! ```json
//! {
//!   "hooks": {
//!     "PreToolUse": [
//!       { "matcher": "Bash", "hooks": [{ "type": "command", "command": "./check.sh", "timeout": 30 }] }
//!     ]
//!   }
//! }
//! ```

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::matcher::Matcher;
use serde_json::Value;

/// The timeout of a hook that sets none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The events a hook can be configured for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HookEvent {
    /// Before a tool call runs (`tools/pre-execute`): may deny, ask, or
    /// rewrite the input.
    PreToolUse,
    /// After a tool call ran (`tools/post-execute`): may give the model
    /// feedback or add context.
    PostToolUse,
    /// After a tool call failed (`tools/post-execute` on an error outcome):
    /// may add context.
    PostToolUseFailure,
    /// Before the user's prompt reaches the model: may block it or add context.
    UserPromptSubmit,
    /// When the agent is about to answer and end its turn: may keep it going.
    Stop,
    /// When a session starts or resumes: may add context.
    SessionStart,
    /// When a session ends: cleanup.
    SessionEnd,
    /// When the agent needs the user's attention (e.g. an approval).
    Notification,
    /// When a call needs approval: may allow or deny it in the user's place.
    PermissionRequest,
    /// When a call that needed approval was denied with no one deciding
    /// (no one could be asked): may tell the model it may retry.
    PermissionDenied,
    /// When every call of a model's batch is answered, before the model is
    /// asked again: may add context or end the turn.
    PostToolBatch,
    /// When a turn ends because the model could not answer: for
    /// notification and logging only.
    StopFailure,
}

impl HookEvent {
    /// Every event tack dispatches, in the order of Claude Code's documentation.
    pub const ALL: [HookEvent; 12] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
        HookEvent::Notification,
        HookEvent::PermissionRequest,
        HookEvent::PermissionDenied,
        HookEvent::PostToolBatch,
        HookEvent::StopFailure,
    ];

    /// The name in settings files and in `hook_event_name`.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::Notification => "Notification",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::PermissionDenied => "PermissionDenied",
            HookEvent::PostToolBatch => "PostToolBatch",
            HookEvent::StopFailure => "StopFailure",
        }
    }

    /// Whether the event's matcher is matched against a tool name.
    pub fn matches_tools(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse
                | HookEvent::PostToolUse
                | HookEvent::PostToolUseFailure
                | HookEvent::PermissionRequest
                | HookEvent::PermissionDenied
        )
    }

    /// Whether exit 2 blocks nothing on the event in Claude Code (the
    /// denial or the failure already happened): it is reported and ignored.
    pub fn ignores_exit_2(self) -> bool {
        matches!(self, HookEvent::PermissionDenied | HookEvent::StopFailure)
    }

    /// Whether the event has no matcher in Claude Code (one configured is
    /// ignored, with a warning).
    pub fn has_no_matcher(self) -> bool {
        matches!(
            self,
            HookEvent::UserPromptSubmit | HookEvent::Stop | HookEvent::PostToolBatch
        )
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Events Claude Code documents that tack has no moment for: configured,
/// they are skipped with a warning.
pub const NOT_DISPATCHED: &[&str] = &[
    "UserPromptExpansion",
    "SubagentStart",
    "SubagentStop",
    "TaskCreated",
    "TaskCompleted",
    "TeammateIdle",
    "PreCompact",
    "PostCompact",
    "Setup",
    "InstructionsLoaded",
    "ConfigChange",
    "CwdChanged",
    "FileChanged",
    "WorktreeCreate",
    "WorktreeRemove",
    "Elicitation",
    "ElicitationResult",
    "DirectoryAdded",
    "PreModelSwitch",
    "PostModelSwitch",
    "MessageDisplay",
];

/// The longest timeout kept (a longer one is cut to this): a year.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

/// A configuration that could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read the hooks settings `{path}`: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("the hooks settings `{path}` are not valid JSON: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// A value is wrong.
    #[error("{origin}: `{at}`: {message}")]
    Invalid {
        /// The file, or `settings` when given in code.
        origin: String,
        /// The key path, e.g. `hooks.PreToolUse[0].matcher`.
        at: String,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// One hook handler.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HookCommand {
    /// The command line, run with `sh -c` (or, with [`args`](Self::args),
    /// the program run directly).
    pub command: String,
    /// Claude Code's exec form: the program `command` is run directly with
    /// these arguments, no shell (`$CLAUDE_PROJECT_DIR` and
    /// `${CLAUDE_PROJECT_DIR}` are still replaced).
    pub args: Option<Vec<String>>,
    /// At the timeout the hook's process group is killed (default 60 s).
    pub timeout: Duration,
    /// A tack extension (`"failClosed": true`): an error of this hook (an
    /// exit other than 0 and 2, a timeout, a command that cannot start,
    /// output that is not the JSON it promised) blocks like exit 2 instead of
    /// being reported and passed over.
    pub fail_closed: bool,
    /// `if`: the hook runs only for tool calls matching this permission rule.
    pub condition: Option<crate::condition::Condition>,
    /// `async`: runs in the background; nothing it says changes the call.
    /// What it answers for the model (`additionalContext`,
    /// `systemMessage`) reaches the model at its next batch of results or
    /// prompt.
    pub run_async: bool,
    /// `asyncRewake`: runs in the background like `async`, and an exit 2
    /// (its stderr) is delivered to the model as well.
    pub rewake: bool,
    /// `once`: runs at most once per session.
    pub once: bool,
    /// `shell`: the shell that runs `command` (default `sh`).
    pub shell: Option<String>,
    /// A handler tack cannot run (`type: prompt`, `agent`, `http`, …): it
    /// never runs; for `PreToolUse` the calls it matches ask for approval
    /// instead. Holds why.
    pub unsupported: Option<String>,
    /// Where it was configured (`FILE: hooks.PreToolUse[0].hooks[1]`).
    pub origin: Option<String>,
}

impl HookCommand {
    /// A command with the default timeout that fails open.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            args: None,
            timeout: DEFAULT_TIMEOUT,
            fail_closed: false,
            condition: None,
            run_async: false,
            rewake: false,
            once: false,
            shell: None,
            unsupported: None,
            origin: None,
        }
    }

    /// Sets the timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Makes errors of this hook block.
    pub fn fail_closed(mut self, fail_closed: bool) -> Self {
        self.fail_closed = fail_closed;
        self
    }

    /// The command as one shell line: `command`, or with
    /// [`args`](Self::args) the program and its arguments, each quoted so
    /// that only `$CLAUDE_PROJECT_DIR` and `$TACK_PROJECT_DIR` (which the
    /// exec form fills in) expand (what a host shows, and reads the files a
    /// hook runs from).
    ///
    /// ```
    /// let mut hook = tack_hooks::HookCommand::new("python3");
    /// hook.args = Some(vec!["${CLAUDE_PROJECT_DIR}/check it.py".into(), "$HOME".into()]);
    /// assert_eq!(hook.command_line(), r#""python3" "${CLAUDE_PROJECT_DIR}/check it.py" "\$HOME""#);
    /// ```
    pub fn command_line(&self) -> String {
        let Some(args) = &self.args else {
            return self.command.clone();
        };
        std::iter::once(&self.command)
            .chain(args)
            .map(|word| {
                let mut quoted = String::new();
                for c in word.chars() {
                    if matches!(c, '\\' | '"' | '`' | '$') {
                        quoted.push('\\');
                    }
                    quoted.push(c);
                }
                for name in ["CLAUDE_PROJECT_DIR", "TACK_PROJECT_DIR"] {
                    quoted = quoted
                        .replace(&format!("\\${{{name}}}"), &format!("${{{name}}}"))
                        .replace(&format!("\\${name}"), &format!("${name}"));
                }
                format!("\"{quoted}\"")
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// What identifies the hook for "an identical command runs once".
    pub(crate) fn key(&self) -> String {
        match &self.args {
            Some(args) => format!("{}\u{0}{}", self.command, args.join("\u{0}")),
            None => self.command.clone(),
        }
    }
}

/// A matcher and its commands, for one event.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct MatcherGroup {
    /// The event.
    pub event: HookEvent,
    /// The matcher as written (`""` and `*` match everything).
    pub matcher: String,
    compiled: Matcher,
    /// The commands.
    pub hooks: Vec<HookCommand>,
    /// The file the group came from, if any.
    pub source: Option<PathBuf>,
}

impl MatcherGroup {
    /// A group of `hooks` for `event` whose `matcher` is read by Claude
    /// Code's rules: `""` or `*` match everything; letters, digits, `_`,
    /// `-`, spaces, `,` and `|` alone are exact names (`Edit|Write`,
    /// `Edit, Write`); anything else is a regular expression found anywhere
    /// in the name.
    ///
    /// # Errors
    ///
    /// An invalid regular expression.
    pub fn new(
        event: HookEvent,
        matcher: impl Into<String>,
        hooks: Vec<HookCommand>,
    ) -> Result<Self, regex::Error> {
        let matcher = matcher.into();
        let (compiled, error) = Matcher::parse(&matcher);
        if let Some(e) = error {
            return Err(regex::Error::Syntax(e));
        }
        Ok(Self {
            event,
            matcher,
            compiled,
            hooks,
            source: None,
        })
    }

    /// Whether the group applies to any of `names` (for tool events, the
    /// tool's names; `None` for events without a target).
    pub fn matches(&self, names: &[&str]) -> bool {
        names.is_empty() || self.compiled.matches(names)
    }
}

/// Every configured hook, from code or from settings files.
///
/// ```
/// use serde_json::json;
/// use tack_hooks::{HookEvent, HooksConfig};
/// let config = HooksConfig::from_settings(&json!({
///     "hooks": {"PreToolUse": [{"matcher": "Bash|Write", "hooks": [
///         {"type": "command", "command": "./guard.sh", "timeout": 5},
///         {"type": "prompt", "prompt": "Is this safe?"}
///     ]}]}
/// }), None).unwrap();
/// let group = config.groups(HookEvent::PreToolUse).next().unwrap();
/// assert!(group.matches(&["Bash"]) && !group.matches(&["BashOutput"]));
/// // A prompt hook cannot run in tack: kept as one that asks, and said so.
/// assert!(group.hooks[1].unsupported.is_some());
/// assert!(config.warnings()[0].contains("hooks.PreToolUse[0].hooks[1]"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct HooksConfig {
    groups: Vec<MatcherGroup>,
    warnings: Vec<String>,
}

impl HooksConfig {
    /// No hooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a group.
    pub fn add(&mut self, group: MatcherGroup) {
        self.groups.push(group);
    }

    /// Appends every group (and warning) of `other`, after this one's.
    pub fn merge(&mut self, other: HooksConfig) {
        self.groups.extend(other.groups);
        for warning in other.warnings {
            if !self.warnings.contains(&warning) {
                self.warnings.push(warning);
            }
        }
    }

    /// The groups of `event`, in configuration order.
    pub fn groups(&self, event: HookEvent) -> impl Iterator<Item = &MatcherGroup> {
        self.groups.iter().filter(move |g| g.event == event)
    }

    /// Whether any hook is configured.
    pub fn is_empty(&self) -> bool {
        self.groups.iter().all(|g| g.hooks.is_empty())
    }

    /// What was read but is skipped or works differently, once each, naming
    /// the file and key.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Reads a settings file: its top-level `hooks` object (other keys are
    /// left to the caller; no `hooks` key is no hooks).
    ///
    /// # Errors
    ///
    /// The file cannot be read or is not JSON. Anything inside `hooks` that
    /// tack cannot use is a [warning](Self::warnings), never an error.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        let value: Value = serde_json::from_str(&text).map_err(|source| ConfigError::Json {
            path: path.to_owned(),
            source,
        })?;
        Self::from_settings(&value, Some(path))
    }

    /// Reads the top-level `hooks` object of a settings value; `source`
    /// names the file in warnings. Claude Code's files are read as they
    /// are: an event tack does not dispatch, a handler type it cannot run,
    /// a key it does not know, a malformed entry — each is skipped with a
    /// warning naming its key, and the rest is used.
    ///
    /// # Errors
    ///
    /// None today (kept for errors a future format may need).
    pub fn from_settings(settings: &Value, source: Option<&Path>) -> Result<Self, ConfigError> {
        let origin = source.map_or_else(|| "settings".to_owned(), |p| p.display().to_string());
        let mut reader = Reader {
            origin: &origin,
            config: Self::new(),
            seen_keys: Vec::new(),
        };
        let Some(hooks) = settings.get("hooks") else {
            return Ok(reader.config);
        };
        let Value::Object(events) = hooks else {
            reader.warn(
                "hooks",
                "must be an object of events, e.g. {\"PreToolUse\": [...]}; skipped",
            );
            return Ok(reader.config);
        };
        for (name, groups) in events {
            let Some(event) = HookEvent::ALL.into_iter().find(|e| e.as_str() == name) else {
                if NOT_DISPATCHED.contains(&name.as_str()) {
                    reader.warn(
                        &format!("hooks.{name}"),
                        "tack has no such moment, so these hooks never run",
                    );
                } else {
                    let known: Vec<&str> = HookEvent::ALL.iter().map(|e| e.as_str()).collect();
                    reader.warn(
                        &format!("hooks.{name}"),
                        &format!(
                            "not an event tack knows; skipped (tack runs {})",
                            known.join(", ")
                        ),
                    );
                }
                continue;
            };
            let Value::Array(groups) = groups else {
                reader.warn(
                    &format!("hooks.{name}"),
                    "must be a list of {\"matcher\": ..., \"hooks\": [...]}; skipped",
                );
                continue;
            };
            for (i, group) in groups.iter().enumerate() {
                reader.group(event, &format!("hooks.{name}[{i}]"), group, source);
            }
        }
        Ok(reader.config)
    }
}

/// Reading one file's `hooks`, collecting warnings.
struct Reader<'a> {
    origin: &'a str,
    config: HooksConfig,
    /// Keys already warned about as unknown or unsupported (once each).
    seen_keys: Vec<String>,
}

/// Handler keys tack reads.
const HANDLER_KEYS: &[&str] = &[
    "type",
    "command",
    "args",
    "timeout",
    "failClosed",
    "if",
    "async",
    "asyncRewake",
    "once",
    "shell",
];

/// Handler keys Claude Code has that change nothing in tack (shown in
/// Claude Code's interface only).
const COSMETIC_KEYS: &[&str] = &["statusMessage"];

impl Reader<'_> {
    fn warn(&mut self, at: &str, message: &str) {
        let warning = format!("{}: `{at}`: {message}", self.origin);
        if !self.config.warnings.contains(&warning) {
            self.config.warnings.push(warning);
        }
    }

    /// Warns about `key` at `at` once per file.
    fn warn_key_once(&mut self, key: &str, at: &str, message: &str) {
        if self.seen_keys.iter().any(|k| k == key) {
            return;
        }
        self.seen_keys.push(key.to_owned());
        self.warn(at, message);
    }

    fn group(&mut self, event: HookEvent, at: &str, group: &Value, source: Option<&Path>) {
        let Value::Object(fields) = group else {
            self.warn(
                at,
                "must be an object {\"matcher\": ..., \"hooks\": [...]}; skipped",
            );
            return;
        };
        for key in fields.keys() {
            if key != "matcher" && key != "hooks" {
                self.warn_key_once(
                    &format!("group.{key}"),
                    &format!("{at}.{key}"),
                    "not a key of a matcher group; ignored",
                );
            }
        }
        let matcher = match fields.get("matcher") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(m)) => m.clone(),
            Some(other) => {
                self.warn(
                    &format!("{at}.matcher"),
                    &format!("must be a string, not {other}; the group is skipped"),
                );
                return;
            }
        };
        let (compiled, error) = Matcher::parse(&matcher);
        if let Some(e) = error {
            self.warn(
                &format!("{at}.matcher"),
                &format!(
                    "not a valid regular expression, so it matches nothing (as in Claude Code): {}",
                    e.lines().last().unwrap_or_default().trim()
                ),
            );
        }
        if event.has_no_matcher() && !matches!(compiled, Matcher::All) {
            self.warn(
                &format!("{at}.matcher"),
                &format!("{event} has no matcher in Claude Code; it is ignored and the hooks run for every {event}"),
            );
        }
        let list = match fields.get("hooks") {
            Some(Value::Array(list)) => list,
            _ => {
                self.warn(
                    &format!("{at}.hooks"),
                    "must be a list of {\"type\": \"command\", \"command\": ...}; the group is skipped",
                );
                return;
            }
        };
        let mut hooks = Vec::new();
        for (j, hook) in list.iter().enumerate() {
            let at = format!("{at}.hooks[{j}]");
            if let Some(hook) = self.handler(event, &at, hook) {
                hooks.push(hook);
            }
        }
        self.config.groups.push(MatcherGroup {
            event,
            matcher,
            compiled,
            hooks,
            source: source.map(Path::to_owned),
        });
    }

    fn handler(&mut self, event: HookEvent, at: &str, hook: &Value) -> Option<HookCommand> {
        let Value::Object(fields) = hook else {
            self.warn(
                at,
                "must be an object {\"type\": \"command\", \"command\": ...}; skipped",
            );
            return None;
        };
        let place = format!("{}: {at}", self.origin);
        let kind = fields.get("type").and_then(Value::as_str);
        if kind != Some("command") {
            let what = kind.map_or_else(
                || "a handler without `type`".to_owned(),
                |k| format!("a `{k}` hook"),
            );
            if event == HookEvent::PreToolUse {
                self.warn(
                    at,
                    &format!(
                        "tack cannot run {what} (only `command` hooks); the calls its matcher selects ask for your approval instead of running unchecked"
                    ),
                );
                let mut placeholder = HookCommand::new(format!("({what})"));
                placeholder.unsupported = Some(format!(
                    "{what} at {place} cannot run in tack, so the call needs your approval"
                ));
                placeholder.origin = Some(place);
                placeholder.condition = self.condition(event, at, fields);
                return Some(placeholder);
            }
            self.warn(
                at,
                &format!("tack cannot run {what} (only `command` hooks); skipped"),
            );
            return None;
        }
        for key in fields.keys() {
            if COSMETIC_KEYS.contains(&key.as_str()) {
                self.warn_key_once(
                    key,
                    &format!("{at}.{key}"),
                    "tack does not show it (it only labels the hook in Claude Code's interface); ignored",
                );
            } else if !HANDLER_KEYS.contains(&key.as_str()) {
                self.warn_key_once(
                    key,
                    &format!("{at}.{key}"),
                    "not a key of a command hook tack knows; ignored",
                );
            }
        }
        let command = match fields.get("command") {
            Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
            Some(Value::String(_)) => {
                self.warn(&format!("{at}.command"), "is empty; the hook is skipped");
                return None;
            }
            Some(_) => {
                self.warn(
                    &format!("{at}.command"),
                    "must be a string; the hook is skipped",
                );
                return None;
            }
            None => {
                self.warn(&format!("{at}.command"), "is missing; the hook is skipped");
                return None;
            }
        };
        let mut out = HookCommand::new(command);
        out.origin = Some(place);
        match fields.get("args") {
            None | Some(Value::Null) => {}
            Some(Value::Array(list)) if list.iter().all(Value::is_string) => {
                out.args = Some(
                    list.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect(),
                );
            }
            Some(_) => {
                self.warn(
                    &format!("{at}.args"),
                    "must be a list of strings; the hook is skipped",
                );
                return None;
            }
        }
        match fields.get("timeout") {
            None | Some(Value::Null) => {}
            Some(t) => match t.as_f64() {
                Some(secs) if secs > 0.0 && secs.is_finite() => {
                    out.timeout = Duration::try_from_secs_f64(secs)
                        .unwrap_or(MAX_TIMEOUT)
                        .min(MAX_TIMEOUT);
                }
                _ => self.warn(
                    &format!("{at}.timeout"),
                    &format!(
                        "must be a number of seconds above 0, not {t}; the default {} s is used",
                        DEFAULT_TIMEOUT.as_secs()
                    ),
                ),
            },
        }
        out.fail_closed = self.flag(at, fields, "failClosed");
        out.run_async = self.flag(at, fields, "async");
        out.rewake = self.flag(at, fields, "asyncRewake");
        if out.rewake {
            out.run_async = true;
            self.warn_key_once(
                "asyncRewake",
                &format!("{at}.asyncRewake"),
                "runs in the background; when it exits 2, its stderr reaches the model at its next batch of results or prompt in this session (tack does not wake an idle session to answer it)",
            );
        }
        out.once = self.flag(at, fields, "once");
        if out.run_async && out.fail_closed {
            self.warn(
                &format!("{at}.failClosed"),
                "an async hook cannot block; failClosed does nothing here",
            );
        }
        if out.run_async && event == HookEvent::PreToolUse {
            self.warn(
                &format!("{at}.async"),
                "an async PreToolUse hook runs in the background and cannot deny, ask or rewrite the call",
            );
        }
        match fields.get("shell").and_then(Value::as_str) {
            None => {}
            Some(shell @ ("sh" | "bash" | "zsh" | "dash")) => out.shell = Some(shell.to_owned()),
            Some(other) => {
                self.warn(
                    &format!("{at}.shell"),
                    &format!("tack runs hooks with sh, bash, zsh or dash, not `{other}`; the hook is skipped"),
                );
                return None;
            }
        }
        out.condition = self.condition(event, at, fields);
        Some(out)
    }

    fn flag(&mut self, at: &str, fields: &serde_json::Map<String, Value>, key: &str) -> bool {
        match fields.get(key) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                self.warn(
                    &format!("{at}.{key}"),
                    &format!("must be true or false, not {other}; read as false"),
                );
                false
            }
        }
    }

    fn condition(
        &mut self,
        event: HookEvent,
        at: &str,
        fields: &serde_json::Map<String, Value>,
    ) -> Option<crate::condition::Condition> {
        let value = fields.get("if")?;
        let Some(text) = value.as_str() else {
            self.warn(
                &format!("{at}.if"),
                "must be a permission rule string such as \"Bash(git push *)\"; ignored, so the hook runs for every call its matcher selects",
            );
            return None;
        };
        if !event.matches_tools() {
            self.warn(
                &format!("{at}.if"),
                &format!("`if` applies to tool events only; ignored for {event}"),
            );
            return None;
        }
        match crate::condition::Condition::parse(text) {
            Ok((condition, warning)) => {
                if let Some(warning) = warning {
                    self.warn(&format!("{at}.if"), &warning);
                }
                Some(condition)
            }
            Err(e) => {
                self.warn(
                    &format!("{at}.if"),
                    &format!("{e}; ignored, so the hook runs for every call its matcher selects"),
                );
                None
            }
        }
    }
}
