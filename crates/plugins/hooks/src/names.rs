//! Claude Code's tool names and input fields, mapped to tack's builtin tools.
//!
//! | Claude Code | tack | input fields (Claude Code ↔ tack) |
//! |---|---|---|
//! | `Bash` | `bash` | `command` ↔ `command`, `timeout` ↔ `timeout_ms` |
//! | `Read` | `read_file` | `file_path` (absolute) ↔ `path`, `offset`, `limit` |
//! | `Write` | `write_file` | `file_path` (absolute) ↔ `path`, `content` |
//! | `Edit` | `edit_file` | `file_path` (absolute) ↔ `path`, `old_string`, `new_string`, `replace_all` |
//! | `Glob` | `glob` | `pattern`, `path` (absolute) ↔ `path` |
//! | `Grep` | `grep` | `pattern`, `path` (absolute) ↔ `path`, `glob`, `-i` ↔ `case_insensitive` |
//! | `LS` | `list_dir` | `path` (absolute) ↔ `path` |
//!
//! Any other tool (an MCP tool's `mcp__server__tool`, a plugin's tool) keeps
//! its name and fields.

use std::path::Path;

use serde_json::{Map, Value};

/// Which names hook commands see in `tool_name`, `tool_input` and matchers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolNames {
    /// Claude Code's names and fields (`Bash`, `file_path`): scripts written
    /// for Claude Code run unchanged. Matchers match either name.
    #[default]
    ClaudeCode,
    /// tack's own names and fields (`bash`, `path`), unmapped.
    Tack,
}

/// One row of the mapping: tack's tool, Claude Code's name, and the renamed
/// fields (tack's field, Claude Code's field).
struct Row {
    tack: &'static str,
    claude: &'static str,
    fields: &'static [(&'static str, &'static str)],
    /// tack's field holding a path that Claude Code gives as absolute.
    path: Option<(&'static str, &'static str)>,
}

const TABLE: &[Row] = &[
    Row {
        tack: "bash",
        claude: "Bash",
        fields: &[("timeout_ms", "timeout")],
        path: None,
    },
    Row {
        tack: "read_file",
        claude: "Read",
        fields: &[],
        path: Some(("path", "file_path")),
    },
    Row {
        tack: "write_file",
        claude: "Write",
        fields: &[],
        path: Some(("path", "file_path")),
    },
    Row {
        tack: "edit_file",
        claude: "Edit",
        fields: &[],
        path: Some(("path", "file_path")),
    },
    Row {
        tack: "glob",
        claude: "Glob",
        fields: &[],
        path: Some(("path", "path")),
    },
    Row {
        tack: "grep",
        claude: "Grep",
        fields: &[("case_insensitive", "-i")],
        path: Some(("path", "path")),
    },
    Row {
        tack: "list_dir",
        claude: "LS",
        fields: &[],
        path: Some(("path", "path")),
    },
];

/// Claude Code's name for tack's tool `tack` (the name itself for a tool
/// with no counterpart, e.g. `mcp__github__create_issue`).
///
/// ```
/// use tack_hooks::{claude_name, tack_name};
/// assert_eq!(claude_name("bash"), "Bash");
/// assert_eq!(claude_name("mcp__github__create_issue"), "mcp__github__create_issue");
/// assert_eq!(tack_name("Edit"), Some("edit_file"));
/// ```
pub fn claude_name(tack: &str) -> &str {
    TABLE
        .iter()
        .find(|r| r.tack == tack)
        .map_or(tack, |r| r.claude)
}

/// tack's builtin tool for Claude Code's name `claude`, if there is one.
pub fn tack_name(claude: &str) -> Option<&'static str> {
    TABLE.iter().find(|r| r.claude == claude).map(|r| r.tack)
}

