//! Claude Code's permission rules (`Bash(npm run test:*)`, `Read(./.env)`,
//! `mcp__github`) read as tack rules with the same meaning.
//!
//! | Claude Code | tack |
//! |---|---|
//! | `Bash`, `Bash(*)` | `bash` |
//! | `Bash(npm run test:*)`, `Bash(npm run test *)` | `bash(command: "npm run test*")`: that command with any arguments |
//! | `Bash(npm run build)` | `bash(command: "npm run build")`: exactly that |
//! | `Read(path)` | `read_file`, `grep`, `glob` and `list_dir` on that path |
//! | `Edit(path)` | `edit_file` and `write_file` on that path (Claude Code's `Edit` rules cover every editing tool) |
//! | `Write(path)` | `write_file` on that path |
//! | `mcp__server`, `mcp__server__*` | `mcp__server__*` |
//! | `mcp__server__tool` | `mcp__server__tool` |
//!
//! Paths follow Claude Code's gitignore-style rules: `//abs` is absolute,
//! `~/p` is under the home directory, `/p` and `./p` are under the project
//! (the workspace), a pattern with a `/` inside is relative to the project,
//! and a bare name (`.env`, `*.pem`) matches at any depth, the file or a
//! directory of that name and what it holds.
//!
//! Command rules go through tack's command-rule reader, so a Claude Code
//! deny such as `Bash(rm:*)` gets the same treatment as tack's
//! `deny bash(command: "rm *")`: it sees through `sudo`, `sh -c`, compound
//! commands and substitutions, and a command it cannot read asks.
//!
//! What tack cannot say the same way is never made looser: an allow rule
//! it cannot read is skipped (you are asked instead), and a deny or ask
//! rule it cannot read exactly covers more (the whole command name, the
//! whole tool), each with a note saying so.

use std::path::Path;

use super::{Action, Rule};

/// Claude Code tools whose `Read(...)` rules tack applies to its reading tools.
const READ_TOOLS: &[(&str, &str)] = &[
    ("read_file", "path"),
    ("grep", "path"),
    ("glob", "path"),
    ("list_dir", "path"),
];
/// Claude Code's `Edit(...)` rules: every editing tool.
const EDIT_TOOLS: &[(&str, &str)] = &[("edit_file", "path"), ("write_file", "path")];
/// `Write(...)`.
const WRITE_TOOLS: &[(&str, &str)] = &[("write_file", "path")];

/// One Claude Code rule as tack rules.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ClaudeRule {
    /// The tack rules (none when the rule is skipped).
    pub rules: Vec<Rule>,
    /// What differs from Claude Code, or why the rule is skipped.
    pub note: Option<String>,
}

/// Reads one Claude Code permission rule `text` with `action`; `home` is
/// the home directory for `~/` paths, `origin` (e.g. `FILE key
/// permissions.deny[0]`) is where it was written, named in the reasons of
/// the decisions it makes.
///
/// ```
/// use tack_permission::{Action, claude_rule};
/// let rm = claude_rule(Action::Deny, "Bash(rm:*)", None, None).unwrap();
/// assert_eq!(rm.rules[0].to_string(), r#"deny bash(command: "rm*")"#);
/// let env = claude_rule(Action::Deny, "Read(./.env)", None, None).unwrap();
/// assert_eq!(env.rules[0].to_string(), r#"deny read_file(path: "{.env,.env/**}")"#);
/// let web = claude_rule(Action::Allow, "WebFetch(domain:example.com)", None, None).unwrap();
/// assert!(web.rules.is_empty() && web.note.is_some());
/// ```
///
/// # Errors
///
/// Text that is not `Tool` or `Tool(specifier)`.
pub fn claude_rule(
    action: Action,
    text: &str,
    home: Option<&Path>,
    origin: Option<&str>,
) -> Result<ClaudeRule, String> {
    let trimmed = text.trim();
    let (tool, spec) = match trimmed.find('(') {
        Some(open) if trimmed.ends_with(')') => (
            trimmed[..open].trim(),
            Some(trimmed[open + 1..trimmed.len() - 1].trim()),
        ),
        Some(_) => {
            return Err(format!(
                "`{trimmed}` is not a Claude Code permission rule: write `Tool` or `Tool(specifier)`, e.g. `Bash(npm run test:*)`"
            ));
        }
        None => (trimmed, None),
    };
    if tool.is_empty()
        || !tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*'))
    {
        return Err(format!(
            "`{trimmed}` does not start with a tool name, e.g. `Bash(npm run test:*)` or `Read(./.env)`"
        ));
    }
    let spec = spec.filter(|s| !s.is_empty() && *s != "*");
    let build = |tool: &str, arg: Option<(&str, &str, bool)>| -> Result<Rule, String> {
        let mut builder = Rule::builder(action, tool);
        if let Some(origin) = origin {
            builder = builder.origin(format!("{origin}: `{trimmed}`"));
        }
        if let Some((name, pattern, command)) = arg {
            builder = if command {
                builder.command(name, pattern)
            } else {
                builder.path(name, pattern)
            };
        }
        builder.build().map_err(|e| e.to_string())
    };
    if tool.starts_with("mcp__") {
        let name = if tool.matches("__").count() == 1 {
            format!("{tool}__*")
        } else {
            tool.to_owned()
        };
        let rule = build(&name, None)?;
        let note = spec.map(|s| {
            format!("tack cannot read the specifier `{s}` of an MCP tool; the rule covers every call of `{name}`")
        });
        return match (&note, action) {
            (Some(note), Action::Allow) => Ok(ClaudeRule {
                rules: Vec::new(),
                note: Some(format!("{note}, which would allow more, so it is skipped")),
            }),
            _ => Ok(ClaudeRule {
                rules: vec![rule],
                note,
            }),
        };
    }
    let family: &[(&str, &str)] = match tool {
        "Bash" => {
            let Some(spec) = spec else {
                return Ok(ClaudeRule {
                    rules: vec![build("bash", None)?],
                    note: None,
                });
            };
            return command_rule(action, spec, &build);
        }
        "Read" => READ_TOOLS,
        "Edit" => EDIT_TOOLS,
        "Write" => WRITE_TOOLS,
        other => {
            return Ok(ClaudeRule {
                rules: Vec::new(),
                note: Some(format!(
                    "tack has no tool `{other}` (its tools are bash, read_file, write_file, edit_file, glob, grep, list_dir, run_code and MCP tools); the rule is skipped"
                )),
            });
        }
    };
    let Some(spec) = spec else {
        let rules = family
            .iter()
            .map(|(t, _)| build(t, None))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(ClaudeRule { rules, note: None });
    };
    let glob = claude_path_glob(spec, home);
    let mut rules = Vec::new();
    for (tack_tool, arg) in family {
        match build(tack_tool, Some((arg, &glob, false))) {
            Ok(rule) => rules.push(rule),
            Err(e) if action == Action::Allow => {
                return Ok(ClaudeRule {
                    rules: Vec::new(),
                    note: Some(format!("{e}; the allow rule is skipped")),
                });
            }
            Err(e) => {
                rules.push(build(tack_tool, None)?);
                return Ok(ClaudeRule {
                    rules,
                    note: Some(format!("{e}; the rule covers every `{tool}` call instead")),
                });
            }
        }
    }
    Ok(ClaudeRule { rules, note: None })
}

