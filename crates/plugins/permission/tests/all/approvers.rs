//! The approvers on their own (APR-002, 006, 007 in tack's terms).

use std::io::Cursor;
use std::sync::Arc;

use tack_core::hook::AgentId;
use tack_core::policy::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use tack_core::tool::{CallId, Tier};
use tack_permission::{Answer, ChannelApprover, NoApprover, SessionRules, TerminalApprover};
use tokio_util::sync::CancellationToken;

use crate::harness::SharedBuf;

fn request(id: &str) -> ApprovalRequest {
    ApprovalRequest::new(
        CallId::from(id),
        "bash",
        Tier::Executes,
        Some(AgentId::new("coder")),
        serde_json::json!({"command": "ls -la"}),
        "permission mode `ask` requires approval",
    )
}

fn terminal(input: &str, is_terminal: bool) -> (TerminalApprover, SharedBuf, SessionRules) {
    let out = SharedBuf::default();
    let session = SessionRules::new();
    let approver = TerminalApprover::with_io(
        Cursor::new(input.to_owned()),
        out.clone(),
        is_terminal,
        session.clone(),
    );
    (approver, out, session)
}

#[tokio::test]
async fn terminal_yes_no_always() {
    let (t, out, session) = terminal("y\nn\nalways\nNO\n\n", true);
    let ask = |id: &'static str| t.request(request(id), CancellationToken::new());
    assert_eq!(ask("c1").await, ApprovalOutcome::AllowedOnce);
    assert_eq!(ask("c2").await, ApprovalOutcome::Denied { reason: None });
    assert_eq!(
        ask("c3").await,
        ApprovalOutcome::AllowedAlways,
        "always allows this call, and says it was always"
    );
    assert_eq!(ask("c4").await, ApprovalOutcome::Denied { reason: None });
    assert_eq!(
        ask("c5").await,
        ApprovalOutcome::Denied { reason: None },
        "empty line: no"
    );
    let shown = out.text();
    assert!(
        shown.contains("tool `bash` (executes) asks to run for agent coder — call c1"),
        "{shown}"
    );
    // What is approved is shown: the summary and the arguments.
    assert!(shown.contains("\n  call: bash: ls -la\n"), "{shown}");
    assert!(
        shown.contains("\n  arguments: {\"command\":\"ls -la\"}\n"),
        "{shown}"
    );
    assert!(!shown.contains("null"), "{shown}");
    assert!(
        shown.contains("why: permission mode `ask` requires approval"),
        "{shown}"
    );
    assert!(shown.contains("[a] always for this session"), "{shown}");
    // "always" recorded exactly one session rule, for this tool and agent.
    let rules = session.snapshot();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules.rules()[0].to_string(), "allow bash [agent coder]");
}

#[tokio::test]
async fn terminal_reprompts_then_denies_on_gibberish() {
    let (t, out, _) = terminal("maybe\nperhaps\ny\n", true);
    assert_eq!(
        t.request(request("c"), CancellationToken::new()).await,
        ApprovalOutcome::AllowedOnce
    );
    assert_eq!(out.text().matches("please answer").count(), 2);
    let (t, _, _) = terminal("x\nx\nx\ny\n", true);
    let outcome = t.request(request("c"), CancellationToken::new()).await;
    assert_eq!(
        outcome,
        ApprovalOutcome::Denied {
            reason: Some("no valid answer after 3 attempts".into())
        }
    );
}

#[tokio::test]
async fn terminal_not_a_terminal_is_unavailable_and_reads_nothing() {
    let (t, out, _) = terminal("y\n", false);
    let outcome = t.request(request("c"), CancellationToken::new()).await;
    assert!(
        matches!(&outcome, ApprovalOutcome::Unavailable { reason: Some(r) } if r.contains("not one")),
        "{outcome:?}"
    );
    assert_eq!(out.text(), "", "no prompt was shown");
}

#[tokio::test]
async fn terminal_eof_is_unavailable() {
    let (t, _, _) = terminal("", true);
    let outcome = t.request(request("c"), CancellationToken::new()).await;
    assert!(
        matches!(&outcome, ApprovalOutcome::Unavailable { reason: Some(r) } if r.contains("closed")),
        "{outcome:?}"
    );
}

// APR-006: an already-cancelled request asks nobody.
#[tokio::test]
async fn terminal_cancelled_before_asking_reads_nothing() {
    let (t, out, _) = terminal("y\n", true);
    let cancel = CancellationToken::new();
    cancel.cancel();
    assert_eq!(
        t.request(request("c"), cancel).await,
        ApprovalOutcome::Cancelled
    );
    assert_eq!(out.text(), "");
}

