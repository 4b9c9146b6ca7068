//! Bad input: clear errors, nothing half-started.

use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;

use super::*;

#[test]
fn a_missing_workspace_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    tack(dir.path())
        .args(["run", "list dir .", "--workspace", "no-such-dir"])
        .assert()
        .failure()
        .stderr(
            contains("workspace")
                .and(contains("no-such-dir"))
                .and(contains("--workspace DIR")),
        );
}

#[test]
fn a_file_as_workspace_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "").unwrap();
    tack(dir.path())
        .args(["run", "list dir .", "--workspace", "f"])
        .assert()
        .failure()
        .stderr(contains("not a directory"));
}

#[test]
fn an_invalid_script_names_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let path = dir.path().join("bad.json");
    std::fs::write(
        &path,
        "{\"turns\": [\n  {\"text\": \"a\"},\n  {\"text\": }\n]}",
    )
    .unwrap();
    tack(&ws)
        .args(["run", "go", "--model"])
        .arg(format!("script:{}", path.display()))
        .assert()
        .failure()
        .stderr(contains("is not valid").and(contains("line 3 column")));
}

#[test]
fn an_unwritable_log_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(dir.path().join("file"), "").unwrap();
    tack(&ws)
        .args(["run", "run touch started", "--mode", "allow-all", "--log"])
        .arg(dir.path().join("file/log.jsonl"))
        .assert()
        .failure()
        .stderr(contains("nothing would be recorded"));
    assert!(!ws.join("started").exists());
}

#[test]
fn openai_without_a_key_says_which_variable() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    tack(&ws)
        .env_remove("OPENAI_API_KEY")
        .args(["run", "hi", "--model", "openai"])
        .assert()
        .failure()
        .stderr(contains("OPENAI_API_KEY"));
}

#[test]
fn an_unreachable_model_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    tack(&ws)
        .env("OPENAI_BASE_URL", format!("http://127.0.0.1:{port}/v1"))
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_MODEL", "m")
        .args(["run", "hi", "--model", "openai", "--model-timeout", "2"])
        .assert()
        .failure()
        .stderr(contains("could not reach the model endpoint"));
}

#[test]
fn unknown_mode_and_model_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    tack(&ws)
        .args(["run", "hi", "--mode", "yolo"])
        .assert()
        .code(2)
        .stderr(contains("--mode"));
    tack(&ws)
        .args(["run", "hi", "--model", "gpt"])
        .assert()
        .code(2)
        .stderr(contains("openai:MODEL"))
        .stderr(contains("mock, or script:FILE"));
    tack(&ws)
        .args(["run", "hi", "--sandbox", "none"])
        .assert()
        .code(2)
        .stderr(contains("--sandbox"));
}