/// Builds a rule for a tool, with an optional argument pattern (name,
/// pattern, whether it is a command pattern).
type Build<'a> = &'a dyn Fn(&str, Option<(&str, &str, bool)>) -> Result<Rule, String>;

/// `Bash(specifier)` through tack's command-rule reader.
fn command_rule(action: Action, spec: &str, build: Build<'_>) -> Result<ClaudeRule, String> {
    // `npm run test:*` and `npm run test *`: that command, any arguments.
    let (body, prefix) = if let Some(body) = spec.strip_suffix(":*") {
        (body.trim_end(), true)
    } else if let Some(body) = spec.strip_suffix(" *") {
        (body.trim_end(), true)
    } else if let Some(body) = spec.strip_suffix('*') {
        (body, true)
    } else {
        (spec, false)
    };
    let mut note = None;
    let glued_star = spec.ends_with('*') && !spec.ends_with(":*") && !spec.ends_with(" *");
    let (body, prefix) = match body.find('*') {
        None => (body.to_owned(), prefix),
        Some(at) => {
            // A wildcard inside: tack's command patterns have one only at
            // the end.
            if action == Action::Allow {
                return Ok(ClaudeRule {
                    rules: Vec::new(),
                    note: Some(format!(
                        "tack's command patterns have a wildcard only at the end, so `Bash({spec})` cannot allow exactly the same commands; the allow rule is skipped"
                    )),
                });
            }
            let before = body[..at].trim_end().to_owned();
            note = Some(format!(
                "tack's command patterns have a wildcard only at the end; `Bash({spec})` covers every command starting with `{before}`"
            ));
            (before, true)
        }
    };
    // `ls*` in Claude Code also matches `lsof`; tack compares whole words.
    if glued_star && note.is_none() && body.chars().last().is_some_and(char::is_alphanumeric) {
        let word = body.split_whitespace().last().unwrap_or_default();
        note = Some(format!(
            "tack compares whole words: `Bash({spec})` covers `{body}` with any arguments, but not a longer word such as `{word}x`"
        ));
    }
    if body.trim().is_empty() {
        return Ok(ClaudeRule {
            rules: vec![build("bash", None)?],
            note,
        });
    }
    let pattern = if prefix {
        format!("{body}*")
    } else {
        body.clone()
    };
    match build("bash", Some(("command", &pattern, true))) {
        Ok(rule) => Ok(ClaudeRule {
            rules: vec![rule],
            note,
        }),
        Err(e) if action == Action::Allow => Ok(ClaudeRule {
            rules: Vec::new(),
            note: Some(format!("{e}; the allow rule is skipped")),
        }),
        Err(e) => Ok(ClaudeRule {
            rules: vec![build("bash", None)?],
            note: Some(format!("{e}; the rule covers every command instead")),
        }),
    }
}

