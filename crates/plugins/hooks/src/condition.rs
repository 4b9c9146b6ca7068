//! A hook's `if`: one Claude Code permission rule (`Bash(git push *)`,
//! `Edit(*.ts)`, `mcp__github`) that the tool call must match for the hook
//! to run.
//!
//! * `Tool` matches every call of that tool; `mcp__server` every tool of
//!   that server; `*` in a tool name is a wildcard.
//! * `Bash(pattern)`: the command, or any one of its subcommands (split at
//!   `&&`, `||`, `;`, `|`, `&`, `$(…)`, backquotes and new lines, outside
//!   quotes, with leading `NAME=value` assignments dropped) matches
//!   `pattern`, where `*` is any text and a trailing ` *` may also match
//!   nothing (`git push *` matches `git push`). The legacy `prefix:*` is
//!   the same as `prefix *`. A subcommand is also matched without quotes
//!   and extra spaces, without the program's directory, without wrappers
//!   (`sudo -E`, `env A=1`, `timeout 5`, …), and a shell's `-c` command
//!   line is matched too: a guard narrowed by `if` runs more often rather
//!   than be slipped past by spelling.
//! * `Read(path)`, `Edit(path)`, `Write(path)` (and `Glob`, `Grep`, `LS`):
//!   the call's path matches the gitignore-style pattern: `//abs` is an
//!   absolute path, `~/p` is under the home directory, `/p` is under the
//!   project directory, `./p` or a pattern with a `/` is under the working
//!   directory, and a bare name (`.env`, `*.ts`) matches at any depth.
//!   `Edit` covers every editing tool (`Edit`, `Write`, `MultiEdit`,
//!   `NotebookEdit`), `Read` every reading one (`Read`, `Glob`, `Grep`,
//!   `LS`), as in Claude Code's permission rules.
//!
//! A specifier tack cannot read for that tool is reported when the file is
//! read, and the condition then holds for every call of the tool: a guard
//! runs more often rather than not at all.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde_json::Value;

/// Tools Claude Code's `Edit(...)` rules cover.
const EDITING: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];
/// Tools Claude Code's `Read(...)` rules cover.
const READING: &[&str] = &["Read", "Glob", "Grep", "LS", "NotebookRead"];

/// The part in parentheses.
#[derive(Clone, Debug)]
enum Spec {
    /// No specifier, or one tack reads as "every call".
    Any,
    /// A command pattern.
    Command(String),
    /// A path pattern, as written (resolved when matched).
    Path(String),
}

/// A parsed `if`.
#[derive(Clone, Debug)]
pub struct Condition {
    text: String,
    tool: String,
    spec: Spec,
}

impl PartialEq for Condition {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Condition {}

/// What a call looks like to a condition.
pub(crate) struct CallView<'a> {
    /// Claude Code's name and tack's.
    pub(crate) names: &'a [&'a str],
    /// The input in Claude Code's shape.
    pub(crate) input: &'a Value,
    /// The working directory (the workspace root).
    pub(crate) cwd: &'a Path,
    /// `CLAUDE_PROJECT_DIR`.
    pub(crate) project: &'a Path,
}

