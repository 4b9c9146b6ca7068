// A tool body cannot build a run context, an execution or an execution token
// of its own (say, to pose as another call, or as a nested call of another
// execution): only the pipeline builds them.
use std::sync::Arc;

use tack_core::CancellationToken;
use tack_core::host::Capabilities;
use tack_core::context::ToolRunContext;
use tack_core::serde_json::json;
use tack_core::tool::{CallId, ExecutionToken, Tier, ToolExecution, ToolName};

fn main() {
    let token = ExecutionToken::issue(CallId::from("someone-else"));
    let exec = ToolExecution::new(
        CallId::from("someone-else"),
        ToolName::new("bash").unwrap(),
        Arc::new(json!({})),
        Tier::Executes,
        token,
    );
    let _cx = ToolRunContext::new(
        Arc::new(exec),
        Arc::new(Capabilities::default()),
        CancellationToken::new(),
        Default::default(),
    );
}
