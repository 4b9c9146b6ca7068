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

use regex::Regex;
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
}

impl HookEvent {
    /// Every event tack dispatches, in the order of Claude Code's documentation.
    pub const ALL: [HookEvent; 7] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
        HookEvent::Notification,
    ];

    /// The name in settings files and in `hook_event_name`.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::Notification => "Notification",
        }
    }

    /// Whether the event's matcher is matched against a tool name.
    pub fn matches_tools(self) -> bool {
        matches!(self, HookEvent::PreToolUse | HookEvent::PostToolUse)
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Events Claude Code has and tack does not dispatch: configured, they are
/// ignored with a warning rather than refused.
const NOT_DISPATCHED: &[&str] = &["SubagentStop", "PreCompact", "PermissionRequest"];

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

/// One hook command.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HookCommand {
    /// The command line, run with `sh -c`.
    pub command: String,
    /// At the timeout the hook's process group is killed (default 60 s).
    pub timeout: Duration,
    /// A tack extension (`"failClosed": true`): an error of this hook (an
    /// exit other than 0 and 2, a timeout, a command that cannot start,
    /// output that is not the JSON it promised) blocks like exit 2 instead of
    /// being reported and passed over.
    pub fail_closed: bool,
}

impl HookCommand {
    /// A command with the default timeout that fails open.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            timeout: DEFAULT_TIMEOUT,
            fail_closed: false,
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
}

/// A matcher and its commands, for one event.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct MatcherGroup {
    /// The event.
    pub event: HookEvent,
    /// The matcher as written (`""` and `*` match everything).
    pub matcher: String,
    regex: Option<Regex>,
    /// The commands.
    pub hooks: Vec<HookCommand>,
    /// The file the group came from, if any.
    pub source: Option<PathBuf>,
}

impl MatcherGroup {
    /// A group of `hooks` for `event` whose `matcher` is a regular expression
    /// matched against the whole name (`""` or `*` match everything).
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
        let regex = match matcher.trim() {
            "" | "*" => None,
            m => Some(Regex::new(&format!("^(?:{m})$"))?),
        };
        Ok(Self {
            event,
            matcher,
            regex,
            hooks,
            source: None,
        })
    }

    /// Whether the group applies to any of `names` (for tool events, the
    /// tool's names; `None` for events without a target).
    pub fn matches(&self, names: &[&str]) -> bool {
        match &self.regex {
            None => true,
            Some(_) if names.is_empty() => true,
            Some(re) => names.iter().any(|n| re.is_match(n)),
        }
    }
}