impl Condition {
    /// Reads `text`; the second value is a warning when tack reads the
    /// specifier as "every call".
    ///
    /// # Errors
    ///
    /// Text that is not `Tool` or `Tool(specifier)`.
    pub fn parse(text: &str) -> Result<(Self, Option<String>), String> {
        let trimmed = text.trim();
        let (tool, inner) = match trimmed.find('(') {
            Some(open) if trimmed.ends_with(')') => (
                trimmed[..open].trim(),
                Some(&trimmed[open + 1..trimmed.len() - 1]),
            ),
            Some(_) => {
                return Err(format!(
                    "`{trimmed}` is not a permission rule: use `Tool` or `Tool(specifier)`, e.g. `Bash(git push *)`"
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
                "`{trimmed}` does not start with a tool name, e.g. `Bash(git push *)` or `Edit(*.ts)`"
            ));
        }
        let mut warning = None;
        let spec = match inner.map(str::trim) {
            None | Some("") | Some("*") => Spec::Any,
            Some(inner) => match tool {
                "Bash" => {
                    let pattern = match inner.strip_suffix(":*") {
                        Some(prefix) => format!("{prefix} *"),
                        None => inner.to_owned(),
                    };
                    Spec::Command(pattern)
                }
                t if EDITING.contains(&t) || READING.contains(&t) => Spec::Path(inner.to_owned()),
                _ => {
                    warning = Some(format!(
                        "tack cannot read the specifier `{inner}` of `{tool}`; the hook runs for every `{tool}` call"
                    ));
                    Spec::Any
                }
            },
        };
        Ok((
            Self {
                text: trimmed.to_owned(),
                tool: tool.to_owned(),
                spec,
            },
            warning,
        ))
    }

    /// The rule as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the call matches.
    pub(crate) fn matches(&self, call: &CallView<'_>) -> bool {
        if !call.names.iter().any(|n| self.tool_matches(n)) {
            return false;
        }
        match &self.spec {
            Spec::Any => true,
            Spec::Command(pattern) => {
                let Some(command) = call.input.get("command").and_then(Value::as_str) else {
                    return false;
                };
                subcommands(command)
                    .iter()
                    .flat_map(|sub| views(sub, 0))
                    .any(|sub| command_matches(pattern, &sub))
            }
            Spec::Path(pattern) => {
                let path = call
                    .input
                    .get("file_path")
                    .or_else(|| call.input.get("notebook_path"))
                    .or_else(|| call.input.get("path"))
                    .and_then(Value::as_str);
                let Some(path) = path else {
                    // A search with no path searches the working directory.
                    return path_matches(pattern, call.cwd, call.cwd, call.project);
                };
                let path = if Path::new(path).is_absolute() {
                    PathBuf::from(path)
                } else {
                    call.cwd.join(path)
                };
                path_matches(pattern, &path, call.cwd, call.project)
            }
        }
    }

    fn tool_matches(&self, name: &str) -> bool {
        let rule = self.tool.as_str();
        if rule == name {
            return true;
        }
        if rule.contains('*') {
            return wildcard(rule, name);
        }
        if rule.starts_with("mcp__") && rule.matches("__").count() == 1 {
            return name.starts_with(&format!("{rule}__"));
        }
        (rule == "Edit" && EDITING.contains(&name)) || (rule == "Read" && READING.contains(&name))
    }
}

/// `*` is any text (spaces included); everything else is literal.
fn wildcard(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let mut rest = text;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(after) = rest.strip_prefix(part) else {
                return false;
            };
            rest = after;
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    true
}

fn command_matches(pattern: &str, command: &str) -> bool {
    let command = command.trim();
    let pattern = pattern.trim();
    if wildcard(pattern, command) {
        return true;
    }
    // `git push *` also matches `git push`.
    pattern
        .strip_suffix(" *")
        .is_some_and(|bare| !bare.contains('*') && bare.trim() == command)
}

/// The subcommands of `command`: split at `&&`, `||`, `;`, `|`, `&` and
/// new lines outside quotes, each without leading `NAME=value` words.
pub(crate) fn subcommands(command: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                current.push(c);
                if c == q {
                    quote = None;
                } else if c == '\\'
                    && q == '"'
                    && let Some(next) = chars.next()
                {
                    current.push(next);
                }
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    current.push(c);
                }
                '\\' => {
                    current.push(c);
                    if let Some(next) = chars.next() {
                        current.push(next);
                    }
                }
                ';' | '\n' | '|' | '&' | '(' | ')' | '`' => {
                    if matches!(chars.peek(), Some('&' | '|')) {
                        chars.next();
                    }
                    parts.push(std::mem::take(&mut current));
                }
                _ => current.push(c),
            },
        }
    }
    parts.push(current);
    parts
        .into_iter()
        .map(|p| strip_assignments(p.trim()).to_owned())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Programs that run the command after their options: `sudo git push` is
