//! Progress on stderr: a status line naming the running tool, with its
//! elapsed time, on a terminal (a pseudo-terminal `script(1)` makes), and
//! none of it on a pipe, where it would be noise in a log.

use std::process::Stdio;

use super::*;

/// A scripted model whose one call runs `sleep 2.5` through `bash`.
fn slow_call(dir: &tempfile::TempDir) -> String {
    let path = dir.path().join("script.json");
    std::fs::write(
        &path,
        r#"{"turns": [
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": "{\"command\": \"sleep 2.5\"}"}]},
            {"text": "slept"}
        ]}"#,
    )
    .unwrap();
    format!("script:{}", path.display())
}

/// `s` in single quotes, for the shell `script(1)` runs the command with.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[test]
fn a_running_tool_shows_on_a_terminal_and_not_on_a_pipe() {
    if !Path::new("/usr/bin/script").exists() {
        println!("a_running_tool_shows_on_a_terminal_and_not_on_a_pipe: skipped, no script(1)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let model = slow_call(&dir);
    let args = |log: &Path| {
        vec![
            "run".to_owned(),
            "wait".to_owned(),
            "--model".to_owned(),
            model.clone(),
            "--mode".to_owned(),
            "allow-all".to_owned(),
            "--log".to_owned(),
            log.display().to_string(),
        ]
    };

    // On a terminal: the status line names the tool while it runs.
    let log = log_in(&dir, "terminal");
    let mut line = quoted(&assert_cmd::cargo::cargo_bin("tack").display().to_string());
    for arg in args(&log) {
        line.push(' ');
        line.push_str(&quoted(&arg));
    }
    let terminal = on_a_terminal(&ws, &line);
    let shown = String::from_utf8_lossy(&terminal.stdout);
    assert!(terminal.status.success(), "{shown}");
    // The call sleeps 2.5 s: the line is redrawn with its elapsed time.
    assert!(
        shown.contains("running bash (0s)"),
        "no status line on a terminal:\n{shown}"
    );
    assert!(
        shown.contains("running bash (1s)"),
        "no elapsed time:\n{shown}"
    );
    assert!(shown.contains("slept"), "{shown}");

    // On a pipe: the same run, and no status line.
    let log = log_in(&dir, "pipe");
    let piped = tack(&ws).args(args(&log)).output().unwrap();
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(piped.status.success(), "{stderr}");
    assert!(
        !stderr.contains("running bash"),
        "a status line on a pipe:\n{stderr}"
    );
    assert!(String::from_utf8_lossy(&piped.stdout).contains("[assistant] slept"));
}

/// An MCP server slow to start gets a spinner on a terminal (after a
/// moment), and no line on a pipe when it is done within two seconds.
#[test]
fn a_slow_mcp_start_shows_on_a_terminal() {
    if !Path::new("/usr/bin/script").exists() {
        println!("a_slow_mcp_start_shows_on_a_terminal: skipped, no script(1)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    // A server that takes a second, then leaves without a word.
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"slow": {"command": "sh", "args": ["-c", "sleep 1"]}}})
            .to_string(),
    )
    .unwrap();
    let model = slow_call(&dir);
    let log = log_in(&dir, "slow-mcp");
    let mut line = quoted(&assert_cmd::cargo::cargo_bin("tack").display().to_string());
    for arg in [
        "run",
        "wait",
        "--model",
        &model,
        "--mode",
        "allow-all",
        "--mcp-config",
        &config.display().to_string(),
        "--log",
        &log.display().to_string(),
    ] {
        line.push(' ');
        line.push_str(&quoted(arg));
    }
    let terminal = on_a_terminal(&ws, &line);
    let shown = String::from_utf8_lossy(&terminal.stdout);
    assert!(
        shown.contains("starting MCP servers (0s)"),
        "no spinner on a terminal:\n{shown}"
    );
    assert!(shown.contains("slept"), "{shown}");
}

/// Runs the shell command `line` in `ws` under a pseudo-terminal made by
/// `script(1)`, with `tack()`'s environment; what the terminal showed is
/// its stdout.
fn on_a_terminal(ws: &Path, line: &str) -> std::process::Output {
    tack(ws)
        .get_envs()
        .fold(
            std::process::Command::new("/usr/bin/script"),
            |mut cmd, (key, value)| {
                match value {
                    Some(value) => cmd.env(key, value),
                    None => cmd.env_remove(key),
                };
                cmd
            },
        )
        .current_dir(ws)
        .args(["-qec", line, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}
