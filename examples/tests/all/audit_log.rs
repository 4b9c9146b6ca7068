//! `audit_log`: the file it writes holds one JSON line per call, in order,
//! with each call's end — success, invalid arguments, unknown tool.

use crate::support;

use serde_json::Value;

#[test]
fn audit_log_writes_one_line_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let run = support::run_example("audit_log", &[path.to_str().unwrap()], None);
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(run.stdout, written, "it prints the file it wrote");
    let records: Vec<Value> = written
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary: Vec<(&str, &str, Option<&str>)> = records
        .iter()
        .map(|r| {
            (
                r["call_id"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
                r["error"]["code"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("call-1", "ok", None),
            ("call-2", "error", Some("INVALID_ARGUMENTS")),
            ("call-3", "error", Some("UNKNOWN_TOOL")),
        ]
    );
    assert_eq!(records[0]["value"], "hi");
    assert_eq!(records[2]["tool"], "rm");
}
