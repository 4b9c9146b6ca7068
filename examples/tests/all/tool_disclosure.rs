//! The progressive-disclosure example: a masked tool is unknown to the agent
//! until `reveal_tools` widens its mask; another agent is not masked.

use crate::support;

#[test]
fn tools_appear_group_by_group_for_the_masked_agent_only() {
    let run = support::run_example("tool_disclosure", &[], None);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let all = r#"["delete_file", "list_files", "read_file", "reveal_tools", "write_file"]"#;
    assert_eq!(
        lines,
        [
            r#"helper sees ["reveal_tools"]"#,
            "write_file {} -> UNKNOWN_TOOL: unknown tool `write_file`: call one of the tools you were given, by its exact name",
            r#"helper sees ["reveal_tools"]"#,
            r#"reveal_tools {"group":"read"} -> read tools revealed"#,
            r#"helper sees ["list_files", "read_file", "reveal_tools"]"#,
            r#"reveal_tools {"group":"edit"} -> edit tools revealed"#,
            &format!("helper sees {all}"),
            "write_file {} -> write_file ran",
            &format!("helper sees {all}"),
            r#"reveal_tools {"group":"edit"} -> EXECUTION_FAILED: nothing hidden in that group"#,
            &format!("helper sees {all}"),
            &format!("reviewer sees {all}"),
        ]
    );
}
