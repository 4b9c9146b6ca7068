//! A group's `matcher`, read by Claude Code's rules.
//!
//! | matcher | means |
//! |---|---|
//! | `*`, `""` or none | every name |
//! | only letters, digits, `_`, `-`, spaces, `,` and `\|` | an exact name, or a list of exact names split at `\|` and `,` (`Edit\|Write`, `Edit, Write`) |
//! | anything else | a regular expression found **anywhere** in the name (unanchored: `mcp__.*__write` matches `mcp__fs__write_file`; write `^Bash$` to anchor) |
//!
//! Matching is case-sensitive. An invalid regular expression matches
//! nothing (as in Claude Code), with a warning when the file is read.

use regex::Regex;

/// How a matcher is read.
#[derive(Clone, Debug)]
pub(crate) enum Matcher {
    /// `*`, `""` or none.
    All,
    /// Exact names.
    Exact(Vec<String>),
    /// An unanchored regular expression.
    Regex(Regex),
    /// An invalid regular expression: matches nothing.
    Never,
}

impl Matcher {
    /// Reads `text`; `Err` carries the regex error (the matcher then
    /// matches nothing).
    pub(crate) fn parse(text: &str) -> (Self, Option<String>) {
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed == "*" {
            return (Matcher::All, None);
        }
        let simple = trimmed
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'));
        if simple {
            let names = trimmed
                .split(['|', ','])
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect();
            return (Matcher::Exact(names), None);
        }
        match Regex::new(trimmed) {
            Ok(re) => (Matcher::Regex(re), None),
            Err(e) => (Matcher::Never, Some(e.to_string())),
        }
    }

    /// Whether any of `names` matches.
    pub(crate) fn matches(&self, names: &[&str]) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Exact(list) => names.iter().any(|n| list.iter().any(|l| l == n)),
            Matcher::Regex(re) => names.iter().any(|n| re.is_match(n)),
            Matcher::Never => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(text: &str, name: &str) -> bool {
        Matcher::parse(text).0.matches(&[name])
    }

    #[test]
    fn claude_codes_three_forms() {
        assert!(m("", "Bash") && m("*", "Bash") && m("  ", "Bash"));
        assert!(m("Bash", "Bash"));
        assert!(!m("Bash", "BashOutput"), "a plain name is exact");
        assert!(!m("bash", "Bash"), "case-sensitive");
        assert!(m("Edit|Write", "Write") && !m("Edit|Write", "Read"));
        assert!(m("Edit, Write", "Write") && m("Edit,Write", "Edit"));
        assert!(!m("Edit, Write", "Edit, Write x"));
        assert!(
            !m("mcp__github", "mcp__github__create_issue"),
            "a server prefix is exact"
        );
        assert!(m("mcp__github__.*", "mcp__github__create_issue"));
        assert!(m("mcp__.*__write", "mcp__fs__write_file"), "unanchored");
        assert!(m("^Bash", "BashOutput") && !m("^Bash$", "BashOutput"));
        assert!(m("Notebook.*", "NotebookEdit"));
        assert!(m("my-server", "my-server"));
    }

    #[test]
    fn an_invalid_regex_matches_nothing_and_says_why() {
        let (matcher, error) = Matcher::parse("(Bash");
        assert!(error.is_some());
        assert!(!matcher.matches(&["Bash", "(Bash"]));
    }
}
