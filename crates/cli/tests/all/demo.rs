//! The seed's demo: read a missing README, create it, read it again.

use super::*;

#[test]
fn the_enoent_story() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let log = log_in(&dir, "missing");

    // 1. README.md does not exist: the error is content, the loop goes on.
    let out = stdout_of(
        tack(&ws)
            .args(["run", "读文件 README.md", "--log"])
            .arg(&log),
    );
    assert_eq!(
        out,
        "[user] 读文件 README.md\n\
         [tool:read_file] -> ERR EXECUTION_FAILED: no such file or directory: README.md\n\
         [assistant] tool read_file returned: EXECUTION_FAILED: no such file or directory: README.md\n"
    );
    let results = of_type(&log, "tool/result");
    assert_eq!(results[0]["status"], "error");
    assert_eq!(results[0]["error"]["code"], "EXECUTION_FAILED");

    // 2. Create it (writes need accept-edits without a terminal).
    let out = stdout_of(tack(&ws).args([
        "run",
        "--mode",
        "accept-edits",
        "write README.md: # first-agent demo",
    ]));
    assert!(out.contains("[tool:write_file] -> ok"), "{out}");

    // 3. The same command now succeeds.
    let out = stdout_of(tack(&ws).args(["run", "读文件 README.md"]));
    assert_eq!(
        out,
        "[user] 读文件 README.md\n[tool:read_file] -> ok\n[assistant] tool read_file returned: # first-agent demo\n"
    );
}

#[test]
fn the_readme_command_reads_a_readme() {
    // What `cargo run -p tack-cli -- run "读文件 README.md"` does from a clone.
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let readme = "# tack\n\nA Rust extension framework for LLM-agent hosts: hooks, tools, plugins, and a reference host that runs with no key.\n";
    std::fs::write(ws.join("README.md"), readme).unwrap();
    let state = tempfile::tempdir().unwrap();
    let out = stdout_of(
        tack(&ws)
            .env("XDG_STATE_HOME", state.path())
            .args(["run", "读文件 README.md"]),
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "[user] 读文件 README.md");
    assert_eq!(lines[1], "[tool:read_file] -> ok");
    assert!(
        lines[2].starts_with("[assistant] tool read_file returned: # tack A Rust extension"),
        "{out}"
    );
    assert!(lines[2].ends_with('…'), "cut at 60 characters: {out}");
    // The default log lives in the state directory, not in the workspace.
    assert!(!ws.join(".tack").exists());
    let key = tack_agent::workspace_key(&ws.canonicalize().unwrap());
    let sessions: Vec<_> = std::fs::read_dir(state.path().join("tack/sessions").join(key))
        .unwrap()
        .collect();
    assert_eq!(sessions.len(), 1);
}

#[test]
fn list_dir_and_english_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::create_dir(ws.join("src")).unwrap();
    std::fs::write(ws.join("a.txt"), "hi").unwrap();
    let log = log_in(&dir, "ls");
    let out = stdout_of(
        tack(&ws)
            .args(["run", "list", "dir", ".", "--log"])
            .arg(&log),
    );
    assert_eq!(
        out,
        "[user] list dir .\n[tool:list_dir] -> ok\n[assistant] tool list_dir returned: a.txt (2 bytes) src/\n"
    );
    let out = stdout_of(
        tack(&ws)
            .args(["run", "列目录 src", "--log"])
            .arg(log_in(&dir, "ls-src")),
    );
    assert!(out.contains("[tool:list_dir] -> ok"), "{out}");
}

#[test]
fn an_unknown_prompt_gets_a_text_answer() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let log = log_in(&dir, "help");
    let out = stdout_of(
        tack(&ws)
            .args(["run", "what is the weather?", "--log"])
            .arg(&log),
    );
    assert!(out.contains("[assistant] I am tack's mock model"), "{out}");
    assert!(out.contains("read file X"), "{out}");
    assert!(of_type(&log, "tool/call").is_empty());
    assert_eq!(of_type(&log, "turn/end")[0]["reason"], "answered");
}

#[test]
fn json_prints_the_events() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("README.md"), "hello").unwrap();
    let log = log_in(&dir, "json");
    let out = stdout_of(
        tack(&ws)
            .args(["run", "--json", "read file README.md", "--log"])
            .arg(&log),
    );
    let types: Vec<String> = out
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        types,
        [
            "session/start",
            "user",
            "tool/call",
            "tool/result",
            "assistant",
            "turn/end"
        ]
    );
    // stdout is the log, line for line.
    assert_eq!(out, std::fs::read_to_string(&log).unwrap());
}

#[test]
fn chat_reads_one_prompt_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("a.txt"), "hi").unwrap();
    let log = log_in(&dir, "chat");
    let out = stdout_of(
        tack(&ws)
            .args(["chat", "--log"])
            .arg(&log)
            .write_stdin("read file a.txt\n\nlist dir .\nexit\nread file never.txt\n"),
    );
    assert_eq!(
        out,
        "[user] read file a.txt\n[tool:read_file] -> ok\n[assistant] tool read_file returned: hi\n\
         [user] list dir .\n[tool:list_dir] -> ok\n[assistant] tool list_dir returned: a.txt (2 bytes)\n"
    );
    assert_eq!(of_type(&log, "turn/end").len(), 2);
}
