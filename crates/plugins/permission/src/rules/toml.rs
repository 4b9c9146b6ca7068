//! Loading a mode and rules from TOML.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use tack_core::hook::AgentId;
use tack_core::tool::Tier;
use toml::Spanned;

use super::{Rule, RuleSet};
use crate::{Action, Mode};

/// A permission file that cannot be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PermissionFileError {
    /// The file could not be read.
    #[error("cannot read permission file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML, or a value is wrong.
    #[error("{source_name}:{line}:{column}: {}{message}", key.as_ref().map(|k| format!("key `{k}`: ")).unwrap_or_default())]
    Invalid {
        /// The file name (or `<inline>`).
        source_name: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The key the error is about, when known.
        key: Option<String>,
        /// What is wrong.
        message: String,
    },
}

/// The contents of a permission file: an optional mode and ordered rules.
///
/// ```toml
/// mode = "accept-edits"             # read-only | ask | accept-edits | allow-all
/// allow = ['read_file(path: "src/**")', 'bash(command: "git status*")']
/// ask   = ["write_file"]
/// deny  = ['bash(command: "rm *")', 'read_file(path: "**/.env")']
///
/// [[rule]]                          # the long form
/// action = "deny"
/// tool = "*"                        # glob, default "*"
/// tier = "network"                  # read_only | writes | executes | network
/// agent = "planner"                 # only this agent's calls
/// paths = { path = "secrets/**" }   # argument = path glob
/// commands = { command = "curl*" }  # argument = command pattern
/// ```
///
/// The compact lists are read in the order `allow`, `ask`, `deny`, then the
/// `[[rule]]` tables; order only decides which of several equally strict
/// matching rules is named in a reason.
///
/// ```
/// use tack_permission::{Mode, PermissionFile};
/// let file = PermissionFile::parse("mode = \"read-only\"\ndeny = ['bash(command: \"rm *\")']", "perm.toml").unwrap();
/// assert_eq!(file.mode, Some(Mode::ReadOnly));
/// assert_eq!(file.rules.rules()[0].origin(), Some("perm.toml line 2"));
///
/// let err = PermissionFile::parse("[[rule]]\naction = \"alow\"\n", "perm.toml").unwrap_err();
/// assert!(err.to_string().starts_with("perm.toml:2:10: key `action`: unknown variant `alow`"), "{err}");
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct PermissionFile {
    /// The default mode, if the file sets one.
    pub mode: Option<Mode>,
    /// The rules in file order.
    pub rules: RuleSet,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    mode: Option<Spanned<String>>,
    #[serde(default)]
    allow: Vec<Spanned<String>>,
    #[serde(default)]
    ask: Vec<Spanned<String>>,
    #[serde(default)]
    deny: Vec<Spanned<String>>,
    #[serde(default)]
    rule: Vec<RawRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    action: Spanned<Action>,
    tool: Option<Spanned<String>>,
    tier: Option<Spanned<Tier>>,
    agent: Option<String>,
    #[serde(default)]
    paths: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    commands: BTreeMap<String, Spanned<String>>,
}

