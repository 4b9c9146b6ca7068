//! The exact stage sequence of each call, for success and every failure exit,
//! with listeners recording their own runs beside the stage recorder.

use std::sync::Arc;

use serde_json::json;
use tack_core::hook::AgentId;
use tack_core::hooks::{ExecuteOutput, PostDecision};
use tack_core::policy::{ApprovalOutcome, PreDecision};
use tack_core::tool::{ErrorCode, ToolError};
use tack_pipeline::Presentation;

use crate::harness::*;
use crate::stage_paths::*;

/// Every listener of [`instrumented`] ran.
const ALL_LISTENERS: [&str; 5] = ["pre", "guard", "execute", "post", "result"];
/// Only the listeners that see every outcome of a known tool ran.
const POST_AND_RESULT: [&str; 2] = ["post", "result"];

/// A harness whose every hook point logs its runs into `log`, as `pre`,
/// `guard`, `execute`, `post`, `result` (so the log can be compared with the
/// recorder's stages). The tool `t` fails or misbehaves on request:
/// `{"mode": "ok" | "fail" | "panic" | "bad-output" | "deny" | "ask" | "guard" | "timeout" | "block"}`.
fn instrumented() -> (Harness, Log) {
    let h = Harness::new();
    let log = Log::default();
    h.add(raw_tool(
        "t",
        json!({"type": "object", "properties": {"mode": {"enum": ["ok", "fail", "panic", "bad-output", "deny", "ask", "guard", "timeout", "block"]}}, "required": ["mode"]}),
        json!({"type": "string"}),
        |args, _cx| async move {
            match args["mode"].as_str() {
                Some("fail") => Err(ToolError::new("failed on request")),
                Some("panic") => panic!("panicked on request"),
                Some("bad-output") => Ok(json!(1)),
                _ => Ok(json!("ok")),
            }
        },
    ));
    h.provide_approval(Approver::answering(ApprovalOutcome::Denied {
        reason: None,
    }));
    let hooks = h.hooks();
    let l = log.clone();
    hooks.pre_execute().tap("log-pre", move |exec, next| {
        l.push("pre");
        let mode = exec.arg_str("mode").unwrap_or_default().to_owned();
        async move {
            match mode.as_str() {
                "deny" => PreDecision::deny("denied on request"),
                "ask" => PreDecision::ask("asked on request"),
                _ => next.run(exec).await,
            }
        }
    });
    let l = log.clone();
    hooks.guard("log-guard", move |exec| {
        l.push("guard");
        if exec.arg_str("mode") == Some("guard") {
            Err("guarded on request".into())
        } else {
            Ok(())
        }
    });
    let l = log.clone();
    hooks.execute().tap("log-execute", move |req, next| {
        l.push("execute");
        let timeout = req.execution().arg_str("mode") == Some("timeout");
        async move {
            if timeout {
                return ExecuteOutput::err(ToolError::timeout("timed out on request"));
            }
            next.run(req).await
        }
    });
    let l = log.clone();
    hooks.post_execute().tap("log-post", move |input, next| {
        l.push("post");
        let block = input.execution.as_ref().and_then(|e| e.arg_str("mode")) == Some("block");
        async move {
            if block {
                return PostDecision::accept().block("blocked on request");
            }
            next.run(input).await
        }
    });
    let l = log.clone();
    hooks.result().tap(
        "log-result",
        move |_record: &Arc<tack_core::hooks::ExecutionRecord>| l.push("result"),
    );
    (h, log)
}

/// Runs one call and checks its stages, the listeners' own log, and the code.
async fn path(
    name: &str,
    args: &str,
    code: Option<ErrorCode>,
    stages: &[&str],
    listeners: &[&str],
) {
    let (h, log) = instrumented();
    let out = h.call("c", name, args).await;
    assert_eq!(out.error_code(), code, "{args}: {out:?}");
    assert_eq!(h.stages("c"), stages, "{args}");
    assert_eq!(log.entries(), listeners, "{args}");
    assert_eq!(h.observed("c").len(), 1);
}