/// tack's arguments of `tool` in Claude Code's shape: renamed fields, and
/// paths made absolute against `root`.
pub fn to_claude_input(tool: &str, input: &Value, root: &Path) -> Value {
    let (Some(row), Value::Object(map)) = (TABLE.iter().find(|r| r.tack == tool), input) else {
        return input.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        if let Some((tack_field, claude_field)) = row.path
            && key == tack_field
        {
            let absolute = match value.as_str() {
                Some(p) => Value::String(absolute(root, p)),
                None => value.clone(),
            };
            out.insert(claude_field.to_owned(), absolute);
            continue;
        }
        let renamed = row
            .fields
            .iter()
            .find(|(t, _)| t == key)
            .map_or(key.as_str(), |(_, c)| c);
        out.insert(renamed.to_owned(), value.clone());
    }
    Value::Object(out)
}

/// `path` against `root` as Claude Code shows paths: absolute, without
/// `.` components (`.` is the root itself, `./src` is `<root>/src`).
fn absolute(root: &Path, path: &str) -> String {
    let joined = root.join(path);
    let clean: std::path::PathBuf = joined
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    clean.to_string_lossy().into_owned()
}

/// Claude Code's input for `tool` (tack's name) back in tack's shape: the
/// inverse of [`to_claude_input`]. An absolute path under `root` becomes
/// relative again; fields with no counterpart pass through unchanged (so a
/// field tack's tool does not know fails its schema, clearly).
pub fn from_claude_input(tool: &str, input: &Value, root: &Path) -> Value {
    let (Some(row), Value::Object(map)) = (TABLE.iter().find(|r| r.tack == tool), input) else {
        return input.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        if let Some((tack_field, claude_field)) = row.path
            && key == claude_field
        {
            let relative = match value.as_str() {
                Some(p) => match Path::new(p).strip_prefix(root) {
                    Ok(rest) if rest.as_os_str().is_empty() => Value::String(".".to_owned()),
                    Ok(rest) => Value::String(rest.to_string_lossy().into_owned()),
                    Err(_) => value.clone(),
                },
                None => value.clone(),
            };
            out.insert(tack_field.to_owned(), relative);
            continue;
        }
        let renamed = row
            .fields
            .iter()
            .find(|(_, c)| c == key)
            .map_or(key.as_str(), |(t, _)| t);
        out.insert(renamed.to_owned(), value.clone());
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths_become_absolute_and_come_back_relative() {
        let root = Path::new("/work/space");
        let tack = json!({"path": "src/a.env", "content": "x"});
        let claude = to_claude_input("write_file", &tack, root);
        assert_eq!(
            claude,
            json!({"file_path": "/work/space/src/a.env", "content": "x"})
        );
        assert_eq!(from_claude_input("write_file", &claude, root), tack);
        let outside = json!({"file_path": "/etc/passwd"});
        assert_eq!(
            from_claude_input("read_file", &outside, root),
            json!({"path": "/etc/passwd"})
        );
    }

    #[test]
    fn renamed_fields_round_trip_and_unknown_tools_pass_through() {
        let root = Path::new("/w");
        let bash = json!({"command": "ls", "timeout_ms": 5});
        let claude = to_claude_input("bash", &bash, root);
        assert_eq!(claude, json!({"command": "ls", "timeout": 5}));
        assert_eq!(from_claude_input("bash", &claude, root), bash);
        let grep = json!({"pattern": "x", "case_insensitive": true});
        assert_eq!(to_claude_input("grep", &grep, root)["-i"], true);
        for dot in [".", "./", ""] {
            let grep = json!({"pattern": "x", "path": dot});
            assert_eq!(
                to_claude_input("grep", &grep, root)["path"],
                "/w",
                "{dot:?}"
            );
        }
        let ls = json!({"path": "./src/."});
        assert_eq!(to_claude_input("list_dir", &ls, root)["path"], "/w/src");
        let mcp = json!({"file_path": "/w/a"});
        assert_eq!(to_claude_input("mcp__s__t", &mcp, root), mcp);
        assert_eq!(from_claude_input("mcp__s__t", &mcp, root), mcp);
        assert_eq!(claude_name("list_dir"), "LS");
        assert_eq!(tack_name("Nope"), None);
    }
}
