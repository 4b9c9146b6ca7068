//! The name mapping round-trips: what a hook is shown and hands back
//! unchanged is what the tool gets.

use std::path::Path;

use proptest::prelude::*;
use serde_json::json;
use tack_hooks::names::{from_claude_input, to_claude_input};

fn relative_path() -> impl Strategy<Value = String> {
    proptest::collection::vec("[a-zA-Z0-9_.-]{1,8}", 1..5)
        .prop_map(|parts| parts.join("/"))
        .prop_filter("no dot segments", |p| {
            p.split('/').all(|s| s != "." && s != "..")
        })
}

proptest! {
    #[test]
    fn paths_and_fields_round_trip(path in relative_path(), content in ".*", insensitive in any::<bool>()) {
        let root = Path::new("/work/space");
        for (tool, input) in [
            ("write_file", json!({"path": path, "content": content})),
            ("read_file", json!({"path": path, "offset": 3})),
            ("edit_file", json!({"path": path, "old_string": content, "new_string": "x", "replace_all": true})),
            ("grep", json!({"pattern": content, "path": path, "case_insensitive": insensitive})),
            ("list_dir", json!({"path": path})),
            ("bash", json!({"command": content, "timeout_ms": 5})),
            ("mcp__s__t", json!({"path": path})),
        ] {
            let shown = to_claude_input(tool, &input, root);
            if let Some(p) = shown.get("file_path").or_else(|| shown.get("path")).and_then(|v| v.as_str())
                && tool != "mcp__s__t"
            {
                prop_assert!(Path::new(p).is_absolute(), "{tool}: {p}");
            }
            prop_assert_eq!(from_claude_input(tool, &shown, root), input);
        }
    }

    #[test]
    fn absolute_paths_outside_the_workspace_stay_absolute(path in relative_path()) {
        let root = Path::new("/work/space");
        let outside = format!("/elsewhere/{path}");
        let back = from_claude_input("write_file", &json!({"file_path": outside, "content": ""}), root);
        prop_assert_eq!(back, json!({"path": outside, "content": ""}));
    }
}
