//! The summary the pipeline gives an approval request.

use crate::approval::summarize_arguments;
use crate::tool::ToolExecution;

/// The one-line summary of `execution` for an approval request
/// ([`ApprovalRequest::summary`](crate::policy::ApprovalRequest::summary)):
/// [`ApprovalRequest::summarize_call`](crate::policy::ApprovalRequest::summarize_call)
/// of its tool and arguments, the gist being the first string argument in
/// the order the model wrote them (the order of
/// [`arguments_text`](ToolExecution::arguments_text), which the parsed value
/// does not keep).
///
/// ```
/// use tack_core::host::{Arguments, NewExecutionToken, NewToolExecution, summarize_execution};
/// use tack_core::policy::ApprovalRequest;
/// use tack_core::tool::{CallId, ExecutionToken, Tier, ToolExecution, ToolName};
///
/// let text = r#"{"path": "src/main.rs", "content": "fn main() {}"}"#;
/// let execution = ToolExecution::new(
///     CallId::from("c1"), ToolName::new("write_file").unwrap(),
///     Arguments::parse(text).unwrap(), Tier::Writes, ExecutionToken::issue(CallId::from("c1")),
/// );
/// assert_eq!(summarize_execution(&execution), "write_file: src/main.rs");
/// // From the value alone, the first in the value's key order.
/// assert_eq!(
///     ApprovalRequest::summarize_call("write_file", execution.arguments()),
///     "write_file: fn main() {}",
/// );
/// ```
pub fn summarize_execution(execution: &ToolExecution) -> String {
    summarize_arguments(execution.name(), execution.parsed_arguments())
}
