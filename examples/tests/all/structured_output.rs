//! The structured-output example: the schema refuses the first answer, the
//! second concludes the turn and reaches the host as a typed value.

use crate::support;

#[test]
fn a_bad_answer_is_refused_and_a_valid_one_concludes_the_turn() {
    let run = support::run_example("structured_output", &[], None);
    let expected = r#"tool result: INVALID_ARGUMENTS: invalid arguments for tool `submit_review`: at `/score` 11 is greater than the maximum of 10; at `/verdict` "maybe" is not one of "approve" or "reject"
tool result: {"verdict":"approve","score":8,"reasons":["tests pass","small diff"]}
typed answer: Review { verdict: Approve, score: 8, reasons: ["tests pass", "small diff"] }
"#;
    assert_eq!(run.stdout, expected);
    // The script's third turn (a text answer) was never asked for.
    assert!(!run.stdout.contains("never reached"));
}
