//! `--resume LOG`: a session continued in the same log.

use super::*;

#[test]
fn run_resume_appends_to_the_same_chain() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("README.md"), "# r").unwrap();
    let log = log_in(&dir, "r");
    tack(&ws)
        .args(["run", "read file README.md", "--log"])
        .arg(&log)
        .assert()
        .success();
    let first = records(&log).len();
    let out = stdout_of(tack(&ws).args(["run", "list dir .", "--resume"]).arg(&log));
    assert!(out.contains("[tool:list_dir]"), "{out}");
    let all = records(&log);
    assert!(all.len() > first);
    for (i, record) in all.iter().enumerate() {
        assert_eq!(record["seq"], i as u64 + 1);
    }
    let starts = of_type(&log, "session/start");
    assert_eq!(starts.len(), 2);
    assert_eq!(starts[1]["resumed"], true);
    assert_eq!(all[first]["type"], "session/start");
    // The whole log verifies, and replays both sessions.
    let replayed = stdout_of(tack(&ws).arg("replay").arg(&log));
    assert!(
        replayed.contains("[user] read file README.md"),
        "{replayed}"
    );
    assert!(replayed.contains("[user] list dir ."), "{replayed}");
    // --resume and --log together are a usage error.
    tack(&ws)
        .args(["run", "x", "--resume"])
        .arg(&log)
        .arg("--log")
        .arg(dir.path().join("other.jsonl"))
        .assert()
        .code(2);
}

#[test]
fn resume_after_a_torn_log_warns_and_continues() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let log = log_in(&dir, "torn");
    tack(&ws)
        .args(["run", "hello", "--log"])
        .arg(&log)
        .assert()
        .success();
    let n = records(&log).len() + 1;
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(format!("{{\"seq\":{n},\"ts\":").as_bytes());
    std::fs::write(&log, &bytes).unwrap();
    let assert = tack(&ws)
        .args(["run", "again", "--resume"])
        .arg(&log)
        .assert()
        .success();
    let err = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert!(err.contains("torn"), "{err}");
    tack(&ws).arg("replay").arg(&log).assert().success();
    assert_eq!(records(&log)[n - 1]["type"], "session/start");
}

#[test]
fn a_tampered_log_is_not_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    let log = log_in(&dir, "t");
    tack(&ws)
        .args(["run", "hello", "--log"])
        .arg(&log)
        .assert()
        .success();
    let text = std::fs::read_to_string(&log)
        .unwrap()
        .replace("hello", "HELLO");
    std::fs::write(&log, &text).unwrap();
    let err = tack(&ws)
        .args(["run", "again", "--resume"])
        .arg(&log)
        .assert()
        .code(1);
    let err = String::from_utf8(err.get_output().stderr.clone()).unwrap();
    assert!(err.contains("fails verification"), "{err}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), text, "left alone");
}

#[test]
fn chat_resume_continues_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(&dir);
    std::fs::write(ws.join("a.txt"), "hi").unwrap();
    let log = log_in(&dir, "chat");
    tack(&ws)
        .args(["chat", "--log"])
        .arg(&log)
        .write_stdin("read file a.txt\n")
        .assert()
        .success();
    let out = stdout_of(
        tack(&ws)
            .args(["chat", "--resume"])
            .arg(&log)
            .write_stdin("list dir .\nexit\n"),
    );
    assert!(out.starts_with("[user] list dir ."), "{out}");
    let users: Vec<Value> = of_type(&log, "user")
        .into_iter()
        .map(|r| r["text"].clone())
        .collect();
    assert_eq!(users, ["read file a.txt", "list dir ."]);
    assert_eq!(of_type(&log, "turn/end").len(), 2);
    tack(&ws).arg("replay").arg(&log).assert().success();
}