/// A Claude Code (gitignore-style) path pattern as a tack path glob
/// (relative to the workspace, or absolute).
pub fn claude_path_glob(spec: &str, home: Option<&Path>) -> String {
    let directory = spec.len() > 1 && spec.ends_with('/');
    let spec = if directory {
        spec.trim_end_matches('/')
    } else {
        spec
    };
    let base = if let Some(rest) = spec.strip_prefix("//") {
        format!("/{rest}")
    } else if let Some(rest) = spec.strip_prefix("~/") {
        match home {
            Some(home) => format!("{}/{rest}", home.display()),
            None => format!("~/{rest}"),
        }
    } else if let Some(rest) = spec.strip_prefix('/') {
        rest.to_owned()
    } else if let Some(rest) = spec.strip_prefix("./") {
        rest.to_owned()
    } else if spec.contains('/') {
        spec.to_owned()
    } else {
        format!("**/{spec}")
    };
    if directory || base.ends_with("/**") {
        format!("{}/**", base.trim_end_matches("/**"))
    } else if base.ends_with('*') && !base.ends_with("**") {
        base
    } else {
        // The file, or the directory of that name and what it holds.
        format!("{{{base},{base}/**}}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(action: Action, text: &str) -> (Vec<String>, Option<String>) {
        let r = claude_rule(action, text, Some(Path::new("/home/u")), None).unwrap();
        (r.rules.iter().map(ToString::to_string).collect(), r.note)
    }

    #[test]
    fn bash_rules_read_like_tack_command_rules() {
        assert_eq!(
            one(Action::Deny, "Bash(rm:*)").0,
            [r#"deny bash(command: "rm*")"#]
        );
        assert_eq!(
            one(Action::Deny, "Bash(rm *)").0,
            [r#"deny bash(command: "rm*")"#]
        );
        assert_eq!(
            one(Action::Allow, "Bash(npm run test:*)").0,
            [r#"allow bash(command: "npm run test*")"#]
        );
        assert_eq!(
            one(Action::Allow, "Bash(npm run build)").0,
            [r#"allow bash(command: "npm run build")"#]
        );
        assert_eq!(one(Action::Ask, "Bash").0, ["ask bash"]);
        assert_eq!(one(Action::Deny, "Bash(*)").0, ["deny bash"]);
        let (rules, note) = one(Action::Allow, "Bash(git * main)");
        assert!(rules.is_empty() && note.unwrap().contains("skipped"));
        let (rules, note) = one(Action::Deny, "Bash(git * --force)");
        assert_eq!(rules, [r#"deny bash(command: "git*")"#]);
        assert!(note.unwrap().contains("starting with `git`"));
        let (_, note) = one(Action::Deny, "Bash(ls*)");
        assert!(note.unwrap().contains("whole words"));
    }

    #[test]
    fn path_rules_cover_the_tool_families() {
        assert_eq!(
            one(Action::Deny, "Read(./.env)").0,
            [
                r#"deny read_file(path: ".env")"#,
                r#"deny grep(path: ".env")"#,
                r#"deny glob(path: ".env")"#,
                r#"deny list_dir(path: ".env")"#
            ]
            .map(|r| r.replace("\".env\"", "\"{.env,.env/**}\""))
        );
        let (rules, _) = one(Action::Deny, "Edit(*.lock)");
        assert_eq!(
            rules,
            [
                r#"deny edit_file(path: "{**/*.lock,**/*.lock/**}")"#,
                r#"deny write_file(path: "{**/*.lock,**/*.lock/**}")"#
            ]
        );
        assert_eq!(
            one(Action::Allow, "Write(src/**)").0,
            [r#"allow write_file(path: "src/**")"#]
        );
        assert_eq!(
            one(Action::Deny, "Read(~/.ssh/**)").0[0],
            r#"deny read_file(path: "/home/u/.ssh/**")"#
        );
        assert_eq!(
            one(Action::Deny, "Read(//etc/passwd)").0[0],
            r#"deny read_file(path: "{/etc/passwd,/etc/passwd/**}")"#
        );
        assert_eq!(
            one(Action::Deny, "Read(secrets/)").0[0],
            r#"deny read_file(path: "**/secrets/**")"#
        );
        assert_eq!(one(Action::Allow, "Read").0.len(), 4);
    }

    #[test]
    fn other_tools_are_skipped_or_mapped() {
        assert_eq!(one(Action::Deny, "mcp__github").0, ["deny mcp__github__*"]);
        assert_eq!(
            one(Action::Allow, "mcp__github__create_issue").0,
            ["allow mcp__github__create_issue"]
        );
        let (rules, note) = one(Action::Deny, "WebFetch(domain:example.com)");
        assert!(rules.is_empty() && note.unwrap().contains("no tool `WebFetch`"));
        assert!(claude_rule(Action::Deny, "Bash(rm", None, None).is_err());
        assert!(claude_rule(Action::Deny, "(rm)", None, None).is_err());
    }
}
