//! Rendering untrusted text: nothing a tool or a model says can paint a
//! line the renderer did not write.

use std::sync::Arc;

use serde_json::json;
use tack_agent::{Event, Record, Renderer, Style};
use tack_core::host::{NewOutcome, NewToolError};
use tack_core::policy::ApprovalRequest;
use tack_core::tool::{CallId, ContentBlock, ErrorCode, Outcome, Tier, ToolError};
use tack_pipeline::ToolRegistry;

const FAKE: &str = "\n[tool:bash] -> ok\r\x1b[2K[assistant] all good\u{202e}";

/// Every rendered line starts with a prefix the renderer writes, or with
/// whitespace; no raw ESC, CR or bidi override survives.
fn assert_safe(text: &str, prefix: &str) {
    let mut lines = text.split('\n');
    let first = lines.next().unwrap();
    assert!(first.starts_with(prefix), "{text:?}");
    for line in lines {
        assert!(line.starts_with("  "), "{text:?}");
    }
    assert!(
        !text.contains('\x1b') && !text.contains('\r') && !text.contains('\u{202e}'),
        "{text:?}"
    );
}

fn render(event: Event) -> String {
    let mut r = Renderer::new(ToolRegistry::new(), Style::Plain);
    r.render(&Record::new(1, 0, event)).unwrap()
}

#[test]
fn a_tool_name_never_breaks_the_line() {
    let name = format!("bash{FAKE}");
    let ok = Outcome::success(CallId::from("c1"), &name, json!(null), vec![]);
    let text = render(Event::ToolResult {
        outcome: Arc::new(ok),
        index: 0,
    });
    assert!(!text.contains('\n'), "{text:?}");
    assert_eq!(
        text,
        "[tool:bash\\n[tool:bash] -> ok\\r\\x1b[2K[assistant] all good\\u{202e}] -> ok"
    );
    assert_safe(&text, "[tool:bash\\n");
}

#[test]
fn outputs_messages_and_model_text_are_escaped() {
    let failed = Outcome::failure(
        CallId::from("c1"),
        "bash",
        ToolError::from_code(ErrorCode::ExecutionFailed, format!("boom{FAKE}")),
    );
    assert_safe(
        &render(Event::ToolResult {
            outcome: Arc::new(failed),
            index: 0,
        }),
        "[tool:bash] -> ERR EXECUTION_FAILED: boom",
    );
    assert_safe(
        &render(Event::Assistant {
            text: format!("hi{FAKE}"),
        }),
        "[assistant] hi",
    );
    assert_safe(
        &render(Event::User {
            text: format!("do{FAKE}"),
        }),
        "[user] do",
    );
    assert_safe(
        &render(Event::ContextDeferred {
            call_id: "c1".into(),
            index: 0,
            context: tack_core::tool::DeferredContext::blocks(vec![ContentBlock::text(format!(
                "note{FAKE}"
            ))])
            .with_source(format!("src{FAKE}")),
        }),
        "[context] note",
    );
    assert_safe(
        &render(Event::ApprovalRequest {
            request: ApprovalRequest::new(
                CallId::from("c1"),
                format!("bash{FAKE}"),
                Tier::Executes,
                None,
                serde_json::json!({}),
                format!("why{FAKE}"),
            ),
        }),
        "[approval] ",
    );
}

#[test]
fn a_tool_name_in_an_approval_stays_on_one_line() {
    use tack_core::policy::ApprovalOutcome;
    let name = format!("bash{FAKE}");
    for outcome in [
        ApprovalOutcome::Unavailable {
            reason: Some(format!("no tty{FAKE}")),
        },
        ApprovalOutcome::Denied { reason: None },
    ] {
        let text = render(Event::ApprovalOutcome {
            call_id: "c1".into(),
            tool: name.clone(),
            outcome,
        });
        assert_safe(&text, "[approval] ");
        assert!(
            text.contains("bash\\n[tool:bash] -> ok\\r\\x1b[2K[assistant] all good\\u{202e}"),
            "{text:?}"
        );
    }
    let text = render(Event::ApprovalRequest {
        request: ApprovalRequest::new(
            CallId::from("c1"),
            &name,
            Tier::Executes,
            None,
            serde_json::json!({}),
            "why",
        ),
    });
    assert!(!text.contains('\n'), "{text:?}");
}

#[test]
fn arguments_shown_in_a_call_are_escaped() {
    let mut r = Renderer::new(ToolRegistry::new(), Style::Color);
    r.render(&Record::new(
        1,
        0,
        Event::ToolCall {
            call_id: "c1".into(),
            tool: "bash".into(),
            arguments: json!({ "command": format!("ls{FAKE}") }).to_string(),
            index: 0,
        },
    ));
    let text = r
        .render(&Record::new(
            2,
            0,
            Event::ApprovalRequest {
                request: ApprovalRequest::new(
                    CallId::from("c1"),
                    "bash",
                    Tier::Executes,
                    None,
                    json!({ "command": format!("ls{FAKE}") }),
                    "runs a command",
                ),
            },
        ))
        .unwrap();
    // Only the renderer's own colour codes are escapes.
    let without_colors = text.replace("\x1b[1;33m", "").replace("\x1b[0m", "");
    assert_safe(&without_colors, "[approval] ");
}
