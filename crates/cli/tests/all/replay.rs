//! `tack replay` prints what the live run printed; `tools`, `plugins`.

use super::*;

#[test]
fn replay_is_identical_to_the_live_run() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("README.md"), "# replay me\n").unwrap();
    let model_path = dir.path().join("s.json");
    std::fs::write(&model_path, r#"{"turns": [
        {"tool_calls": [
            {"id": "c1", "name": "read_file", "arguments": "{\"path\": \"README.md\", \"offset\": 1, \"limit\": 1}"},
            {"id": "c2", "name": "bash", "arguments": "{\"command\": \"echo hi\"}"},
            {"id": "c3", "name": "read_file", "arguments": "{oops"}
        ]},
        {"text": "done"}
    ]}"#).unwrap();
    let log = log_in(&dir, "replay");
    let live = stdout_of(
        tack(&ws)
            .args(["run", "go", "--model"])
            .arg(format!("script:{}", model_path.display()))
            .arg("--log")
            .arg(&log),
    );
    assert!(live.contains("[approval]"), "{live}");
    let replayed = stdout_of(tack(&ws).arg("replay").arg(&log));
    assert_eq!(replayed, live);
    let json = stdout_of(tack(&ws).args(["replay", "--json"]).arg(&log));
    assert_eq!(json, std::fs::read_to_string(&log).unwrap());
}

#[test]
fn replay_skips_a_torn_last_line_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let log = log_in(&dir, "torn");
    let live = stdout_of(tack(&ws).args(["run", "list dir .", "--log"]).arg(&log));
    let mut text = std::fs::read_to_string(&log).unwrap();
    // The start of the next record, cut short (a crash mid-write).
    let next = text.lines().count() + 1;
    text.push_str(&format!(r#"{{"seq":{next},"ts":1,"type":"assistant","te"#));
    std::fs::write(&log, text).unwrap();
    let assert = tack(&ws).arg("replay").arg(&log).assert().success();
    let output = assert.get_output();
    assert_eq!(String::from_utf8(output.stdout.clone()).unwrap(), live);
    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    assert!(
        stderr.contains("warning") && stderr.contains("torn"),
        "{stderr}"
    );
}

#[test]
fn tools_prints_schemas_in_each_format() {
    let dir = tempfile::tempdir().unwrap();
    let openai: Value = serde_json::from_str(&stdout_of(tack(dir.path()).args(["tools"]))).unwrap();
    let names: Vec<&str> = openai
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"read_file") && names.contains(&"bash"),
        "{names:?}"
    );
    let mcp: Value = serde_json::from_str(&stdout_of(
        tack(dir.path()).args(["tools", "--format", "mcp"]),
    ))
    .unwrap();
    assert!(mcp[0]["inputSchema"].is_object());
    let anthropic: Value = serde_json::from_str(&stdout_of(tack(dir.path()).args([
        "tools",
        "--format",
        "anthropic",
    ])))
    .unwrap();
    assert!(anthropic[0]["input_schema"].is_object());
    tack(dir.path())
        .args(["tools", "--format", "yaml"])
        .assert()
        .failure();
}

#[test]
fn plugins_lists_the_inventory() {
    let dir = tempfile::tempdir().unwrap();
    let out = stdout_of(tack(dir.path()).arg("plugins"));
    for name in ["builtin-tools", "permission", "sandbox", "timeout"] {
        assert!(
            out.lines().any(|l| l.starts_with(name)),
            "{name} missing from {out}"
        );
    }
}
