//! Scripted models: parallel calls, malformed arguments, the step limit.

use super::*;

fn script(dir: &tempfile::TempDir, text: &str) -> String {
    let path = dir.path().join("script.json");
    std::fs::write(&path, text).unwrap();
    format!("script:{}", path.display())
}

#[test]
fn parallel_read_only_calls_come_back_in_model_order() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    for name in ["a", "b", "c"] {
        std::fs::write(ws.join(format!("{name}.txt")), name).unwrap();
    }
    let model = script(
        &dir,
        r#"{"turns": [
        {"tool_calls": [
            {"id": "c1", "name": "read_file", "arguments": "{\"path\": \"a.txt\"}"},
            {"id": "c2", "name": "read_file", "arguments": "{\"path\": \"missing.txt\"}"},
            {"id": "c3", "name": "list_dir", "arguments": "{\"path\": \".\"}"},
            {"id": "c4", "name": "read_file", "arguments": "{\"path\": \"c.txt\"}"}
        ]},
        {"text": "read them"}
    ]}"#,
    );
    let log = log_in(&dir, "parallel");
    let out = stdout_of(
        tack(&ws)
            .args(["run", "read all", "--model", &model, "--log"])
            .arg(&log),
    );
    assert_eq!(
        out,
        "[user] read all\n\
         [tool:read_file] -> ok\n\
         [tool:read_file] -> ERR EXECUTION_FAILED: no such file or directory: missing.txt\n\
         [tool:list_dir] -> ok\n\
         [tool:read_file] -> ok\n\
         [assistant] read them\n"
    );
    let ids: Vec<String> = of_type(&log, "tool/result")
        .iter()
        .map(|r| r["call_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
}

#[test]
fn malformed_arguments_are_invalid_and_the_loop_continues() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("README.md"), "hello").unwrap();
    let model = script(
        &dir,
        r#"{"turns": [
        {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": "{\"path\": README.md"}]},
        {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": "{\"path\": \"README.md\"}"}]},
        {"text": "fixed my arguments"}
    ]}"#,
    );
    let log = log_in(&dir, "malformed");
    let out = stdout_of(
        tack(&ws)
            .args(["run", "go", "--model", &model, "--log"])
            .arg(&log),
    );
    assert!(
        out.contains("[tool:read_file] -> ERR INVALID_ARGUMENTS:"),
        "{out}"
    );
    assert!(out.contains("[tool:read_file] -> ok"), "{out}");
    assert!(out.ends_with("[assistant] fixed my arguments\n"), "{out}");
    let results = of_type(&log, "tool/result");
    assert_eq!(results[0]["error"]["code"], "INVALID_ARGUMENTS");
    assert_eq!(results[1]["status"], "ok");
    // The raw text the model produced is logged as is.
    assert_eq!(
        of_type(&log, "tool/call")[0]["arguments"],
        "{\"path\": README.md"
    );
}

#[test]
fn the_step_limit_is_said_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let call =
        r#"{"tool_calls": [{"id": "c", "name": "list_dir", "arguments": "{\"path\": \".\"}"}]}"#;
    let model = script(&dir, &format!(r#"{{"turns": [{call}, {call}, {call}]}}"#));
    let log = log_in(&dir, "limit");
    let assert = tack(&ws)
        .args([
            "run",
            "loop",
            "--max-steps",
            "2",
            "--model",
            &model,
            "--log",
        ])
        .arg(&log)
        .assert()
        .code(3);
    let out = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    assert!(out.ends_with("[stopped] the turn reached the step limit (2 model calls) without a final answer; raise --max-steps or narrow the request\n"), "{out}");
    assert_eq!(of_type(&log, "turn/end")[0]["reason"], "max_steps");
}
