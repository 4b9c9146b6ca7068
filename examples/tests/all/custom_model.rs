//! The custom `ChatModel` example: the loop asks it, it calls the tool, reads
//! the result (a failure too) and answers.

use crate::support;

#[test]
fn the_model_calls_its_tool_and_answers_from_the_result() {
    let args = ["capital of France", "capital of Atlantis", "hello"];
    let run = support::run_example("custom_model", &args, None);
    let expected = r#"> capital of France
  call capital {"country":"France"}
  result: Paris
  Answered("It is Paris.")
> capital of Atlantis
  call capital {"country":"Atlantis"}
  result: EXECUTION_FAILED: no capital known for "Atlantis"
  Answered("I could not look it up (EXECUTION_FAILED: no capital known for \"Atlantis\").")
> hello
  Answered("Ask me: capital of COUNTRY.")
"#;
    assert_eq!(run.stdout, expected);
}
