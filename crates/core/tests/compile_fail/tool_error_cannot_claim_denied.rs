// A tool body cannot return a pipeline verdict: `with_code` takes a
// `ToolErrorCode`, which has no `Denied`, `UnknownTool` or `Internal`.
use tack_core::tool::{ErrorCode, ToolError};

fn main() {
    let _ = ToolError::with_code(ErrorCode::Denied, "pretend policy refused this");
}
