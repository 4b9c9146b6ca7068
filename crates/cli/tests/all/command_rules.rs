//! Permission command rules end to end: a workspace's `.tack/permissions.toml`
//! denies `rm *`, and a scripted model tries the bypass forms through the
//! real `tack` binary, with `--mode allow-all` and commands really run. Every
//! form is refused (denied, or asked with no one to ask), and the file it
//! targets is still there afterwards; commands the rules allow still run.

use std::path::Path;

use serde_json::{Value, json};

use crate::{log_in, of_type, stdout_of, tack, workspace};

/// Ways to spell `rm victim` that a raw prefix match would let through.
const BYPASS_FORMS: &[&str] = &[
    "rm victim",
    "\\rm victim",
    "/bin/rm victim",
    "'rm' victim",
    "r\"\"m victim",
    "env rm victim",
    "command rm victim",
    "nice -n 5 rm victim",
    "timeout 5 rm victim",
    "nohup rm victim",
    "VAR=1 rm victim",
    "! rm victim",
    "exec rm victim",
    "sh -c 'rm victim'",
    "bash -c \"rm victim\"",
    "eval 'rm victim'",
    "$(echo rm) victim",
    "`echo rm` victim",
    "a=rm; $a victim",
    "echo cm0gdmljdGltCg== | base64 -d | sh",
    "echo victim | xargs rm",
    "find . -name victim -delete",
    "find . -name victim -exec rm {} \\;",
    "{ rm victim; }",
    "(rm victim)",
    "if true; then rm victim; fi",
    "for f in victim; do rm \"$f\"; done",
    "f() { rm victim; }; f",
    "ls && rm victim",
    "ls; rm victim",
    "rm \\\n  victim",
    "bash <<'EOF'\nrm victim\nEOF",
    "trap 'rm victim' EXIT",
];

/// A script that calls `bash` once per command, in one batch, then answers.
fn script(dir: &Path, commands: &[&str]) -> std::path::PathBuf {
    let calls: Vec<Value> = commands
        .iter()
        .enumerate()
        .map(|(i, command)| {
            json!({
                "id": format!("c{i}"),
                "name": "bash",
                "arguments": json!({ "command": command }).to_string(),
            })
        })
        .collect();
    let path = dir.join("script.json");
    std::fs::write(
        &path,
        json!({ "turns": [{ "tool_calls": calls }, { "text": "done" }] }).to_string(),
    )
    .unwrap();
    path
}

fn permissions(ws: &Path, text: &str) {
    std::fs::create_dir_all(ws.join(".tack")).unwrap();
    std::fs::write(ws.join(".tack/permissions.toml"), text).unwrap();
}

#[test]
fn every_bypass_form_is_refused_and_the_file_survives() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("victim"), "keep me").unwrap();
    permissions(&ws, "deny = ['bash(command: \"rm *\")']\n");
    let script = script(dir.path(), BYPASS_FORMS);
    let log = log_in(&dir, "bypass");
    stdout_of(
        tack(&ws)
            .args(["run", "--mode", "allow-all", "--model"])
            .arg(format!("script:{}", script.display()))
            .arg("--log")
            .arg(&log)
            .arg("go"),
    );
    let results = of_type(&log, "tool/result");
    assert_eq!(results.len(), BYPASS_FORMS.len());
    for (form, result) in BYPASS_FORMS.iter().zip(&results) {
        assert_eq!(
            result["error"]["code"], "DENIED",
            "{form:?} was not refused: {result}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("victim")).unwrap(),
        "keep me",
        "a bypass form deleted the file"
    );
}

#[test]
fn allowed_subcommands_run_and_a_compound_with_an_unlisted_part_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("victim"), "keep me").unwrap();
    permissions(
        &ws,
        "allow = ['bash(command: \"ls*\")', 'bash(command: \"cat*\")']\n",
    );
    let commands = [
        "ls && cat victim",
        "ls && rm victim",
        "cat victim | rm victim",
    ];
    let script = script(dir.path(), &commands);
    let log = log_in(&dir, "allow");
    // The default mode asks for commands; with no terminal there is no one
    // to ask, so only what the allow rules cover runs.
    stdout_of(
        tack(&ws)
            .args(["run", "--model"])
            .arg(format!("script:{}", script.display()))
            .arg("--log")
            .arg(&log)
            .arg("go"),
    );
    let results = of_type(&log, "tool/result");
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["status"], "ok", "{}", results[0]);
    assert!(
        results[0]["value"]["stdout"]
            .as_str()
            .unwrap()
            .contains("keep me"),
        "{}",
        results[0]
    );
    for result in &results[1..] {
        assert_eq!(result["error"]["code"], "DENIED", "{result}");
    }
    assert!(ws.join("victim").exists());
}
