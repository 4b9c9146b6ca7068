//! Loading rules from TOML, and clear errors for malformed files.

use tack_core::tool::Tier;
use tack_permission::{
    Action, Mode, Permission, PermissionConfig, PermissionFile, PermissionFileError,
};

use crate::harness::*;

const GOOD: &str = r#"
# project permissions
mode = "accept-edits"
allow = ['bash(command: "git status*")', 'bash(command: "cargo test*")']
ask = ["fetch"]
deny = ['read_file(path: "**/.env")']

[[rule]]
action = "deny"
tool = "bash"
commands = { command = "rm *" }

[[rule]]
action = "ask"
tier = "network"
agent = "planner"

[[rule]]
action = "allow"
tool = "write_file"
paths = { path = "docs/**" }
"#;

#[test]
fn a_good_file_loads_mode_and_rules_in_order() {
    let file = PermissionFile::parse(GOOD, "perm.toml").unwrap();
    assert_eq!(file.mode, Some(Mode::AcceptEdits));
    let shown: Vec<String> = file.rules.rules().iter().map(|r| r.describe()).collect();
    assert_eq!(
        shown,
        [
            r#"rule `allow bash(command: "git status*")` (perm.toml line 4)"#,
            r#"rule `allow bash(command: "cargo test*")` (perm.toml line 4)"#,
            "rule `ask fetch` (perm.toml line 5)",
            r#"rule `deny read_file(path: "**/.env")` (perm.toml line 6)"#,
            r#"rule `deny bash(command: "rm *")` (perm.toml line 9)"#,
            "rule `ask * [tier network] [agent planner]` (perm.toml line 14)",
            r#"rule `allow write_file(path: "docs/**")` (perm.toml line 19)"#,
        ]
    );
    let gate = Permission::new(PermissionConfig::default().file(file));
    assert_eq!(gate.evaluate(&bash("git status")).action, Action::Allow);
    assert_eq!(gate.evaluate(&bash("rm -rf x")).action, Action::Deny);
    assert_eq!(gate.evaluate(&bash("make")).action, Action::Ask);
    assert_eq!(
        gate.evaluate(&write("src/x")).action,
        Action::Allow,
        "accept-edits"
    );
    assert_eq!(gate.evaluate(&read("a/.env")).action, Action::Deny);
    let net = exec_for("planner", "curl", Tier::Network, serde_json::json!({}));
    assert_eq!(gate.evaluate(&net).action, Action::Ask);
}

fn invalid(text: &str) -> (usize, usize, Option<String>, String, String) {
    match PermissionFile::parse(text, "perm.toml").unwrap_err() {
        e @ PermissionFileError::Invalid { .. } => {
            let shown = e.to_string();
            let PermissionFileError::Invalid {
                line,
                column,
                key,
                message,
                ..
            } = e
            else {
                unreachable!()
            };
            (line, column, key, message, shown)
        }
        other => panic!("{other}"),
    }
}

#[test]
fn malformed_files_name_line_and_key() {
    // (text, line, key, message fragment)
    let cases: &[(&str, usize, &str, &str)] = &[
        (
            "mode = \"ask\"\n[[rule]]\naction = \"alow\"\n",
            3,
            "action",
            "unknown variant `alow`",
        ),
        (
            "mode = \"sometimes\"\n",
            1,
            "mode",
            "unknown permission mode `sometimes`",
        ),
        (
            "\n\n[[rule]]\naction = \"deny\"\ntier = \"root\"\n",
            5,
            "tier",
            "unknown variant `root`",
        ),
        (
            "[[rule]]\naction = \"deny\"\nactoin = \"x\"\n",
            3,
            "actoin",
            "unknown field `actoin`",
        ),
        (
            "allow = [\"ok\", 'bash(command: ls)']\n",
            1,
            "allow[1]",
            "double-quoted",
        ),
        (
            "\ndeny = ['read_file(path: \"src/[\")']\n",
            2,
            "deny[0]",
            "invalid glob `src/[`",
        ),
        (
            "[[rule]]\naction = \"deny\"\npaths = { path = \"a/[\" }\n",
            3,
            "rule[0].paths.path",
            "invalid glob",
        ),
        (
            "\ndeny = ['bash(command: \"git status && ls\")']\n",
            2,
            "deny[0]",
            "one rule per command",
        ),
        (
            "[[rule]]\naction = \"deny\"\ncommands = { command = \"rm $HOME*\" }\n",
            3,
            "rule[0].commands.command",
            "patterns are literal words",
        ),
        ("[[rule]]\naction = 5\n", 2, "action", "wanted string"),
        ("mode = \"ask\"\nallow = [\n", 2, "allow", "unclosed array"),
    ];
    for (text, line, key, fragment) in cases {
        let (l, _c, k, message, shown) = invalid(text);
        assert_eq!(l, *line, "{text:?}: {shown}");
        if !key.is_empty() {
            assert_eq!(k.as_deref(), Some(*key), "{text:?}: {shown}");
            assert!(shown.contains(&format!("key `{key}`")), "{shown}");
        }
        assert!(message.contains(fragment), "{text:?}: {message}");
        assert!(shown.starts_with(&format!("perm.toml:{line}:")), "{shown}");
    }
}

#[test]
fn a_missing_action_is_reported() {
    let (line, _, _, message, _) = invalid("\n[[rule]]\ntool = \"bash\"\n");
    assert!(message.contains("missing field `action`"), "{message}");
    assert!(line >= 2, "{line}");
}

#[test]
fn loading_a_missing_file_names_it() {
    let err = PermissionFile::load("/nonexistent/perm.toml").unwrap_err();
    assert!(matches!(err, PermissionFileError::Io { .. }));
    assert!(
        err.to_string()
            .starts_with("cannot read permission file /nonexistent/perm.toml"),
        "{err}"
    );
}

#[test]
fn loading_from_disk_works() {
    let path = std::env::temp_dir().join(format!("tack-perm-{}.toml", std::process::id()));
    std::fs::write(&path, GOOD).unwrap();
    let file = PermissionFile::load(&path);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(file.unwrap().rules.len(), 7);
}