#[tokio::test]
async fn terminal_prompt_strips_control_characters() {
    let (t, out, _) = terminal("n\n", true);
    let mut req = request("c");
    req.reason = "evil \u{1b}[2J reason".into();
    t.request(req, CancellationToken::new()).await;
    assert!(!out.text().contains('\u{1b}'));
}

#[tokio::test]
async fn channel_round_trip_by_call_id() {
    let session = SessionRules::new();
    let (approver, mut inbox) = ChannelApprover::new(session.clone(), 4);
    let ui = tokio::spawn(async move {
        let mut seen = Vec::new();
        for answer in [
            Answer::Once,
            Answer::Deny {
                reason: Some("not now".into()),
            },
            Answer::AlwaysForSession,
        ] {
            let pending = inbox.recv().await.unwrap();
            seen.push(pending.call_id().as_str().to_owned());
            assert_eq!(pending.request().tool, "bash");
            assert_eq!(pending.summary(), "bash: ls -la");
            assert_eq!(pending.request().arguments["command"], "ls -la");
            assert!(pending.respond(answer));
        }
        seen
    });
    assert_eq!(
        approver
            .request(request("a"), CancellationToken::new())
            .await,
        ApprovalOutcome::AllowedOnce
    );
    assert_eq!(
        approver
            .request(request("b"), CancellationToken::new())
            .await,
        ApprovalOutcome::Denied {
            reason: Some("not now".into())
        }
    );
    assert_eq!(
        approver
            .request(request("c"), CancellationToken::new())
            .await,
        ApprovalOutcome::AllowedAlways
    );
    assert_eq!(ui.await.unwrap(), ["a", "b", "c"]);
    assert_eq!(session.snapshot().len(), 1);
}

#[tokio::test]
async fn channel_without_a_ui_is_unavailable() {
    let (approver, inbox) = ChannelApprover::new(SessionRules::new(), 1);
    drop(inbox);
    let outcome = approver
        .request(request("c"), CancellationToken::new())
        .await;
    assert!(
        matches!(outcome, ApprovalOutcome::Unavailable { .. }),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn channel_dropped_reply_is_unavailable() {
    let (approver, mut inbox) = ChannelApprover::new(SessionRules::new(), 1);
    tokio::spawn(async move { drop(inbox.recv().await) });
    let outcome = approver
        .request(request("c"), CancellationToken::new())
        .await;
    assert_eq!(
        outcome,
        ApprovalOutcome::Unavailable {
            reason: Some("the UI dropped the request without answering".into())
        }
    );
}

// APR-006: already cancelled: nobody is asked.
#[tokio::test]
async fn channel_already_cancelled_asks_nobody() {
    let (approver, mut inbox) = ChannelApprover::new(SessionRules::new(), 1);
    let cancel = CancellationToken::new();
    cancel.cancel();
    assert_eq!(
        approver.request(request("c"), cancel).await,
        ApprovalOutcome::Cancelled
    );
    assert!(inbox.try_recv().is_none());
}

// APR-007: cancelled while pending: resolves at once; a late answer is discarded.
#[tokio::test(start_paused = true)]
async fn channel_cancel_while_pending_discards_the_late_answer() {
    let session = SessionRules::new();
    let (approver, mut inbox) = ChannelApprover::new(session.clone(), 1);
    let cancel = CancellationToken::new();
    let asked = {
        let cancel = cancel.clone();
        tokio::spawn(async move { approver.request(request("c"), cancel).await })
    };
    let pending = inbox.recv().await.unwrap();
    cancel.cancel();
    assert_eq!(asked.await.unwrap(), ApprovalOutcome::Cancelled);
    assert!(
        !pending.respond(Answer::AlwaysForSession),
        "the late answer is discarded"
    );
    assert!(session.snapshot().is_empty(), "and records nothing");
}

// APR-002: nobody to ask is `unavailable`.
#[tokio::test]
async fn none_is_unavailable() {
    let outcome = NoApprover
        .request(request("c"), CancellationToken::new())
        .await;
    assert_eq!(
        outcome,
        ApprovalOutcome::Unavailable {
            reason: Some("approvals are turned off (approver `none`)".into())
        }
    );
    let cancel = CancellationToken::new();
    cancel.cancel();
    assert_eq!(
        NoApprover.request(request("c"), cancel).await,
        ApprovalOutcome::Cancelled
    );
    let _: Arc<dyn ApprovalService> = Arc::new(NoApprover);
}
