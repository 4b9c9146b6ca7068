//! `redact_secrets`: the key never reaches the model or the log, on a
//! success (value replaced, content re-rendered) or a failure (message
//! redacted where it is made); the rest of the result is kept.

use crate::support;

#[test]
fn secrets_are_redacted_from_content_and_log() {
    let run = support::run_example("redact_secrets", &[], None);
    assert!(!run.stdout.contains("sk-"), "a key leaked:\n{}", run.stdout);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            r#"logged value: {"key":"[REDACTED]","user":"ada"}"#,
            r#"model reads: {"key":"[REDACTED]","user":"ada"}"#,
            r#"logged error: {"code":"EXECUTION_FAILED","message":"bad section in `key = [REDACTED]`","dispatched":true}"#,
            "model reads: EXECUTION_FAILED: bad section in `key = [REDACTED]`",
        ],
        "{}",
        run.stdout
    );
}