/// also seen as `git push`.
const WRAPPERS: &[&str] = &[
    "sudo", "doas", "command", "builtin", "exec", "env", "nohup", "time", "nice", "timeout",
    "stdbuf", "setsid", "xargs",
];
/// Shells whose `-c` argument is a command line of its own.
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh"];

/// The forms a subcommand is matched in: as written with quotes and
/// backslashes dropped and spaces collapsed, with the program's directory
/// dropped, without wrappers such as `sudo` or `env VAR=1`, and the
/// command line a shell's `-c` runs. A condition matches any of them, so a
/// guard narrowed by `if` is not slipped past by spelling.
fn views(sub: &str, depth: usize) -> Vec<String> {
    let plain: String = sub
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect();
    let mut words: Vec<&str> = plain.split_whitespace().collect();
    let mut out = vec![sub.to_owned(), words.join(" ")];
    while let Some(first) = words.first() {
        let base = first.rsplit('/').next().unwrap_or(first);
        if base != *first {
            words[0] = base;
            out.push(words.join(" "));
            continue;
        }
        if SHELLS.contains(&base) && words.get(1) == Some(&"-c") && depth < 4 {
            let inner = words[2..].join(" ");
            for part in subcommands(&inner) {
                out.extend(views(&part, depth + 1));
            }
            break;
        }
        if !WRAPPERS.contains(&base) {
            break;
        }
        words.remove(0);
        while words.first().is_some_and(|w| {
            w.starts_with('-')
                || w.chars().all(|c| c.is_ascii_digit() || c == '.')
                || is_assignment(w)
        }) {
            words.remove(0);
        }
        out.push(words.join(" "));
    }
    out
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn strip_assignments(mut text: &str) -> &str {
    loop {
        let word_end = text.find(char::is_whitespace).unwrap_or(text.len());
        let word = &text[..word_end];
        if !is_assignment(word) || word_end == text.len() {
            return text;
        }
        text = text[word_end..].trim_start();
    }
}

/// Whether `path` (absolute) matches the gitignore-style `pattern`.
fn path_matches(pattern: &str, path: &Path, cwd: &Path, project: &Path) -> bool {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    // `src/` is the directory `src` (and, below, what it holds).
    let pattern = match pattern.trim_end_matches('/') {
        "" => pattern,
        trimmed => trimmed,
    };
    let absolute = if let Some(rest) = pattern.strip_prefix("//") {
        format!("/{rest}")
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        match home {
            Some(home) => format!("{}/{rest}", home.display()),
            None => return false,
        }
    } else if let Some(rest) = pattern.strip_prefix('/') {
        format!("{}/{rest}", project.display())
    } else if let Some(rest) = pattern.strip_prefix("./") {
        format!("{}/{rest}", cwd.display())
    } else if pattern.contains('/') {
        format!("{}/{pattern}", cwd.display())
    } else {
        format!("**/{pattern}")
    };
    let Some(glob) = compile(&absolute) else {
        return false;
    };
    // A directory pattern (`src/**` or `src/`) covers what is below it.
    let below = compile(&format!("{}/**", absolute.trim_end_matches('/')));
    glob.is_match(path) || below.is_some_and(|g| g.is_match(path))
}

fn compile(pattern: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn holds(rule: &str, name: &str, input: Value) -> bool {
        let (c, _) = Condition::parse(rule).unwrap();
        let names = [name];
        c.matches(&CallView {
            names: &names,
            input: &input,
            cwd: Path::new("/w"),
            project: Path::new("/w"),
        })
    }

    #[test]
    fn bash_patterns_and_subcommands() {
        let cmd = |c: &str| json!({ "command": c });
        assert!(holds(
            "Bash(git push *)",
            "Bash",
            cmd("git push origin main")
        ));
        assert!(holds("Bash(git push *)", "Bash", cmd("git push")));
        assert!(!holds("Bash(git push *)", "Bash", cmd("git status")));
        assert!(!holds("Bash(git push *)", "Bash", cmd("git pushy")));
        assert!(holds("Bash(git push *)", "Bash", cmd("ls && git push -f")));
        assert!(holds("Bash(git push *)", "Bash", cmd("FOO=1 git push x")));
        assert!(!holds(
            "Bash(git push *)",
            "Bash",
            cmd("echo 'a; git push x'")
        ));
        assert!(holds("Bash(rm:*)", "Bash", cmd("rm -rf /")));
        assert!(holds("Bash(rm:*)", "Bash", cmd("rm")));
        assert!(!holds("Bash(rm:*)", "Bash", cmd("rmdir x")));
        assert!(holds("Bash(ls*)", "Bash", cmd("lsof")));
        assert!(holds("Bash(* --force)", "Bash", cmd("git push --force")));
        assert!(holds("Bash", "Bash", cmd("anything")));
        // Spelling does not slip past a guard.
        for sneaky in [
            "git  push origin",
            "git 'push' origin",
            "/usr/bin/git push",
            "sudo -E git push",
            "env A=1 git push",
            "timeout 5 git push",
            "bash -c 'git push'",
            "echo $(git push)",
            "x=`git push`",
        ] {
            assert!(holds("Bash(git push *)", "Bash", cmd(sneaky)), "{sneaky}");
        }
        assert!(!holds(
            "Bash(git *)",
            "Read",
            json!({"file_path": "/w/git"})
        ));
    }

    #[test]
    fn path_patterns_and_tool_families() {
        let file = |p: &str| json!({ "file_path": p });
        assert!(holds("Edit(*.ts)", "Edit", file("/w/src/a.ts")));
        assert!(
            holds("Edit(*.ts)", "Write", file("/w/a.ts")),
            "Edit covers Write"
        );
        assert!(!holds("Edit(*.ts)", "Edit", file("/w/a.tsx")));
        assert!(holds("Read(./.env)", "Read", file("/w/.env")));
        assert!(!holds("Read(./.env)", "Read", file("/w/sub/.env")));
        assert!(
            holds("Read(.env)", "Read", file("/w/sub/.env")),
            "a bare name at any depth"
        );
        assert!(holds("Edit(/src/**)", "Edit", file("/w/src/x/y.rs")));
        assert!(!holds("Edit(/src/**)", "Edit", file("/elsewhere/src/y.rs")));
        assert!(holds("Read(//etc/**)", "Read", file("/etc/passwd")));
        assert!(holds("Read(src/)", "Grep", json!({"path": "/w/src"})));
        assert!(
            !holds("Read(*.ts)", "Edit", file("/w/a.ts")),
            "Read does not cover Edit"
        );
    }

    #[test]
    fn mcp_names_and_bad_rules() {
        assert!(holds("mcp__github", "mcp__github__create_issue", json!({})));
        assert!(!holds("mcp__github", "mcp__gitlab__x", json!({})));
        assert!(holds(
            "mcp__github__create_issue",
            "mcp__github__create_issue",
            json!({})
        ));
        assert!(holds("mcp__*__write", "mcp__fs__write", json!({})));
        assert!(Condition::parse("Bash(git").is_err());
        assert!(Condition::parse("(x)").is_err());
        let (c, warning) = Condition::parse("WebFetch(domain:x.com)").unwrap();
        assert!(warning.is_some());
        assert_eq!(c.as_str(), "WebFetch(domain:x.com)");
    }

    #[test]
    fn subcommands_split_outside_quotes() {
        assert_eq!(
            subcommands("a && b || c; d | e\nf"),
            ["a", "b", "c", "d", "e", "f"]
        );
        assert_eq!(subcommands("echo $(date)"), ["echo $", "date"]);
        assert_eq!(subcommands("echo \"x && y\""), ["echo \"x && y\""]);
        assert_eq!(subcommands("A=1 B=2 make"), ["make"]);
    }
}
