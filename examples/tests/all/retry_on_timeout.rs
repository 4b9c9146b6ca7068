//! `retry_on_timeout`: a retry around the timeout runs the timeout and the
//! body again, and the second attempt gets only what is left of the call's
//! budget (the example runs on tokio's paused clock, so the times are exact).

use crate::support;

#[test]
fn retries_once_within_the_calls_deadline() {
    let run = support::run_example("retry_on_timeout", &[], None);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            // The upstream timed out after 30 ms; the retry answered 20 ms later.
            r#"call-1 ["upstream-timeout","answer"]: 3 results after 50 ms, 2 attempt(s)"#,
            // The second attempt had the 70 ms left, not a new 100 ms.
            r#"call-2 ["upstream-timeout","slow"]: TIMEOUT after 100 ms, 2 attempt(s)"#,
            // The deadline ended the first attempt: no time left, no second start.
            r#"call-3 ["slow","answer"]: TIMEOUT after 100 ms, 1 attempt(s)"#,
        ],
        "{}",
        run.stdout
    );
}
