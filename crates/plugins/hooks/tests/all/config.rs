//! Reading settings files.

use serde_json::json;
use tack_hooks::{HookEvent, HooksConfig};

#[test]
fn files_are_read_and_merged_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user.json");
    let project = dir.path().join("project.json");
    std::fs::write(
        &user,
        json!({"permissions": {"allow": []}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        &project,
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "b", "timeout": 5}]}]}}).to_string(),
    )
    .unwrap();
    let mut config = HooksConfig::from_file(&user).unwrap();
    config.merge(HooksConfig::from_file(&project).unwrap());
    let commands: Vec<&str> = config
        .groups(HookEvent::Stop)
        .flat_map(|g| g.hooks.iter().map(|h| h.command.as_str()))
        .collect();
    assert_eq!(commands, ["a", "b"]);
    let group = config.groups(HookEvent::Stop).nth(1).unwrap();
    assert_eq!(group.source.as_deref(), Some(project.as_path()));
    assert_eq!(group.hooks[0].timeout, std::time::Duration::from_secs(5));
    std::fs::write(&user, "{not json").unwrap();
    let err = HooksConfig::from_file(&user).unwrap_err().to_string();
    assert!(
        err.contains("not valid JSON") && err.contains("user.json"),
        "{err}"
    );
}

#[test]
fn matchers_follow_claude_codes_rules() {
    let config = HooksConfig::from_settings(
        &json!({"hooks": {"PreToolUse": [
            {"matcher": "Edit|Write", "hooks": []},
            {"matcher": "*", "hooks": []},
            {"matcher": "", "hooks": []},
            {"matcher": "mcp__github__.*", "hooks": []}
        ]}}),
        None,
    )
    .unwrap();
    let groups: Vec<_> = config.groups(HookEvent::PreToolUse).collect();
    assert!(groups[0].matches(&["Write"]));
    assert!(!groups[0].matches(&["WriteAll"]), "a list of exact names");
    assert!(!groups[0].matches(&["Bash"]));
    assert!(groups[1].matches(&["anything"]));
    assert!(groups[2].matches(&["anything"]));
    assert!(groups[3].matches(&["mcp__github__create_issue"]));
    assert!(!groups[3].matches(&["mcp__gitlab__x"]));
}