#[tokio::test]
async fn success_path() {
    path("t", r#"{"mode": "ok"}"#, None, &COMPLETED, &ALL_LISTENERS).await;
}

#[tokio::test]
async fn unknown_tool_path() {
    path(
        "missing",
        "{}",
        Some(ErrorCode::UnknownTool),
        &UNRESOLVED,
        &["result"],
    )
    .await;
}

#[tokio::test]
async fn malformed_arguments_path() {
    path(
        "t",
        "{oops",
        Some(ErrorCode::InvalidArguments),
        &UNPARSED,
        &POST_AND_RESULT,
    )
    .await;
}

#[tokio::test]
async fn invalid_arguments_path() {
    path(
        "t",
        r#"{"mode": "nope"}"#,
        Some(ErrorCode::InvalidArguments),
        &BEFORE_POLICY,
        &POST_AND_RESULT,
    )
    .await;
}

#[tokio::test]
async fn pre_execute_denial_path() {
    path(
        "t",
        r#"{"mode": "deny"}"#,
        Some(ErrorCode::Denied),
        &PRE_DENIED,
        &["pre", "post", "result"],
    )
    .await;
}

#[tokio::test]
async fn approval_denial_path() {
    path(
        "t",
        r#"{"mode": "ask"}"#,
        Some(ErrorCode::Denied),
        &APPROVAL_DENIED,
        &["pre", "post", "result"],
    )
    .await;
}

#[tokio::test]
async fn guard_denial_path() {
    path(
        "t",
        r#"{"mode": "guard"}"#,
        Some(ErrorCode::Denied),
        &GUARD_DENIED,
        &["pre", "guard", "post", "result"],
    )
    .await;
}

#[tokio::test]
async fn body_error_path() {
    path(
        "t",
        r#"{"mode": "fail"}"#,
        Some(ErrorCode::ExecutionFailed),
        &BODY_FAILED,
        &ALL_LISTENERS,
    )
    .await;
}

#[tokio::test]
async fn body_panic_path() {
    path(
        "t",
        r#"{"mode": "panic"}"#,
        Some(ErrorCode::ExecutionFailed),
        &BODY_FAILED,
        &ALL_LISTENERS,
    )
    .await;
}

#[tokio::test]
async fn timeout_path() {
    path(
        "t",
        r#"{"mode": "timeout"}"#,
        Some(ErrorCode::Timeout),
        &BODY_FAILED,
        &ALL_LISTENERS,
    )
    .await;
}

#[tokio::test]
async fn output_invalid_path() {
    path(
        "t",
        r#"{"mode": "bad-output"}"#,
        Some(ErrorCode::OutputInvalid),
        &COMPLETED,
        &ALL_LISTENERS,
    )
    .await;
}

#[tokio::test]
async fn post_block_path() {
    path(
        "t",
        r#"{"mode": "block"}"#,
        Some(ErrorCode::Denied),
        &COMPLETED,
        &ALL_LISTENERS,
    )
    .await;
}

#[tokio::test]
async fn pre_cancelled_path() {
    let (h, log) = instrumented();
    let out = h
        .call_with("c", "t", r#"{"mode": "ok"}"#, cancelled())
        .await;
    assert_eq!(out.error_code(), Some(ErrorCode::Cancelled));
    assert_eq!(h.stages("c"), BEFORE_POLICY);
    assert_eq!(log.entries(), POST_AND_RESULT);
}

#[tokio::test]
async fn code_mode_direct_call_path() {
    let (h, log) = instrumented();
    let agent = AgentId::new("coder");
    h.registry
        .set_presentation(Some(&agent), Presentation::Code);
    let out = h.call_as("c", "t", r#"{"mode": "ok"}"#, "coder").await;
    assert_eq!(out.error_code(), Some(ErrorCode::UnknownTool));
    assert_eq!(h.stages("c"), UNRESOLVED);
    assert_eq!(log.entries(), ["result"]);
}

#[tokio::test]
async fn panicking_hook_paths() {
    for (hook, stages) in [
        ("pre", &PRE_DENIED[..]),
        ("execute", &BODY_FAILED[..]),
        ("post", &COMPLETED[..]),
    ] {
        let h = Harness::with_tool(echo("echo"));
        let hooks = h.hooks();
        let _d = match hook {
            "pre" => hooks
                .pre_execute()
                .tap("broken", |_e, _n| async move { panic!("broken pre") }),
            "execute" => hooks
                .execute()
                .tap("broken", |_e, _n| async move { panic!("broken execute") }),
            _ => hooks
                .post_execute()
                .tap("broken", |_e, _n| async move { panic!("broken post") }),
        };
        let out = h.call("c", "echo", r#"{"text": "x"}"#).await;
        assert_eq!(out.error_code(), Some(ErrorCode::Internal), "{hook}");
        assert!(
            failure(&out).message().contains("`broken`"),
            "{hook}: {out:?}"
        );
        assert_eq!(h.stages("c"), stages, "{hook}");
    }
}
