//! The session log: round trip, torn last line, damage.

use std::io::Write;
use std::sync::Arc;

use tack_agent::{Event, EventBus, LogReadError, SessionLog, TurnEndReason, read_log};
use tack_core::host::{NewOutcome, NewToolError};
use tack_core::policy::{ApprovalOutcome, ApprovalRequest};
use tack_core::tool::{CallId, ErrorCode, Outcome, Tier, ToolError};

fn events() -> Vec<Event> {
    let failed = Outcome::failure(
        CallId::from("c1"),
        "read_file",
        ToolError::from_code(ErrorCode::InvalidArguments, "expected an object")
            .with_pointer("/path"),
    );
    let ok = Outcome::success(
        CallId::from("c2"),
        "read_file",
        serde_json::json!({"content": "x", "lines": 12, "ratio": 0.5}),
        vec![tack_core::tool::ContentBlock::text("x")],
    );
    vec![
        Event::User {
            text: "读文件 README.md".into(),
        },
        Event::ToolCall {
            call_id: "c1".into(),
            tool: "read_file".into(),
            arguments: "{oops".into(),
            index: 0,
        },
        Event::ApprovalRequest {
            request: ApprovalRequest::new(
                CallId::from("c1"),
                "bash",
                Tier::Executes,
                None,
                serde_json::json!({"command": "ls"}),
                "why",
            ),
        },
        Event::ApprovalOutcome {
            call_id: "c1".into(),
            tool: "bash".into(),
            outcome: ApprovalOutcome::Unavailable {
                reason: Some("no tty".into()),
            },
        },
        Event::ToolResult {
            outcome: Arc::new(failed),
            index: 0,
        },
        Event::ToolResult {
            outcome: Arc::new(ok),
            index: 1,
        },
        Event::ContextDeferred {
            call_id: "c2".into(),
            index: 1,
            context: "ctx".into(),
        },
        Event::Assistant {
            text: "done".into(),
        },
        Event::TurnEnd {
            reason: TurnEndReason::Answered,
            steps: 2,
        },
    ]
}

fn write_all(path: &std::path::Path) {
    let bus = EventBus::new(Some(Arc::new(SessionLog::create(path).unwrap())));
    for event in events() {
        bus.emit(event).unwrap();
    }
}

#[test]
fn every_event_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/s.jsonl");
    write_all(&path);
    let read = read_log(&path).unwrap();
    assert!(read.warnings.is_empty());
    let got: Vec<Event> = read.records.iter().map(|r| r.event.clone()).collect();
    assert_eq!(got, events());
    let seqs: Vec<u64> = read.records.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, (1..=9).collect::<Vec<u64>>());
    // The wire shape of a failed result.
    let line = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .nth(4)
        .unwrap()
        .to_owned();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["type"], "tool/result");
    assert_eq!(v["status"], "error");
    assert_eq!(v["error"]["code"], "INVALID_ARGUMENTS");
    assert_eq!(v["call_id"], "c1");
}

#[test]
fn a_torn_last_line_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_all(&path);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    // The start of record 10, without its line feed: a crash mid-write.
    file.write_all(br#"{"seq":10,"ts":1,"type":"assist"#)
        .unwrap();
    let read = read_log(&path).unwrap();
    assert_eq!(
        read.records.len(),
        9,
        "nothing before the torn line is lost"
    );
    assert_eq!(read.warnings.len(), 1);
    assert!(read.warnings[0].contains("line 10"), "{}", read.warnings[0]);
}

#[test]
fn a_damaged_middle_line_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(
        &path,
        "garbage\n{\"seq\":1,\"ts\":0,\"type\":\"user\",\"text\":\"hi\"}\n",
    )
    .unwrap();
    let err = read_log(&path).unwrap_err();
    let LogReadError::Invalid { breaks, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(breaks[0].line, 1, "{err}");
}

#[test]
fn an_unwritable_log_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let err = SessionLog::create(&file.join("s.jsonl")).unwrap_err();
    assert!(err.to_string().contains("--log FILE"), "{err}");
}

/// A code-mode sub-call is never shown as a `tool/call`: its approval line
/// once read `bash(null)`. The request's own summary is shown instead, and an
/// "always" answer is rendered as such.
#[test]
fn an_approval_renders_its_own_summary_and_always_is_not_once() {
    use tack_agent::{Record, Renderer, Style};
    let mut renderer = Renderer::new(tack_pipeline::ToolRegistry::new(), Style::Plain);
    let rec = |event| Record::new(1, 0, event);
    let request = ApprovalRequest::new(
        CallId::from("run_code#1"),
        "bash",
        Tier::Executes,
        None,
        serde_json::json!({"command": "ls -la"}),
        "commands ask",
    );
    let line = renderer
        .render(&rec(Event::ApprovalRequest { request }))
        .unwrap();
    assert_eq!(line, "[approval] bash: ls -la needs approval: commands ask");
    let line = renderer
        .render(&rec(Event::ApprovalOutcome {
            call_id: "run_code#1".into(),
            tool: "bash".into(),
            outcome: ApprovalOutcome::AllowedAlways,
        }))
        .unwrap();
    assert_eq!(line, "[approval] tool `bash` approved for this session");
}
