//! `retry_wrapper`: the first call succeeds on its third attempt, the second
//! gives up after three failures, and the metrics count exactly that.

use crate::support;

#[test]
fn retries_with_backoff_and_counts() {
    let run = support::run_example("retry_wrapper", &[], None);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "call-1: sunny",
            "call-2: EXECUTION_FAILED: the weather service answered 503",
            "Metrics { attempts: 6, retries: 4, gave_up: 1 }",
        ],
        "{}",
        run.stdout
    );
}
