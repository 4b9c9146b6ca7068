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

/// One form of each family where bash or a program evaluates text the
/// reader could take for plain words (arithmetic subscripts, builtin
/// callbacks, hook variables, functions from the environment, scripts from
/// file descriptors, programs that run programs from their configuration or
/// arguments). Each really deletes `victim` when run by bash (the
/// permission crate's tests run them); here none may run.
const EVALUATED_FORMS: &[&str] = &[
    "declare -i x='a[$(rm victim)]'",
    "x='a[$(rm victim)]'; echo $[x]",
    "test -v 'a[$(rm victim)]'",
    "compgen -C 'rm victim' x",
    "mapfile -C 'rm victim' -c 1 a <<< line",
    "export BASH_ENV=./hook.sh; bash -c :",
    "printf -v PS4 %s '$(rm victim)'; set -x; :",
    "env 'BASH_FUNC_x%%=() { rm victim; }' bash -c x",
    "echo 'rm victim' | sh /dev/./stdin",
    "sh /dev/fd/3 3<<'EOF'\nrm victim\nEOF",
    "bash --rcfile hook.sh -i < /dev/null",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm victim' git x",
    "script -qc 'rm victim' /dev/null",
    "setarch x86_64 rm victim",
    "echo | sed 'e rm victim'",
    "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='rm victim' hook.sh",
    "printf 'rm victim' | xargs -0 sh -c",
    "python3 -c 'import os; os.remove(\"victim\")'",
];

/// A script that calls `bash` once per command, in one batch, then answers.
fn script(dir: &Path, commands: &[&str]) -> std::path::PathBuf {
    let calls: Vec<(&str, Value)> = commands
        .iter()
        .map(|command| ("bash", json!({ "command": command })))
        .collect();
    script_calls(dir, &calls)
}

/// A script that makes the given tool calls in one batch, then answers.
fn script_calls(dir: &Path, calls: &[(&str, Value)]) -> std::path::PathBuf {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (tool, arguments))| {
            json!({
                "id": format!("c{i}"),
                "name": tool,
                "arguments": arguments.to_string(),
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
fn every_family_of_evaluated_text_is_refused_and_the_file_survives() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("victim"), "keep me").unwrap();
    std::fs::write(ws.join("hook.sh"), "rm victim\n").unwrap();
    permissions(&ws, "deny = ['bash(command: \"rm *\")']\n");
    let script = script(dir.path(), EVALUATED_FORMS);
    let log = log_in(&dir, "evaluated");
    stdout_of(
        tack(&ws)
            .args(["run", "--mode", "allow-all", "--model"])
            .arg(format!("script:{}", script.display()))
            .arg("--log")
            .arg(&log)
            .arg("go"),
    );
    let results = of_type(&log, "tool/result");
    assert_eq!(results.len(), EVALUATED_FORMS.len());
    for (form, result) in EVALUATED_FORMS.iter().zip(&results) {
        assert_eq!(
            result["error"]["code"], "DENIED",
            "{form:?} was not refused: {result}"
        );
        let message = result["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("needs approval") || message.contains("denied by"),
            "{form:?}: {message}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("victim")).unwrap(),
        "keep me",
        "a form deleted the file"
    );
}

/// A path rule on `read_file` is about the file: `grep` cannot return a
/// protected file's content (a search that may reach one asks, and no one
/// can be asked here), and a search narrowed away from it by a file-name
/// filter runs.
#[test]
fn a_read_rule_keeps_grep_and_glob_away_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join(".env"), "API_KEY=hunter2\n").unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/a.txt"), "hunter2 is not here\n").unwrap();
    permissions(&ws, "deny = ['read_file(path: \"**/.env\")']\n");
    let calls = [
        ("grep", json!({"pattern": "hunter2"})),
        ("grep", json!({"pattern": "hunter2", "path": ".env"})),
        ("glob", json!({"pattern": "**/.env"})),
        ("read_file", json!({"path": ".env"})),
        (
            "grep",
            json!({"pattern": "hunter2", "path": "src", "glob": "*.txt"}),
        ),
        ("grep", json!({"pattern": "hunter2", "glob": "*.txt"})),
    ];
    let script = script_calls(dir.path(), &calls);
    let log = log_in(&dir, "grep");
    stdout_of(
        tack(&ws)
            .args(["run", "--mode", "allow-all", "--model"])
            .arg(format!("script:{}", script.display()))
            .arg("--log")
            .arg(&log)
            .arg("go"),
    );
    let results = of_type(&log, "tool/result");
    assert_eq!(results.len(), calls.len());
    for result in &results[..4] {
        assert_eq!(result["error"]["code"], "DENIED", "{result}");
        assert!(!result.to_string().contains("API_KEY"), "{result}");
    }
    for result in &results[4..] {
        assert_eq!(result["status"], "ok", "{result}");
        assert!(!result.to_string().contains("API_KEY"), "{result}");
    }
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
