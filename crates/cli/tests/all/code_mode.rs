//! `--presentation code`: the model sees `run_code`; the program's calls run
//! through the pipeline and show up, live and in replay, under the run.

use super::*;

#[test]
fn a_program_calls_tools_and_direct_calls_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("a.txt"), "hi\n").unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        r#"{"turns": [
        {"tool_calls": [{"id": "c1", "name": "run_code", "arguments": "{\"code\": \"const r = await tools.read_file({path: 'a.txt'}); console.log('lines', r.total_lines); const l = await tools.list_dir({path: '.'}); return l.entries.length;\"}"}]},
        {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": "{\"path\": \"a.txt\"}"}]},
        {"text": "done"}
    ]}"#,
    )
    .unwrap();
    let model = format!("script:{}", script.display());
    let log = log_in(&dir, "code");
    let out = stdout_of(
        tack(&ws)
            .args([
                "run",
                "go",
                "--presentation",
                "code",
                "--mode",
                "allow-all",
                "--model",
                &model,
                "--log",
            ])
            .arg(&log),
    );
    assert_eq!(
        out,
        "[user] go\n\
         [tool:run_code] -> ok\n  \
         ↳ [tool:read_file] c1:code:1 -> ok\n  \
         ↳ [tool:list_dir] c1:code:2 -> ok\n\
         [tool:read_file] -> ERR UNKNOWN_TOOL: tool `read_file` cannot be called directly in code mode: call it from inside `run_code`, as `await tools.read_file({...})`\n\
         [assistant] done\n"
    );
    let results = of_type(&log, "tool/result");
    assert_eq!(results[0]["status"], "ok");
    assert_eq!(results[0]["value"]["logs"][0], "lines 1");
    assert_eq!(results[0]["value"]["result"], 1);
    // The sub-calls are in the log, between the run's call and its result.
    let starts = of_type(&log, "tool/code-dispatch-start");
    let settles = of_type(&log, "tool/code-dispatch");
    let ids = |records: &[Value]| -> Vec<String> {
        records
            .iter()
            .map(|r| r["call_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(&starts), ["c1:code:1", "c1:code:2"]);
    assert_eq!(ids(&settles), ["c1:code:1", "c1:code:2"]);
    assert_eq!(settles[0]["tool"], "read_file");
    assert_eq!(settles[0]["parent_call_id"], "c1");
    assert_eq!(settles[0]["status"], "ok");
    assert_eq!(settles[0]["arguments"], r#"{"path":"a.txt"}"#);
    assert!(
        settles[0]["content"].to_string().contains("hi"),
        "{}",
        settles[0]
    );
    let seq = |r: &Value| r["seq"].as_u64().unwrap();
    let call = of_type(&log, "tool/call");
    assert!(seq(&call[0]) < seq(&starts[0]));
    assert!(seq(&starts[0]) < seq(&settles[0]) && seq(&settles[0]) < seq(&starts[1]));
    assert!(seq(&settles[1]) < seq(&results[0]));
    let replay = stdout_of(tack(&ws).args(["replay"]).arg(&log));
    assert_eq!(
        replay, out,
        "replay renders the sub-calls like the live run"
    );
}
