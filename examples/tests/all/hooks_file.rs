//! The hooks-file example: a PreToolUse script blocks `rm` with exit code 2,
//! a PostToolUse script records the call and answers with JSON context.

use crate::support;

#[test]
fn the_scripts_block_record_and_add_context() {
    let run = support::run_example("hooks_file", &[], None);
    let expected = r#"> run echo hello
  result (error: false): hello [exit code 0]
  context: audit: the command was recorded
> run rm notes.txt
  result (error: true): DENIED: rm is not allowed here; move files to trash/ instead
notes.txt still there: true
audit.log:
"command":"echo hello"
"#;
    // The audit log holds only the call that ran: the blocked `rm` never ran,
    // so its PostToolUse hook did not either.
    assert_eq!(run.stdout, expected);
}
