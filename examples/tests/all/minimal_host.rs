//! `minimal_host`: plugins composed with `PluginSet`, one model turn run by
//! the scheduler (an ok call, a call with bad arguments, an unknown tool),
//! each outcome once, in the model's order, and everything unloaded.

use crate::support;

#[test]
fn runs_a_turn_and_unloads() {
    let run = support::run_example("minimal_host", &[], None);
    let out = &run.stdout;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], r#"installed: ["math", "log"]"#, "{out}");
    assert_eq!(lines[1], r#"tool for the model: "add""#, "{out}");
    // The observer saw each call once; the turn's outcomes follow, in order.
    let logged: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("  [log]"))
        .collect();
    let mut sorted = logged.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [
            "  [log] call-1 ok",
            "  [log] call-2 INVALID_ARGUMENTS",
            "  [log] call-3 UNKNOWN_TOOL"
        ],
        "{out}"
    );
    let answers: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("call-"))
        .collect();
    assert_eq!(answers.len(), 3, "{out}");
    assert_eq!(answers[0], "call-1 -> 5.0", "{out}");
    assert!(
        answers[1].starts_with("call-2 -> INVALID_ARGUMENTS"),
        "{out}"
    );
    assert!(answers[2].starts_with("call-3 -> UNKNOWN_TOOL"), "{out}");
    assert_eq!(
        lines.last().copied(),
        Some("after unload: 0 tools, 0 result listeners"),
        "{out}"
    );
}