/// Every configured hook, from code or from settings files.
///
/// ```
/// use serde_json::json;
/// use tack_hooks::{HookEvent, HooksConfig};
/// let config = HooksConfig::from_settings(&json!({
///     "hooks": {"PreToolUse": [{"matcher": "Bash|Write", "hooks": [
///         {"type": "command", "command": "./guard.sh", "timeout": 5}
///     ]}]}
/// }), None).unwrap();
/// assert_eq!(config.groups(HookEvent::PreToolUse).count(), 1);
/// assert!(config.groups(HookEvent::PreToolUse).next().unwrap().matches(&["Bash"]));
///
/// let bad = HooksConfig::from_settings(&json!({"hooks": {"PreToolUse": [{"matcher": "(", "hooks": []}]}}), None);
/// assert!(bad.unwrap_err().to_string().contains("hooks.PreToolUse[0].matcher"));
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
        self.warnings.extend(other.warnings);
    }

    /// The groups of `event`, in configuration order.
    pub fn groups(&self, event: HookEvent) -> impl Iterator<Item = &MatcherGroup> {
        self.groups.iter().filter(move |g| g.event == event)
    }

    /// Whether any hook is configured.
    pub fn is_empty(&self) -> bool {
        self.groups.iter().all(|g| g.hooks.is_empty())
    }

    /// What was accepted but ignored (events tack does not dispatch).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Reads a settings file: its top-level `hooks` object (other keys are
    /// ignored; no `hooks` key is no hooks).
    ///
    /// # Errors
    ///
    /// The file cannot be read, is not JSON, or a hook is malformed.
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
    /// names the file in errors.
    ///
    /// # Errors
    ///
    /// A hook is malformed: an unknown event, an invalid matcher, a hook
    /// that is not a `command`, a missing command, a bad timeout.
    pub fn from_settings(settings: &Value, source: Option<&Path>) -> Result<Self, ConfigError> {
        let origin = source.map_or_else(|| "settings".to_owned(), |p| p.display().to_string());
        let invalid = |at: String, message: String| ConfigError::Invalid {
            origin: origin.clone(),
            at,
            message,
        };
        let mut config = Self::new();
        let Some(hooks) = settings.get("hooks") else {
            return Ok(config);
        };
        let Value::Object(events) = hooks else {
            return Err(invalid(
                "hooks".into(),
                "must be an object of events, e.g. {\"PreToolUse\": [...]}".into(),
            ));
        };
        for (name, groups) in events {
            let Some(event) = HookEvent::ALL.into_iter().find(|e| e.as_str() == name) else {
                if NOT_DISPATCHED.contains(&name.as_str()) {
                    config.warnings.push(format!(
                        "{origin}: `hooks.{name}`: tack does not dispatch this event; its hooks are ignored"
                    ));
                    continue;
                }
                let known: Vec<&str> = HookEvent::ALL.iter().map(|e| e.as_str()).collect();
                return Err(invalid(
                    format!("hooks.{name}"),
                    format!("unknown event; the events are {}", known.join(", ")),
                ));
            };
            let Value::Array(groups) = groups else {
                return Err(invalid(
                    format!("hooks.{name}"),
                    "must be a list of {\"matcher\": ..., \"hooks\": [...]}".into(),
                ));
            };
            for (i, group) in groups.iter().enumerate() {
                let at = format!("hooks.{name}[{i}]");
                let matcher = match group.get("matcher") {
                    None | Some(Value::Null) => "",
                    Some(Value::String(m)) => m,
                    Some(_) => {
                        return Err(invalid(format!("{at}.matcher"), "must be a string".into()));
                    }
                };
                let commands = match group.get("hooks") {
                    Some(Value::Array(list)) => list,
                    _ => {
                        return Err(invalid(
                            format!("{at}.hooks"),
                            "must be a list of {\"type\": \"command\", \"command\": ...}".into(),
                        ));
                    }
                };
                let mut hooks = Vec::new();
                for (j, hook) in commands.iter().enumerate() {
                    let at = format!("{at}.hooks[{j}]");
                    hooks.push(parse_command(hook).map_err(|m| invalid(at, m))?);
                }
                let mut group = MatcherGroup::new(event, matcher, hooks).map_err(|e| {
                    invalid(
                        format!("{at}.matcher"),
                        format!("not a valid regular expression: {e}"),
                    )
                })?;
                group.source = source.map(Path::to_owned);
                config.groups.push(group);
            }
        }
        Ok(config)
    }
}

fn parse_command(hook: &Value) -> Result<HookCommand, String> {
    if !hook.is_object() {
        return Err("must be an object {\"type\": \"command\", \"command\": ...}".into());
    }
    match hook.get("type").and_then(Value::as_str) {
        Some("command") => {}
        Some(other) => {
            return Err(format!(
                "hook type `{other}` is not supported; tack runs `command` hooks"
            ));
        }
        None => return Err("`type` is missing; use \"command\"".into()),
    }
    let command = match hook.get("command") {
        Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
        Some(Value::String(_)) => return Err("`command` is empty".into()),
        Some(_) => return Err("`command` must be a string".into()),
        None => return Err("`command` is missing".into()),
    };
    let timeout = match hook.get("timeout") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT,
        Some(t) => match t.as_f64() {
            Some(secs) if secs > 0.0 && secs <= 86_400.0 => Duration::from_secs_f64(secs),
            _ => {
                return Err(format!(
                    "`timeout` must be a number of seconds above 0 (at most a day); got {t}"
                ));
            }
        },
    };
    let fail_closed = match hook.get("failClosed") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("`failClosed` must be true or false".into()),
    };
    Ok(HookCommand {
        command,
        timeout,
        fail_closed,
    })
}
