// A tool body cannot return a pipeline verdict: `ToolError` has a
// constructor for each code a tool may produce and none for `DENIED`,
// `UNKNOWN_TOOL`, `INTERNAL` or `OUTPUT_INVALID`; the one that takes any
// code is tack-core's own.
use tack_core::tool::{ErrorCode, ToolError};

fn main() {
    let _ = ToolError::with_wire_code(ErrorCode::Denied, "pretend policy refused this");
}
