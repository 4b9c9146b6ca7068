// A tool body returns a value or a `ToolError`; only the pipeline builds the
// call's `Outcome` (or a `ToolError` with a pipeline code such as DENIED).
// From the plugin surface, neither constructor exists.
use tack_core::serde_json::{Value, json};
use tack_core::tool::{CallId, ErrorCode, Outcome, ToolError};

fn main() {
    let _ok = Outcome::success(CallId::from("c1"), "echo", json!(1), Vec::new());
    let _denied = ToolError::from_code(ErrorCode::Denied, "pretend policy refused this");
    let _: Option<Value> = None;
}