impl PermissionFile {
    /// Reads and parses `path`.
    ///
    /// # Errors
    ///
    /// [`PermissionFileError::Io`] when it cannot be read,
    /// [`PermissionFileError::Invalid`] naming the line and key otherwise.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, PermissionFileError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| PermissionFileError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses TOML text; `source_name` names it in errors and rule origins.
    ///
    /// # Errors
    ///
    /// [`PermissionFileError::Invalid`] naming the line and key.
    pub fn parse(text: &str, source_name: &str) -> Result<Self, PermissionFileError> {
        let invalid = |span: Option<Range<usize>>, key: Option<String>, message: String| {
            let offset = span.map_or(0, |s| s.start);
            let (line, column) = line_column(text, offset);
            let key = key.or_else(|| key_on_line(text, offset));
            PermissionFileError::Invalid {
                source_name: source_name.to_owned(),
                line,
                column,
                key,
                message,
            }
        };
        let raw: RawFile = toml::from_str(text)
            .map_err(|e| invalid(e.span(), None, e.message().trim().to_owned()))?;
        let origin =
            |span: Range<usize>| format!("{source_name} line {}", line_column(text, span.start).0);
        let mode =
            match raw.mode {
                None => None,
                Some(m) => Some(m.get_ref().parse::<Mode>().map_err(|e| {
                    invalid(Some(m.span()), Some("mode".to_owned()), e.to_string())
                })?),
            };
        let mut rules = RuleSet::new();
        for (action, list) in [
            (Action::Allow, &raw.allow),
            (Action::Ask, &raw.ask),
            (Action::Deny, &raw.deny),
        ] {
            for (i, item) in list.iter().enumerate() {
                let rule = Rule::parse(action, item.get_ref()).map_err(|e| {
                    invalid(
                        Some(item.span()),
                        Some(format!("{action}[{i}]")),
                        e.to_string(),
                    )
                })?;
                rules.push(with_origin(rule, origin(item.span())));
            }
        }
        for (i, r) in raw.rule.iter().enumerate() {
            let key = |field: &str| Some(format!("rule[{i}].{field}"));
            let tool = r.tool.as_ref().map_or("*", |t| t.get_ref().as_str());
            let mut builder =
                Rule::builder(*r.action.get_ref(), tool).origin(origin(r.action.span()));
            if let Some(tier) = &r.tier {
                builder = builder.tier(*tier.get_ref());
            }
            if let Some(agent) = &r.agent {
                builder = builder.agent(AgentId::new(agent.as_str()));
            }
            for (arg, glob) in &r.paths {
                builder = builder.path(arg.as_str(), glob.get_ref().as_str());
            }
            for (arg, pattern) in &r.commands {
                builder = builder.command(arg.as_str(), pattern.get_ref().as_str());
            }
            let rule = builder.build().map_err(|e| {
                // Point at the glob or command pattern that failed.
                let bad = match &e {
                    super::RuleError::Glob { glob, .. } => Some(glob.as_str()),
                    super::RuleError::Command { pattern, .. } => {
                        if let Some((a, p)) =
                            r.commands.iter().find(|(_, p)| p.get_ref() == pattern)
                        {
                            return invalid(
                                Some(p.span()),
                                key(&format!("commands.{a}")),
                                e.to_string(),
                            );
                        }
                        None
                    }
                    _ => None,
                };
                let span_key = bad.and_then(|bad| {
                    r.tool
                        .as_ref()
                        .filter(|t| t.get_ref() == bad)
                        .map(|t| (t.span(), "tool".to_owned()))
                        .or_else(|| {
                            r.paths
                                .iter()
                                .find(|(_, g)| g.get_ref() == bad)
                                .map(|(a, g)| (g.span(), format!("paths.{a}")))
                        })
                });
                match span_key {
                    Some((span, field)) => invalid(Some(span), key(&field), e.to_string()),
                    None => invalid(Some(r.action.span()), key("action"), e.to_string()),
                }
            })?;
            rules.push(rule);
        }
        Ok(PermissionFile { mode, rules })
    }
}

fn with_origin(rule: Rule, origin: String) -> Rule {
    Rule {
        origin: Some(origin),
        ..rule
    }
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

/// The key assigned on the line holding `offset` (`key = …`), for TOML errors
/// that report only a position.
fn key_on_line(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let start = text.get(..offset)?.rfind('\n').map_or(0, |i| i + 1);
    let end = text
        .get(offset..)?
        .find('\n')
        .map_or(text.len(), |i| offset + i);
    let line = text.get(start..end)?;
    let (key, _) = line.split_once('=')?;
    let key = key.trim().trim_matches('"');
    (!key.is_empty() && !key.starts_with('#')).then(|| key.to_owned())
}
