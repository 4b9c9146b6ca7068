//! `channel_approver`: each asked call reaches the UI with its summary and
//! reason, the answers decide (once runs, deny refuses with the UI's reason),
//! and "always for this session" means the next call is not asked at all.

use crate::support;

#[test]
fn the_ui_answers_over_the_channel() {
    let run = support::run_example("channel_approver", &[], None);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let reason = "permission mode `ask` requires approval for executes tools like `sh`";
    assert_eq!(
        lines,
        [
            format!("  [ui] sh: cargo test: {reason} -> Once").as_str(),
            r#"cargo test: ran "cargo test""#,
            format!(
                r#"  [ui] sh: git push --force: {reason} -> Deny {{ reason: Some("not on main") }}"#
            )
            .as_str(),
            "git push --force: DENIED: the user declined tool `sh`: not on main",
            format!("  [ui] sh: cargo build: {reason} -> AlwaysForSession").as_str(),
            r#"cargo build: ran "cargo build""#,
            r#"cargo run: ran "cargo run""#,
        ],
        "{}",
        run.stdout
    );
}
